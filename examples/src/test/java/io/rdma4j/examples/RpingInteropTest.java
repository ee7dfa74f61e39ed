package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.cm.ConnectionOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
                // A stall before the first ping came back can be siw's accept race.
                InProcessServer.clientStalled("rping -c", 300, client, said, port, serving, out,
                        c -> lines(c, "ping data: ") > 0);
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
