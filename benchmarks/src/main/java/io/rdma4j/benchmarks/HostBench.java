package io.rdma4j.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Java against C on the host, through the stub provider ({@link StubProvider}): the C loops and
 * {@link HostDataPathBenchmark} (plain and {@code critical(false)} handles), {@code ROUNDS} rounds of a C run and
 * a JMH fork of each, printed as a table of medians with their spread and the allocation per operation.
 *
 * <pre>HostBench [--smoke] [--rounds N] [--results DIR]</pre>
 * The full run writes {@code DIR/DATE-host.md} and {@code .csv}; {@code --smoke} is the short run of
 * {@code ./mvnw verify} (one round, short iterations, nothing written).
 */
public final class HostBench {

    /** One case: C and Java (plain, critical) in ns/op over the rounds, and Java's bytes allocated per op. */
    record Row(String name, Spread c, Spread plain, Spread critical, double plainBytes, double criticalBytes) {

        String markdown() {
            return String.format(Locale.ROOT, "| %s | %s | %s | %s | %+.1f / %+.1f | %.2f / %.2f |", name, c, plain,
                    critical, plain.median - c.median, critical.median - c.median, plainBytes, criticalBytes);
        }

        String csv() {
            return String.format(Locale.ROOT, "%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f", name,
                    c.median, c.min, c.max, plain.median, plain.min, plain.max, critical.median, critical.min,
                    critical.max, plainBytes, criticalBytes);
        }
    }

    /** A median and the range of the rounds around it. */
    record Spread(double median, double min, double max) {

        static Spread of(List<Double> values) {
            double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            return new Spread(v[v.length / 2], v[0], v[v.length - 1]);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%.1f (%.1f–%.1f)", median, min, max);
        }
    }

    /** The data path's cases, which must allocate nothing. */
    static final List<String> DATA_PATH = List.of("postOne", "postChainOf16", "postAndPoll16", "refillAndPost16",
            "postOneConfined", "postChainOf16Confined", "postAndPoll16Confined", "refillAndPost16Confined");
    /** What marks a case that runs a C loop of another name: C has no confined variant of its own. */
    private static final String CONFINED = "Confined";
    /** Every case: the data path's, then the control path's. */
    static final List<String> CASES = Stream.concat(DATA_PATH.stream(),
            Stream.of("registerAndClose4K", "allocateAndClose4K", "createAndCloseQueuePair")).toList();

    private HostBench() {
    }

