package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * The Java echo against librdmacm's {@code rdma_server} and {@code rdma_client} examples, in both roles, on the test
 * device's address: exit codes, the C tools' "end 0", and the bytes that came back.
 */
@Tag("device")
class EchoInteropTest {

    private final String address = InProcessServer.testAddress();
    private final String port = InProcessServer.port(27471);

    @Test
    void rdmaClientIsEchoedByTheJavaServer() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompletableFuture<Void> serving = startServer(out);
        // To a file, line by line (stdbuf): a killed client's last lines would die in its buffer or in a pipe that
        // the kill closes.
        Path said = Files.createTempFile("rdma_client", ".txt");
        Process client = new ProcessBuilder("stdbuf", "-oL", "rdma_client", "-s", address, "-p", port)
                .redirectErrorStream(true).redirectOutput(said.toFile()).start();
        try {
            // 20 s, while the Java server still waits (30 s) for the one message: its socket can still be seen then.
            if (!client.waitFor(20, TimeUnit.SECONDS)) {
                InProcessServer.clientStalled("rdma_client", 20, client, said, port, serving, out, c -> false);
            }
            String c = Files.readString(said, StandardCharsets.US_ASCII);
            assertEquals(0, client.exitValue(), c);
            assertTrue(c.contains("rdma_client: end 0"), c);
            serving.get(60, TimeUnit.SECONDS);
            assertTrue(out.toString(StandardCharsets.US_ASCII).contains("echoed \"\" to "), out.toString());
        } finally {
            client.destroyForcibly();
            Files.delete(said);
        }
    }

    @Test
    void theJavaClientIsAnsweredByRdmaServer() throws Exception {
        Process server = new ProcessBuilder("rdma_server", "-s", address, "-p", port).redirectErrorStream(true)
                .start();
        try {
            CListener.await(server, port);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            new Echo(Echo.Options.parse("client", "-s", address, "-p", port, "-m", "hello rdma"),
                    new PrintStream(out, true, StandardCharsets.US_ASCII)).run();
            String java = out.toString(StandardCharsets.US_ASCII);
            assertTrue(java.contains("received \"\"\n"), "rdma_server answers with 16 zero bytes: " + java);
            assertTrue(server.waitFor(60, TimeUnit.SECONDS), "rdma_server finishes");
            String c = new String(server.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            assertEquals(0, server.exitValue(), c);
            assertTrue(c.contains("rdma_server: end 0"), c);
        } finally {
            server.destroyForcibly();
        }
    }

    @Test
    void javaToJavaEchoesTheMessage() throws Exception {
        CompletableFuture<Void> serving = startServer(new ByteArrayOutputStream());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new Echo(Echo.Options.parse("client", "-s", address, "-p", port, "-m", "hello rdma"),
                new PrintStream(out, true, StandardCharsets.US_ASCII)).run();
        serving.get(60, TimeUnit.SECONDS);
        assertTrue(out.toString(StandardCharsets.US_ASCII).contains("received \"hello rdma\"\necho client: end 0"),
                out.toString(StandardCharsets.US_ASCII));
    }

    /** The Java echo server, serving one connection, listening when this returns. */
    private CompletableFuture<Void> startServer(ByteArrayOutputStream out) throws InterruptedException {
        Echo server = new Echo(Echo.Options.parse("server", "-s", address, "-p", port),
                new PrintStream(out, true, StandardCharsets.US_ASCII));
        return InProcessServer.start(hook -> server.onListening = hook, server::run);
    }
}
