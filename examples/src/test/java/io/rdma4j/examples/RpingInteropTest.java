package io.rdma4j.examples;

import static io.rdma4j.examples.InProcessServer.output;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import io.rdma4j.cm.ConnectionOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Java rping against rdma-core's {@code rping}, in both roles, on the test device's address
 * ({@code RDMA4J_TEST_ADDRESS}): {@code -C 100 -S 1024 -V -v}, so that both the C tool's and the Java side's
 * validation of every ping run, and every ping's line is counted on both sides.
 */
@Tag("device")
class RpingInteropTest {

    private static final int COUNT = 100;

    private final String address = InProcessServer.testAddress();
    private final String port = InProcessServer.port(17174);

    @Test
    void theJavaClientPingsTheCServer() throws Exception {
        // rping's server registers its buffer with its own -S: it must be at least the client's.
        // Its output goes to a file: -v prints a kilobyte per ping, more than a pipe holds.
        Path said = Files.createTempFile("rping-s", ".txt");
        Process server = new ProcessBuilder("rping", "-s", "-v", "-S", "1024", "-a", address, "-p", port)
                .redirectErrorStream(true).redirectOutput(said.toFile()).start();
        try {
            String java;
            try {
                CListener.await(server, port);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                new Rping(Rping.Options.parse("-c", "-v", "-V", "-a", address, "-p", port, "-C", "" + COUNT, "-S",
                        "1024"), new PrintStream(out, true, StandardCharsets.US_ASCII)).run();
                java = out.toString(StandardCharsets.US_ASCII);
            } catch (RuntimeException | AssertionError failed) {
                server.destroyForcibly().waitFor();
                throw new AssertionError("rping -s said: " + Files.readString(said, StandardCharsets.US_ASCII), failed);
            }
            assertEquals(COUNT, lines(java, "ping data: rdma-ping-"), java);
            assertTrue(server.waitFor(60, TimeUnit.SECONDS), "rping -s ends when the client disconnects");
            String c = Files.readString(said, StandardCharsets.US_ASCII);
            assertEquals(0, server.exitValue(), c);
            assertEquals(COUNT, lines(c, "server ping data: rdma-ping-"), c);
        } finally {
            server.destroyForcibly();
            Files.delete(said);
        }
    }

    @Test
    void theCClientPingsTheJavaServer() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Rping server = new Rping(Rping.Options.parse("-s", "-v", "-a", address, "-p", port),
                new PrintStream(out, true, StandardCharsets.US_ASCII));
        CompletableFuture<Void> serving = InProcessServer.start(hook -> server.onListening = hook, server::run);
        Path said = Files.createTempFile("rping-c", ".txt");
        // -d: rping's debug lines (its CM events and completions) say where a stalled client stopped; stdbuf: line by
        // line, or a killed client's last lines die in its buffer.
        Process client = new ProcessBuilder("stdbuf", "-oL", "rping", "-c", "-v", "-V", "-d", "-a", address, "-p",
                port, "-C", "" + COUNT, "-S", "1024").redirectErrorStream(true).redirectOutput(said.toFile()).start();
        try {
            if (!client.waitFor(300, TimeUnit.SECONDS)) {
                stalled(client, said, serving, out);
            }
            String c = Files.readString(said, StandardCharsets.US_ASCII);
            assertEquals(0, client.exitValue(), c);
            assertEquals(COUNT, lines(c, "ping data: rdma-ping-"), c);
            serving.get(60, TimeUnit.SECONDS);
            assertEquals(COUNT, lines(out.toString(StandardCharsets.US_ASCII), "server ping data: rdma-ping-"));
        } finally {
            client.destroyForcibly();
            Files.delete(said);
        }
    }

    @Test
    void optionsAreRpingsAndBadOnesAreRefusedWithItsMessages() {
        Rping.Options o = Rping.Options.parse("-c", "-a", "127.0.0.1");
        assertEquals(7174, o.port());
        assertEquals(64, o.size());
        assertEquals(0, o.count());
        ConnectionOptions setup = Rping.connectionSetup().build();
        assertEquals(7, setup.retryCount(), "rping_init_conn_param's retry_count");
        assertEquals(7, setup.rnrRetryCount(), "rping_init_conn_param's rnr_retry_count");
        assertEquals(1, setup.readDepth(), "rping's responder_resources and initiator_depth");
        assertTrue(assertThrowsMessage("-s", "-S", "25").contains("Invalid size 25"));
        assertTrue(assertThrowsMessage("-c").contains("-a"));
        assertTrue(assertThrowsMessage("-x").contains("unknown option -x"));
    }

    /**
     * The C client did not finish. If it has not had its first ping back and the server's socket of the connection
     * holds unread bytes, it is siw's accept race ({@link InProcessServer#unreadSockets}): ends both sides and skips
     * with that reason. Otherwise fails with what both sides said (the client's debug lines included), the Java
     * server's threads and end, and the kernel's sockets, queue pairs and ids.
     */
    private void stalled(Process client, Path said, CompletableFuture<Void> serving, ByteArrayOutputStream out)
            throws Exception {
        String state = output("ss -tanoi; rdma resource show qp; rdma resource show cm_id");
        String unread = InProcessServer.unreadSockets(port);
        String threads = InProcessServer.threads();
        client.destroyForcibly().waitFor();
        String c = Files.readString(said, StandardCharsets.US_ASCII);
        String why = "rping -c did not finish within 300 s\n--- rping -c said\n" + c + "--- the Java server said\n"
                + out.toString(StandardCharsets.US_ASCII) + "--- sockets, queue pairs and ids\n" + state
                + "--- this JVM's threads while the client still ran\n" + threads;
        try {
            // Killed, the client's kernel disconnects: the server's waits end on DISCONNECTED.
            serving.handle((done, failed) -> null).get(60, TimeUnit.SECONDS);
        } catch (TimeoutException hang) {
            fail(why + "--- and the Java server did not end within 60 s of the client's death");
        }
        why += "--- the Java server's end\n" + InProcessServer.outcome(serving);
        if (lines(c, "ping data: ") == 0 && !unread.isEmpty() && InProcessServer.testDevice().startsWith("siw")) {
            System.out.println(why);
            abort("siw's accept race: the C client's first message stayed unread in the accepted socket (" + unread
                    + ")");
        }
        fail(why);
    }

    private static String assertThrowsMessage(String... args) {
        try {
            Rping.Options.parse(args);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        return fail("accepted " + String.join(" ", args));
    }

    private static long lines(String output, String prefix) {
        return output.lines().filter(l -> l.startsWith(prefix)).count();
    }
}
