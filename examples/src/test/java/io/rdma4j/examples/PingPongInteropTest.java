package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.GidEntry;
import io.rdma4j.verbs.GidType;
import io.rdma4j.verbs.Transport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Java pingpongs against rdma-core's {@code ibv_rc_pingpong}, {@code ibv_ud_pingpong} and
 * {@code ibv_srq_pingpong}, each in both roles, on the test device ({@code RDMA4J_TEST_DEVICE}); the TCP exchange
 * runs over loopback. Both sides run with {@code -c} (the C tool's own check of the received pages), one role of
 * each with {@code -e} (sleeping on completion events); both must exit 0, print the same byte count
 * ({@code size × iters × 2}) and no "invalid data".
 */
@Tag("device")
class PingPongInteropTest {

    private static final int ITERS = 200;
    private static final Pattern BYTES = Pattern.compile("(\\d+) bytes in [0-9.]+ seconds");

    private String device;
    private String gidIndex;
    private int tcpPort;

    @BeforeEach
    void findDevice() throws IOException {
        device = InProcessServer.testDevice();
        InetAddress address = InetAddress.getByName(InProcessServer.testAddress());
        try (Context context = Device.byName(device).orElseThrow(() -> new AssertionError("no " + device)).open()) {
            assumeFalse(context.device().transport() == Transport.IWARP,
                    "the pingpong tools connect QPs by hand (and UD has no iWARP); iWARP connects only through rdma_cm");
            gidIndex = String.valueOf(context.gidTable().stream()
                    .filter(g -> g.type() == GidType.ROCE_V2 && g.asInetAddress().equals(address))
                    .mapToInt(GidEntry::index).findFirst().orElseThrow());
        }
        tcpPort = 18515 + (int) (ProcessHandle.current().pid() % 1000);
    }

    @ParameterizedTest(name = "{0}: Java {1} {2}")
    @CsvSource({"rc, client, -c", "rc, server, -c -e", "ud, client, -c -e", "ud, server, -c", "srq, client, -c",
            "srq, server, -c -e"})
    void theJavaPingPongPlaysTheCTool(String tool, String javaRole, String extra) throws Exception {
        List<String> common = new ArrayList<>(List.of("-d", device, "-g", gidIndex, "-n", "" + ITERS, "-p",
                "" + tcpPort));
        List<String> javaArgs = new ArrayList<>(common);
        javaArgs.addAll(Arrays.asList(extra.split(" ")));
        List<String> c = new ArrayList<>(List.of("ibv_" + tool + "_pingpong"));
        c.addAll(common);
        c.add("-c");
        boolean javaServes = javaRole.equals("server");
        if (!javaServes) {
            javaArgs.add("127.0.0.1");
        }
        ByteArrayOutputStream javaOut = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(javaOut, true, StandardCharsets.UTF_8);
        Process cTool = null;
        try {
            CompletableFuture<Double> java;
            if (javaServes) {
                java = CompletableFuture.supplyAsync(() -> run(tool, javaArgs, out), InProcessServer.OWN_THREAD);
                awaitListening(tcpPort);
                c.add("127.0.0.1");
                cTool = new ProcessBuilder(c).redirectErrorStream(true).start();
            } else {
                cTool = new ProcessBuilder(c).redirectErrorStream(true).start();
                awaitListening(tcpPort);
                java = CompletableFuture.supplyAsync(() -> run(tool, javaArgs, out), InProcessServer.OWN_THREAD);
            }
            assertTrue(java.get(120, TimeUnit.SECONDS) > 0);
            assertTrue(cTool.waitFor(60, TimeUnit.SECONDS), "the C tool finished");
            String cOut = new String(cTool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String jOut = javaOut.toString(StandardCharsets.UTF_8);
            assertEquals(0, cTool.exitValue(), cOut);
            long expected = (long) ITERS * 2 * size(tool);
            assertEquals(expected, bytes(cOut), cOut);
            assertEquals(expected, bytes(jOut), jOut);
            assertTrue(cOut.contains(ITERS + " iters in") && jOut.contains(ITERS + " iters in"), cOut + jOut);
            assertFalse(cOut.contains("invalid data") || jOut.contains("invalid data"), cOut + jOut);
            assertTrue(jOut.contains("  local address:  LID 0x") && jOut.contains("  remote address: LID 0x"), jOut);
        } finally {
            if (cTool != null) {
                cTool.destroyForcibly();
            }
        }
    }

    /**
     * What a user gets wrong first, each a clear message and exit 1 from the jar's entry point: a device that is not
     * there, a GID index the port does not have, a server that refuses or does not answer, and a locked-memory limit
     * below the buffer (run without CAP_IPC_LOCK, which lets root lock any amount).
     */
    @Test
    void aMissingDeviceAWrongGidIndexAnUnreachableServerAndATooLowMemlockLimitAreClearErrors() throws Exception {
        ExampleProcess.Result noDevice = ExampleProcess.run(List.of(), "rc-pingpong", "-d", "nosuch0");
        assertEquals(1, noDevice.exit(), noDevice.all());
        assertTrue(noDevice.err().contains("rc-pingpong failed: IB device nosuch0 not found (devices: [")
                && noDevice.err().contains(device), noDevice.all());
        ExampleProcess.Result noGid = ExampleProcess.run(List.of(), "ud-pingpong", "-d", device, "-g", "200");
        assertEquals(1, noGid.exit(), noGid.all());
        assertTrue(noGid.err().contains("Could not get local gid for gid index 200"), noGid.all());
        ExampleProcess.Result refused = ExampleProcess.run(List.of(), "srq-pingpong", "-d", device, "-g", gidIndex,
                "-p", "" + tcpPort, "127.0.0.1");
        assertEquals(1, refused.exit(), refused.all());
        assertTrue(refused.err().contains("Couldn't connect to 127.0.0.1:" + tcpPort), refused.all());
        // TEST-NET-3: no route leads there from the lab (a host that did not answer would time out in 10 s).
        ExampleProcess.Result silent = ExampleProcess.run(List.of(), "rc-pingpong", "-d", device, "-g", gidIndex,
                "-p", "" + tcpPort, "203.0.113.9");
        assertEquals(1, silent.exit(), silent.all());
        assertTrue(silent.err().contains("Couldn't connect to 203.0.113.9:" + tcpPort), silent.all());
        ExampleProcess.Result memlock = ExampleProcess.run(List.of("bash", "-c",
                "ulimit -l 64 && exec setpriv --bounding-set=-ipc_lock \"$@\"", "--"), "rc-pingpong", "-d", device,
                "-g", gidIndex, "-s", "1048576", "-p", "" + tcpPort);
        assertEquals(1, memlock.exit(), memlock.all());
        assertTrue(memlock.err().contains("errno 12 (Cannot allocate memory)") && memlock.err().contains("ulimit -l")
                && memlock.err().contains("above 1048576 bytes"), memlock.all());
    }

    private static double run(String tool, List<String> args, PrintStream out) {
        String[] a = args.toArray(String[]::new);
        try {
            return switch (tool) {
                case "rc" -> new RcPingPong(PingPongOptions.parse(RcPingPong.TOOL, a)).run(out);
                case "ud" -> new UdPingPong(PingPongOptions.parse(UdPingPong.TOOL, a)).run(out);
                default -> new SrqPingPong(PingPongOptions.parse(SrqPingPong.TOOL, a)).run(out);
            };
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int size(String tool) {
        return Map.of("rc", RcPingPong.TOOL, "ud", UdPingPong.TOOL, "srq", SrqPingPong.TOOL).get(tool).size();
    }

    private static long bytes(String output) {
        Matcher m = BYTES.matcher(output);
        assertTrue(m.find(), output);
        return Long.parseLong(m.group(1));
    }

    /** Waits until something listens on TCP {@code port} (read from /proc: a probe connection would be accepted). */
    private static void awaitListening(int port) throws IOException, InterruptedException {
        String local = String.format(":%04X ", port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
                // Columns: sl local_address rem_address st ...; state 0A is LISTEN.
                if (Files.readAllLines(Path.of(table)).stream().anyMatch(l -> l.contains(local) && l.contains(" 0A "))) {
                    return;
                }
            }
            Thread.sleep(50);
        }
        fail("nothing listens on TCP port " + port);
    }
}
