package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Java ping-pong against rdma-core's {@code ibv_rc_pingpong}, in both roles, on the test device
 * ({@code RDMA4J_TEST_DEVICE}); the TCP exchange runs over loopback.
 */
@Tag("device")
class PingPongInteropTest {

    private static final int ITERS = 200;

    private String device;
    private String gidIndex;
    private int tcpPort;

    @BeforeEach
    void findDevice() throws IOException {
        device = System.getenv("RDMA4J_TEST_DEVICE");
        if (device == null) {
            fail("RDMA4J_TEST_DEVICE is not set");
        }
        InetAddress address = InetAddress.getByName(System.getenv("RDMA4J_TEST_ADDRESS"));
        try (Context context = Device.byName(device).orElseThrow(() -> new AssertionError("no " + device)).open()) {
            assumeFalse(context.device().transport() == Transport.IWARP,
                    "ibv_rc_pingpong connects QPs by hand; iWARP connects only through rdma_cm");
            gidIndex = String.valueOf(context.gidTable().stream()
                    .filter(g -> g.type() == GidType.ROCE_V2 && g.asInetAddress().equals(address))
                    .mapToInt(GidEntry::index).findFirst().orElseThrow());
        }
        tcpPort = 18515 + (int) (ProcessHandle.current().pid() % 1000);
    }

    @Test
    void theJavaClientPlaysAgainstTheCServer() throws Exception {
        Process server = new ProcessBuilder("ibv_rc_pingpong", "-d", device, "-g", gidIndex, "-n", "" + ITERS,
                "-p", "" + tcpPort).redirectErrorStream(true).start();
        try {
            awaitListening(tcpPort);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            PingPong.Options options = PingPong.Options.parse("-d", device, "-g", gidIndex, "-n", "" + ITERS,
                    "-p", "" + tcpPort, "127.0.0.1");
            double micros = new PingPong(options).run(new PrintStream(out, true, StandardCharsets.UTF_8));
            assertTrue(micros > 0, out.toString(StandardCharsets.UTF_8));
            assertTrue(server.waitFor(60, TimeUnit.SECONDS), "ibv_rc_pingpong finished");
            String c = new String(server.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, server.exitValue(), c);
            assertTrue(c.contains(ITERS + " iters in"), c);
        } finally {
            server.destroyForcibly();
        }
    }

    @Test
    void theCClientPlaysAgainstTheJavaServer() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PingPong.Options options = PingPong.Options.parse("-d", device, "-g", gidIndex, "-n", "" + ITERS,
                "-p", "" + tcpPort);
        CompletableFuture<Double> javaServer = CompletableFuture.supplyAsync(() -> {
            try {
                return new PingPong(options).run(new PrintStream(out, true, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, InProcessServer.OWN_THREAD);
        awaitListening(tcpPort);
        Process client = new ProcessBuilder("ibv_rc_pingpong", "-d", device, "-g", gidIndex, "-n", "" + ITERS,
                "-p", "" + tcpPort, "127.0.0.1").redirectErrorStream(true).start();
        try {
            assertTrue(client.waitFor(60, TimeUnit.SECONDS), "ibv_rc_pingpong finished");
            String c = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, client.exitValue(), c);
            assertTrue(c.contains(ITERS + " iters in"), c);
            assertTrue(javaServer.get(60, TimeUnit.SECONDS) > 0, out.toString(StandardCharsets.UTF_8));
        } finally {
            client.destroyForcibly();
        }
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