    /** Runs the comparison; see the class comment for the arguments. */
    public static void main(String[] args) throws Exception {
        boolean smoke = false;
        int rounds = 3;
        Path results = Path.of("benchmarks", "results");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--smoke" -> smoke = true;
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--results" -> results = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (HostBench [--smoke] [--rounds N] [--results DIR])");
            }
        }
        List<Row> rows = run(Path.of("target", "stub"), smoke ? 1 : rounds, smoke);
        String table = table(rows);
        System.out.println(table);
        if (!smoke) {
            String stem = LocalDate.now() + "-host";
            Files.createDirectories(results);
            Files.writeString(results.resolve(stem + ".md"), "# Host per-operation cost, Java vs C (stub provider)\n\n"
                    + environment() + "\n\nCommand: `benchmarks/host-bench` (" + rounds + " rounds)\n\n" + table + "\n",
                    StandardCharsets.UTF_8);
            StringBuilder csv = new StringBuilder("case,c_ns,c_min,c_max,java_ns,java_min,java_max,critical_ns,"
                    + "critical_min,critical_max,java_bytes_per_op,critical_bytes_per_op\n");
            rows.forEach(r -> csv.append(r.csv()).append('\n'));
            Files.writeString(results.resolve(stem + ".csv"), csv, StandardCharsets.UTF_8);
            System.out.println("written: " + results.resolve(stem + ".md") + " and .csv");
        }
    }

    /**
     * Builds the stub into {@code folder}, then measures C and Java {@code rounds} times each, a round of each in
     * turn: this machine's speed drifts over minutes (C's postOne 3.4 ns one day, 6.0 the next), and interleaved
     * rounds share the drift.
     */
    static List<Row> run(Path folder, int rounds, boolean smoke) throws IOException, InterruptedException,
            RunnerException {
        StubProvider.build(folder);
        Map<String, List<Double>> c = new LinkedHashMap<>();
        Map<String, List<BenchmarkResult>> plain = new LinkedHashMap<>();
        Map<String, List<BenchmarkResult>> critical = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            StubProvider.runLoops(folder, smoke ? 200_000 : 4_000_000, 5).lines()
                    .map(l -> l.split(" ")).filter(f -> f.length == 3 && f[0].equals("c"))
                    .forEach(f -> c.computeIfAbsent(f[1], k -> new ArrayList<>()).add(Double.parseDouble(f[2])));
            java(folder, "false", smoke).forEach((name, r) -> plain.computeIfAbsent(name, k -> new ArrayList<>()).add(r));
            java(folder, "true", smoke).forEach((name, r) -> critical.computeIfAbsent(name, k -> new ArrayList<>()).add(r));
        }
        List<Row> rows = new ArrayList<>();
        for (String name : CASES) {
            rows.add(new Row(name, Spread.of(c.get(name.replace(CONFINED, ""))), scores(plain.get(name)), scores(critical.get(name)),
                    bytesPerOp(plain.get(name)), bytesPerOp(critical.get(name))));
        }
        return rows;
    }

    static String table(List<Row> rows) {
        StringBuilder t = new StringBuilder("| case | C ns/op | rdma4j ns/op | rdma4j critical(false) ns/op "
                + "| Java − C (plain / critical) | B/op (plain / critical) |\n| --- | --- | --- | --- | --- | --- |\n");
        rows.forEach(r -> t.append(r.markdown()).append('\n'));
        return t.toString();
    }

    /** One JMH fork of every case with {@code critical} handles or not: the result of each case. */
    private static Map<String, BenchmarkResult> java(Path folder, String critical, boolean smoke)
            throws RunnerException {
        Options options = new OptionsBuilder().include(HostDataPathBenchmark.class.getName() + "\\.")
                .param("critical", critical).forks(1).addProfiler(GCProfiler.class)
                .warmupIterations(smoke ? 2 : 5).warmupTime(TimeValue.milliseconds(smoke ? 300 : 1000))
                .measurementIterations(smoke ? 2 : 5).measurementTime(TimeValue.milliseconds(smoke ? 300 : 1000))
                .jvmArgsAppend("-D" + StubProvider.FOLDER_PROPERTY + "=" + folder.toAbsolutePath())
                .shouldFailOnError(true).build();
        Map<String, BenchmarkResult> byCase = new LinkedHashMap<>();
        for (RunResult result : new Runner(options).run()) {
            String label = result.getParams().getBenchmark();
            byCase.put(label.substring(label.lastIndexOf('.') + 1), result.getAggregatedResult());
        }
        return byCase;
    }

    private static Spread scores(List<BenchmarkResult> forks) {
        return Spread.of(forks.stream().map(f -> f.getPrimaryResult().getScore()).toList());
    }

    private static double bytesPerOp(List<BenchmarkResult> forks) {
        return forks.stream().mapToDouble(f -> {
            Result<?> norm = f.getSecondaryResults().get("gc.alloc.rate.norm");
            return norm == null ? Double.NaN : norm.getScore();
        }).max().orElse(Double.NaN);
    }

    private static String environment() throws IOException {
        String cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                .findFirst().map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("?");
        return "Environment: " + cpu + ", " + Runtime.getRuntime().availableProcessors() + " CPUs, Linux "
                + System.getProperty("os.version") + ", JDK " + Runtime.version() + ", C built with gcc -O2";
    }
}
