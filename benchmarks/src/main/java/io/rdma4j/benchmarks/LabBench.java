package io.rdma4j.benchmarks;

import io.rdma4j.benchmarks.PerfOptions.Test;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Java against C in the lab guest, back to back in one boot: perftest's programs against {@link Perf} (two
 * processes each, connected by the connection manager) for SEND/WRITE/READ latency and bandwidth, C's
 * {@code registration.c} against {@link Registration}, and the warm-up curve of a SEND ping-pong; each pair
 * ROUNDS times per device, C and Java alternating which goes first, and after each pair C once more
 * ({@link #C_AGAIN}: the control, two runs of one program). Writes {@code lab.md} and {@code lab.csv}
 * (median of the rounds per side, ratio Java/C, each side's spread, the control's ratio, the target) and every
 * process's output under {@code raw/}. A run that fails or a JVM that crashes is a row marked FAILED or CRASHED
 * and makes the exit code 1; nothing is retried. {@code src/test/lab/rdma-lab perf} runs it.
 *
 * <pre>
 * LabBench --results DIR [--rounds 3] [--devices rxe0=192.0.2.1,siw0=198.51.100.1] [--environment TEXT] [--quick]
 *          [--no-pin] [--only latency|bandwidth|registration] [--case "read_bw 64"[,"send_bw 4096"...]]
 * </pre>
 * {@code --case} keeps only the latency and bandwidth cases of those names (a command and a size, as in {@code raw/}),
 * so that one row can be run in many rounds as the full run runs it.
 */
public final class LabBench {

    /**
     * The side of the control run: perftest once more after each latency and bandwidth pair, registration.c's window
     * once more after each registration pair, so that the report can show beside Java/C what the emulator's drift
     * alone does to a ratio of two runs of one C program.
     */
    static final String C_AGAIN = "C again";
    /** Latency tests run this many unmeasured iterations first on the Java side (see the report). */
    static final int LATENCY_WARMUP = 20_000;
    /**
     * Bandwidth tests post this many unmeasured requests (of at most 4 KiB) first on the Java side: the sender's loop
     * ({@code Perf.keepInFlight}) reached C2 after about 95,000 of them (its JIT log in the lab: tier 3 after about
     * 55,000 passes of its loop, C2 after about 40,000 more), so with 50,000 it ran its measured part at tier 3 and
     * then C2 compiled it on the loop's CPU (SEND 64 B on rxe0: 0.86-0.96x C against 0.94-0.98x with 150,000).
     */
    static final int BANDWIDTH_WARMUP = 200_000;
    /** Registrations and queue pairs that Registration and registration.c make unmeasured first (see the report). */
    static final int REGISTRATION_WARMUP = 10_000;
    /** Seconds each registration loop runs unmeasured first, and then each window it is counted. */
    static final double REGISTRATION_SECONDS = 1.5;
    /** Windows of each registration loop per round and side. */
    static final int REGISTRATION_WINDOWS = 4;
    /** The loops of registration.c and Registration, as they are named to them. */
    static final List<String> REGISTRATION_LOOPS = List.of("register 4096", "register 65536", "register 1048576",
            "register 67108864", "queue-pair 0");
    /** {@code -r} of the SEND bandwidth cases (see {@link #pair}). */
    static final int SEND_BW_RECEIVE_DEPTH = 8192;
    private static final int WARMUP_CURVE_ITERATIONS = 30_000;

    /**
     * What a run can be limited to with {@code --only}: the latency tests (and the warm-up curve), the bandwidth tests,
     * or the registration and queue-pair rates.
     */
    enum Part {
        LATENCY, BANDWIDTH, REGISTRATION;

        static Part named(String name) {
            for (Part p : values()) {
                if (p.name().toLowerCase(Locale.ROOT).equals(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("--only takes latency, bandwidth or registration, not " + name);
        }
    }

    /** One comparison: a test, its size and iterations. */
    record Case(Test test, int size, int iterations) {
        String name() {
            return test.command() + " " + size;
        }
    }

    /**
     * One measured value of one side (C, Java or {@link #C_AGAIN}); {@code pair} names the back-to-back runs it belongs
     * to (its round, or its round and registration window), whose ratios LabReport takes.
     */
    record Sample(String device, String what, String metric, String unit, boolean higherIsBetter, double target,
                  String pair, String side, double value) {
    }

    private final Path results;
    private final int rounds;
    private final Map<String, String> devices;
    private final String environment;
    private final boolean quick;
    private final boolean pin;
    /** The parts to run: all, or the one named by {@code --only}. */
    private final Set<Part> parts;
    /** The latency and bandwidth cases to run. */
    private final List<Case> cases;
    private final Path cyclesLibrary;
    private final Path registrationProgram;
    private final List<Sample> samples = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private final Map<String, List<Double>> curves = new LinkedHashMap<>();
    private int port = 19000;

    private LabBench(Path results, int rounds, Map<String, String> devices, String environment, boolean quick,
                     boolean pin, Set<Part> parts, Set<String> only) throws IOException, InterruptedException {
        this.results = results;
        this.rounds = rounds;
        this.devices = devices;
        this.environment = environment;
        this.quick = quick;
        this.pin = pin;
        this.parts = parts;
        this.cases = cases(parts, quick, only);
        Path natives = results.resolve("native");
        this.cyclesLibrary = Cycles.build(natives);
        this.registrationProgram = natives.resolve("registration");
        CBuild.gcc("-O2", "-Wall", "-o", registrationProgram.toString(),
                CBuild.source(natives, "registration.c").toString(), "-libverbs");
        Files.createDirectories(results.resolve("raw"));
    }

    /** Runs everything; exit 1 if anything failed. */
    public static void main(String[] args) throws Exception {
        Path results = null;
        int rounds = 3;
        Map<String, String> devices = new LinkedHashMap<>(Map.of("rxe0", "192.0.2.1"));
        devices.put("siw0", "198.51.100.1");
        String environment = "";
        boolean quick = false;
        boolean pin = true;
        Set<Part> parts = EnumSet.allOf(Part.class);
        Set<String> only = Set.of();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--results" -> results = Path.of(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--environment" -> environment = args[++i];
                case "--quick" -> quick = true;
                case "--no-pin" -> pin = false;
                case "--only" -> parts = EnumSet.of(Part.named(args[++i]));
                case "--case" -> only = Set.of(args[++i].split(","));
                case "--devices" -> {
                    devices.clear();
                    for (String d : args[++i].split(",")) {
                        String[] kv = d.split("=", 2);
                        devices.put(kv[0], kv[1]);
                    }
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (results == null) {
            throw new IllegalArgumentException("--results DIR is required");
        }
        String pinning = pin ? "; server on CPU 0, client on CPU 1 (taskset)" : "; not pinned";
        LabBench bench = new LabBench(results, rounds, devices, environment + pinning, quick, pin,
                parts, only);
        bench.run();
        System.exit(bench.failures.isEmpty() ? 0 : 1);
    }

    /**
     * The cases of {@code parts}, all of them or those named in {@code only} ({@code --case}; a name that is not a case
     * of {@code parts} is an error): perftest's latency tests at 8 B, 64 B, 4 KiB; its bandwidth tests at 64 B to 1 MiB.
     */
    static List<Case> cases(Set<Part> parts, boolean quick, Set<String> only) {
        List<Case> cases = new ArrayList<>();
        if (parts.contains(Part.LATENCY)) {
            for (Test t : List.of(Test.SEND_LAT, Test.WRITE_LAT, Test.READ_LAT)) {
                for (int size : quick ? new int[] {64} : new int[] {8, 64, 4096}) {
                    cases.add(new Case(t, size, quick ? 1000 : 10_000));
                }
            }
        }
        if (parts.contains(Part.BANDWIDTH)) {
            for (Test t : List.of(Test.WRITE_BW, Test.SEND_BW, Test.READ_BW)) {
                for (int size : quick ? new int[] {4096} : new int[] {64, 4096, 65536, 1 << 20}) {
                    int iterations = size <= 64 ? 20_000 : size <= 4096 ? 5000 : size <= 65536 ? 1000 : 100;
                    cases.add(new Case(t, size, quick ? iterations / 10 : iterations));
                }
            }
        }
        Set<String> unknown = new TreeSet<>(only);
        cases.forEach(c -> unknown.remove(c.name()));
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("--case: no case " + unknown + " among "
                    + cases.stream().map(Case::name).toList());
        }
        return only.isEmpty() ? cases : cases.stream().filter(c -> only.contains(c.name())).toList();
    }

    private void run() throws IOException, InterruptedException {
        for (int round = 1; round <= rounds; round++) {
            List<String> order = round % 2 == 1 ? List.of("C", "Java", C_AGAIN) : List.of("Java", "C", C_AGAIN);
            for (Map.Entry<String, String> device : devices.entrySet()) {
                String dev = device.getKey();
                log("round " + round + "/" + rounds + " on " + dev + " (" + order.getFirst() + " first)");
                if (parts.contains(Part.REGISTRATION)) {
                    registration(round, dev);
                }
                for (Case c : cases) {
                    for (String side : order) {
                        pair(round, dev, device.getValue(), c, side);
                    }
                }
                if (round == 1 && parts.contains(Part.LATENCY)) {
                    for (String side : List.of("C", "Java")) {
                        warmupCurve(dev, device.getValue(), side);
                    }
                }
                writeReport();
            }
        }
        writeReport();
    }

    /**
     * Holds registration.c, Registration and a second registration.c (the control, {@link #C_AGAIN}) open together,
     * all on CPU 0, and counts each loop in windows, C's and Java's alternating (which goes first alternates too), the
     * control's after them: only one of them runs at a time, and all see the emulator at the speed of the moment.
     */
    private void registration(int round, String device) throws IOException, InterruptedException {
        List<String> args = quick ? List.of(device, "0.5", "500")
                : List.of(device, Double.toString(REGISTRATION_SECONDS), Integer.toString(REGISTRATION_WARMUP));
        List<String> cCommand = pinned(0, Stream.concat(Stream.of(registrationProgram.toString()), args.stream())
                .toList());
        String label = round + "-" + device + "-registration-";
        Path raw = results.resolve("raw");
        try (LoopProgram c = LoopProgram.start(cCommand, raw.resolve(label + "C.txt"));
             LoopProgram java = LoopProgram.start(pinned(0, java("io.rdma4j.benchmarks.Registration", args)),
                     raw.resolve(label + "Java.txt"));
             LoopProgram cAgain = LoopProgram.start(cCommand, raw.resolve(label + "C-again.txt"))) {
            Map<LoopProgram, String> sides = Map.of(c, "C", java, "Java", cAgain, C_AGAIN);
            for (LoopProgram side : sides.keySet()) {
                side.awaitReady(900);
            }
            int window = 0;
            String register = "register ";
            for (String loop : REGISTRATION_LOOPS) {
                String what = loop.startsWith(register)
                        ? "registerMemory + close " + size(Long.parseLong(loop.substring(register.length())))
                        : "queue pair create + close";
                for (int w = 0; w < (quick ? 1 : REGISTRATION_WINDOWS); w++, window++) {
                    boolean cFirst = (window + round) % 2 == 1;
                    for (LoopProgram side : cFirst ? List.of(c, java, cAgain) : List.of(java, c, cAgain)) {
                        samples.add(new Sample(device, what, "rate", "ops/s", true, 0.9,
                                "round " + round + " window " + w, sides.get(side), side.rate(loop, 120)));
                    }
                }
            }
            for (LoopProgram side : sides.keySet()) {
                side.finish(60);
            }
        } catch (IOException failed) {
            failures.add(label + "C/Java/" + C_AGAIN + ": " + failed.getMessage());
        }
    }

    /** Runs one case's server and client of one side and records the client's row. */
    private void pair(int round, String device, String address, Case c, String side)
            throws IOException, InterruptedException {
        List<String> options = new ArrayList<>(List.of("-s", Integer.toString(c.size()), "-n",
                Integer.toString(c.iterations())));
        if (c.test().reads()) {
            options.addAll(List.of("-o", "16"));
        }
        if (c.test() == Test.SEND_BW) {
            // iWARP has no RNR retry: a SEND that finds no receive posted ends the connection, so the receiver's
            // lead must outlast its stalls (JIT, GC, emulator). 8,192 fits rxe's and siw's queues and perftest's -r.
            options.addAll(List.of("-r", Integer.toString(SEND_BW_RECEIVE_DEPTH)));
        }
        String label = (round + "-" + device + "-" + c.name() + "-" + side).replace(' ', '-');
        int warmup = !side.equals("Java") ? 0 : c.test().latency() ? LATENCY_WARMUP
                : quick ? c.iterations() : BANDWIDTH_WARMUP;
        PerftestOutput out = runPair(device, address, c.test(), options, side, label, warmup);
        if (out == null) {
            return;
        }
        String what = c.test().perftest() + " " + size(c.size());
        if (c.test().latency()) {
            record(device, what, "median", "µs", false, 1.05, round, side, out, "t_typical[usec]");
            record(device, what, "p99", "µs", false, 1.10, round, side, out, "99% percentile[usec]");
            record(device, what, "p99.9", "µs", false, Double.NaN, round, side, out, "99.9% percentile[usec]");
        } else {
            record(device, what, "bandwidth", "MB/s", true, 0.98, round, side, out, "BW average[MB/sec]");
            record(device, what, "message rate", "Mpps", true, 0.98, round, side, out, "MsgRate[Mpps]");
        }
    }

    /** A 64-byte SEND ping-pong from its first iteration, every iteration's latency kept. */
    private void warmupCurve(String device, String address, String side) throws IOException, InterruptedException {
        List<String> options = List.of("-s", "64", "-n", Integer.toString(quick ? 3000 : WARMUP_CURVE_ITERATIONS),
                "-U");
        PerftestOutput out = runPair(device, address, Test.SEND_LAT, options, side, "1-" + device + "-warmup-" + side,
                0);
        if (out != null) {
            curves.put(device + " " + side, out.unsorted());
        }
    }

    /**
     * Starts the server on a port of its own, waits until it listens, runs the client; returns the client's output
     * or null.
     */
    private PerftestOutput runPair(String device, String address, Test test, List<String> testOptions, String side,
                                   String label, int warmup) throws IOException, InterruptedException {
        int listenPort = ++port;
        List<String> options = new ArrayList<>(testOptions);
        options.addAll(List.of("-p", Integer.toString(listenPort)));
        List<String> server = pinned(0, command(test, device, options, side, null, warmup));
        List<String> client = pinned(1, command(test, device, options, side, address, warmup));
        Running serverRun = start(server, label + "-server");
        try {
            if (!awaitListening(listenPort, serverRun)) {
                Finished s = serverRun.await(5);
                failures.add(label + ": the server did not listen within 120 s: " + s.reason());
                return null;
            }
            Finished c = start(client, label + "-client").await(900);
            Finished s = serverRun.await(c.ok() ? 60 : 5);
            if (!c.ok() || !s.ok()) {
                failures.add(label + ": " + (c.ok() ? "server " + s.reason() : "client " + c.reason()));
                return null;
            }
            try {
                return PerftestOutput.parse(c.output());
            } catch (IllegalArgumentException e) {
                failures.add(label + ": " + e.getMessage());
                return null;
            }
        } finally {
            serverRun.process.destroyForcibly();
        }
    }

    private List<String> command(Test test, String device, List<String> options, String side, String address,
                                 int warmup) {
        List<String> args = new ArrayList<>();
        boolean perftest = !side.equals("Java");
        if (perftest) {
            // -F: no CPU-frequency warning (the guest has no cpufreq); -R: the connection manager, as Perf.
            args.addAll(List.of(test.perftest(), "-d", device, "-R", "-F"));
            args.addAll(options);
        } else {
            args.add(test.command());
            args.addAll(options);
            if (warmup > 0) {
                args.addAll(List.of("-w", Integer.toString(warmup)));
            }
        }
        if (address != null) {
            args.add(address);
        }
        return perftest ? args : java("io.rdma4j.benchmarks.Perf", args);
    }

    /**
     * {@code command} bound to one CPU ({@code taskset}), unless {@code --no-pin}: C and Java alike, the server on
     * CPU 0 and the client on CPU 1, as perftest runs usually are. Under multi-threaded TCG this also keeps a JVM's
     * JIT writing code and its threads running that code on one vCPU: unpinned JVMs died of SIGILL in freshly
     * compiled code (QEMU's handling of code modified on another vCPU), in the JDK's own classes as well.
     */
    private List<String> pinned(int cpu, List<String> command) {
        if (!pin) {
            return command;
        }
        List<String> pinned = new ArrayList<>(List.of("taskset", "-c", Integer.toString(cpu)));
        pinned.addAll(command);
        return pinned;
    }

    /** This JVM's java, class path and native access, with a crash report file per process under raw/. */
    private List<String> java(String mainClass, List<String> args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "--enable-native-access=ALL-UNNAMED", "-D" + Cycles.LIBRARY_PROPERTY + "=" + cyclesLibrary,
                "-XX:ErrorFile=" + results.resolve("raw").resolve("hs_err_%p.log"), "-cp",
                System.getProperty("java.class.path"), mainClass));
        command.addAll(args);
        return command;
    }

    /** Whether a connection-manager id listens on {@code port} ({@code rdma resource show cm_id}). */
    private static boolean awaitListening(int port, Running server) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            if (!server.process.isAlive()) {
                return false;
            }
            Process p = new ProcessBuilder("rdma", "resource", "show", "cm_id").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            for (String line : out.split("\\R")) {
                if (line.contains("LISTEN") && line.contains(":" + port + " ")) {
                    return true;
                }
            }
            Thread.sleep(200);
        }
        return false;
    }

    private record Running(Process process, Path output) {
        Finished await(long seconds) throws IOException, InterruptedException {
            boolean ended = process.waitFor(seconds, TimeUnit.SECONDS);
            if (!ended) {
                process.destroyForcibly().waitFor();
            }
            String text = Files.readString(output);
            if (!ended) {
                return new Finished(false, text, "did not finish within " + seconds + " s (" + output + ")");
            }
            int rc = process.exitValue();
            boolean crashed = crashed(text);
            return new Finished(rc == 0 && !crashed, text, crashed ? "THE JVM CRASHED (" + output + ")"
                    : "exit " + rc + " (" + output + ")");
        }
    }

    private record Finished(boolean ok, String output, String reason) {
    }

    /** Whether a process's output holds the JVM's crash banner (its hs_err report follows it). */
    static boolean crashed(String output) {
        return output.contains("A fatal error has been detected by the Java Runtime Environment");
    }

    private Running start(List<String> command, String label) throws IOException {
        Path output = results.resolve("raw").resolve(label + ".txt");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        return new Running(p, output);
    }

    /** Records one column of a client's result row; a missing or impossible value is a failure, not a sample. */
    private void record(String device, String what, String metric, String unit, boolean higherIsBetter,
                        double target, int round, String side, PerftestOutput out, String column) {
        String run = "round " + round + " " + device + " " + what + " " + side;
        try {
            out.measurement(column).ifPresentOrElse(
                    v -> samples.add(new Sample(device, what, metric, unit, higherIsBetter, target, "round " + round,
                            side, v)),
                    () -> failures.add(run + ": no column " + column));
        } catch (IllegalArgumentException e) {
            failures.add(run + ": " + e.getMessage() + " (its output is under raw/)");
        }
    }

    private void writeReport() throws IOException {
        LabReport report = new LabReport(samples, curves, failures, environment, rounds);
        Files.writeString(results.resolve("lab.md"), report.markdown(LocalDate.now()));
        Files.writeString(results.resolve("lab.csv"), report.csv(LocalDate.now()));
    }

    private static String size(long bytes) {
        return bytes >= 1 << 20 ? (bytes >> 20) + " MiB" : bytes >= 1024 ? (bytes >> 10) + " KiB" : bytes + " B";
    }

    private static void log(String line) {
        System.out.println("lab-bench: " + line);
        System.out.flush();
    }
}
