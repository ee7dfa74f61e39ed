package io.rdma4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lab benchmark's smoke run in the device suite: each of Perf's six tests, server and client in this JVM,
 * a few hundred iterations (with a warm-up) on the device of {@code RDMA4J_TEST_DEVICE} at
 * {@code RDMA4J_TEST_ADDRESS}, each side's report read back as LabBench reads it, a passive server's failure when
 * its client leaves without the goodbye, and a short run of Registration.
 * (The comparison with perftest and registration.c is {@code rdma-lab perf}.)
 */
@Tag("device")
class PerfDeviceTest {

    private static final String ADDRESS = System.getenv("RDMA4J_TEST_ADDRESS");
    private static int port = 19500;
    /** A line of Registration's (and registration.c's) output. */
    private static final Pattern RATE = Pattern.compile("^(register|queue-pair) (\\d+) ([0-9.]+)$", Pattern.MULTILINE);

    @ParameterizedTest
    @EnumSource(PerfOptions.Test.class)
    void eachTestRunsToItsEndAndReportsAsPerftestDoes(PerfOptions.Test test) throws Exception {
        assertTrue(ADDRESS != null && System.getenv("RDMA4J_TEST_DEVICE") != null,
                "RDMA4J_TEST_DEVICE and RDMA4J_TEST_ADDRESS name the device under test (src/test/lab/rdma-lab test)");
        String name = test.command();
        // All receives are posted before the first SEND (-r above -n + -w): iWARP has no receiver-not-ready retry, and
        // a sender that outruns the receiver's reposting ends the connection (perftest's send_bw alike).
        // Bandwidth tests above 4 KiB warm up with requests of their own, 4 KiB each (Perf.WARMUP_SIZE).
        List<String> options = new ArrayList<>(List.of(name, "-s", test.latency() ? "64" : "8192", "-n", "300", "-w",
                "50", "-r", "512", "-p", Integer.toString(++port)));
        if (!test.latency()) {
            options.addAll(List.of("-t", "16", "-Q", "4"));
        } else {
            options.add("-U");
        }
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
            Future<?> server = threads.submit(() -> {
                Perf.run(PerfOptions.parse(options.toArray(String[]::new)), print(serverOut));
                return null;
            });
            ByteArrayOutputStream clientOut = new ByteArrayOutputStream();
            PerfOptions clientOptions = clientOf(options);
            // A client that failed after it began to print did connect: that failure is the test's, not a refusal.
            Future<?> client = threads.submit(() -> {
                whenTheServerListens(() -> Perf.run(clientOptions, print(clientOut)),
                        () -> !clientOut.toString(StandardCharsets.UTF_8).isEmpty());
                return null;
            });
            Exception clientFailure = null;
            try {
                client.get(5, TimeUnit.MINUTES);
            } catch (ExecutionException | TimeoutException e) {
                clientFailure = e;
            }
            // A failed client leaves the server to notice (its connection ends, or 30 s without progress): its
            // objects must be gone before the next test, and the suite's leftover check, run.
            try {
                server.get(2, TimeUnit.MINUTES);
            } catch (ExecutionException | TimeoutException e) {
                if (clientFailure == null) {
                    throw e;
                }
                clientFailure.addSuppressed(e);
            }
            if (clientFailure != null) {
                throw new AssertionError("the client failed", clientFailure);
            }
            PerftestOutput row = PerftestOutput.parse(clientOut.toString(StandardCharsets.UTF_8));
            assertEquals(300, row.value("#iterations").orElseThrow(), "the measured iterations, without the warm-up");
            String column = test.latency() ? "t_typical[usec]" : "BW average[MB/sec]";
            double value = row.value(column).orElseThrow();
            assertTrue(value > 0 && Double.isFinite(value), column + " = " + value);
            if (test.latency()) {
                double median = row.value("t_typical[usec]").orElseThrow();
                assertTrue(row.value("99% percentile[usec]").orElseThrow() >= median, "p99 below the median");
                // Each side waits for its JIT, half a second at least, between warm-up and run, in an iteration its
                // report leaves out: none of the measured iterations (-U, all of them; a ping-pong's are half round
                // trips) may hold it. (Both sides run in this JVM, so their waits end together: a wait in the peer's
                // measured run would not show here.)
                List<PerftestOutput> sides = new ArrayList<>(List.of(row));
                if (!test.passiveServer()) {
                    sides.add(PerftestOutput.parse(serverOut.toString(StandardCharsets.UTF_8)));
                }
                for (PerftestOutput side : sides) {
                    assertEquals(299, side.unsorted().size(), "-U: the latencies between the measured posts");
                    double max = side.unsorted().stream().mapToDouble(Double::doubleValue).max().orElseThrow();
                    assertTrue(max < 250_000, "an iteration of " + max + " us: a wait for the JIT in the measured run");
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * A passive server spins until the client's goodbye (as perftest's); a client that connects, exchanges hellos and
     * leaves without it (a client that failed) must end the server with a clear failure, not leave it spinning.
     */
    @Test
    void aPassiveServerWhoseClientLeavesWithoutItsGoodbyeFails() throws Exception {
        assertTrue(ADDRESS != null, "RDMA4J_TEST_ADDRESS names the device under test (src/test/lab/rdma-lab test)");
        List<String> options = List.of("read_bw", "-s", "4096", "-n", "100", "-p", Integer.toString(++port));
        ExecutorService threads = Executors.newSingleThreadExecutor();
        try {
            Future<?> server = threads.submit(() -> {
                Perf.run(PerfOptions.parse(options.toArray(String[]::new)), print(new ByteArrayOutputStream()));
                return null;
            });
            PerfOptions client = clientOf(options);
            whenTheServerListens(() -> PerfEndpoint.open(client).close(), () -> false);
            ExecutionException e = assertThrows(ExecutionException.class, () -> server.get(2, TimeUnit.MINUTES));
            // rxe: the server sees the disconnect; siw: the end of the TCP connection also flushes the goodbye's receive.
            assertTrue(e.getCause().getMessage().startsWith("the client disconnected without its goodbye"),
                    e.getCause().toString());
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void registrationPrintsARateForEachLoopItIsSent() throws Exception {
        String device = System.getenv("RDMA4J_TEST_DEVICE");
        assertTrue(device != null, "RDMA4J_TEST_DEVICE names the device under test (src/test/lab/rdma-lab test)");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Registration.run(device, 0.05, 20, new BufferedReader(new StringReader(String.join("\n",
                LabBench.REGISTRATION_LOOPS))), print(out));
        String text = out.toString(StandardCharsets.UTF_8);
        Matcher m = RATE.matcher(text);
        List<String> loops = new ArrayList<>();
        while (m.find()) {
            loops.add(m.group(1) + " " + m.group(2));
            assertTrue(Double.parseDouble(m.group(3)) > 0, m.group());
        }
        assertTrue(text.startsWith("ready\n"), text);
        assertEquals(LabBench.REGISTRATION_LOOPS, loops, text);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Registration.run(device, 0.05,
                20, new BufferedReader(new StringReader("register 0")), print(new ByteArrayOutputStream())));
        assertTrue(e.getMessage().startsWith("no loop \"register 0\""), e.getMessage());
    }

    /** The client's options: the server's, then the server's address. */
    private static PerfOptions clientOf(List<String> serverOptions) {
        List<String> args = new ArrayList<>(serverOptions);
        args.add(ADDRESS);
        return PerfOptions.parse(args.toArray(String[]::new));
    }

    /** A connection attempt of the client's. */
    private interface Attempt {
        void run() throws Exception;
    }

    /**
     * Runs the client's attempt until it succeeds: the server (another thread) listens within moments, and the connect
     * is refused until then. Gives up after 20 tries 500 ms apart, or at once when {@code connected} says the failure
     * came after the connection was made.
     */
    private static void whenTheServerListens(Attempt attempt, BooleanSupplier connected) throws Exception {
        for (int tries = 1; ; tries++) {
            try {
                attempt.run();
                return;
            } catch (RuntimeException e) {
                if (tries > 20 || connected.getAsBoolean()) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    private static PrintStream print(ByteArrayOutputStream bytes) {
        return new PrintStream(bytes, true, StandardCharsets.UTF_8);
    }
}
