package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.cm.ConnectionException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Java echo against librdmacm's {@code rdma_server} and {@code rdma_client} examples, in both roles, on the test
 * device's address: exit codes, the C tools' "end 0", and the bytes that came back.
 */
@Tag("device")
class EchoInteropTest {

    private String address;
    private String port;

    @BeforeEach
    void address() {
        address = System.getenv("RDMA4J_TEST_ADDRESS");
        if (address == null) {
            fail("RDMA4J_TEST_ADDRESS is not set");
        }
        port = Integer.toString(27471 + (int) (ProcessHandle.current().pid() % 1000));
    }

    @Test
    void rdmaClientIsEchoedByTheJavaServer() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Echo server = new Echo(Echo.Options.parse("server", "-s", address, "-p", port),
                new PrintStream(out, true, StandardCharsets.US_ASCII));
        CountDownLatch listening = new CountDownLatch(1);
        server.onListening = listening::countDown;
        CompletableFuture<Void> serving = CompletableFuture.runAsync(() -> {
            try {
                server.run();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(listening.await(60, TimeUnit.SECONDS), "the Java server listens");
        Process client = new ProcessBuilder("rdma_client", "-s", address, "-p", port).redirectErrorStream(true).start();
        try {
            assertTrue(client.waitFor(120, TimeUnit.SECONDS), "rdma_client finishes");
            String c = new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            assertEquals(0, client.exitValue(), c);
            assertTrue(c.contains("rdma_client: end 0"), c);
            serving.get(60, TimeUnit.SECONDS);
            assertTrue(out.toString(StandardCharsets.US_ASCII).startsWith("echoed \"\" to "), out.toString());
        } finally {
            client.destroyForcibly();
        }
    }

    @Test
    void theJavaClientIsAnsweredByRdmaServer() throws Exception {
        Process server = new ProcessBuilder("rdma_server", "-s", address, "-p", port).redirectErrorStream(true)
                .start();
        try {
            String java = null;
            for (int attempt = 0; java == null; attempt++) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try {
                    new Echo(Echo.Options.parse("client", "-s", address, "-p", port, "-m", "hello rdma"),
                            new PrintStream(out, true, StandardCharsets.US_ASCII)).run();
                    java = out.toString(StandardCharsets.US_ASCII);
                } catch (ConnectionException notYetListening) {
                    if (attempt == 20) {
                        throw notYetListening;
                    }
                    Thread.sleep(500);
                }
            }
            assertEquals("received \"\"", java.trim(), "rdma_server answers with 16 zero bytes");
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
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        Echo server = new Echo(Echo.Options.parse("server", "-s", address, "-p", port),
                new PrintStream(serverOut, true, StandardCharsets.US_ASCII));
        CountDownLatch listening = new CountDownLatch(1);
        server.onListening = listening::countDown;
        CompletableFuture<Void> serving = CompletableFuture.runAsync(() -> {
            try {
                server.run();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(listening.await(60, TimeUnit.SECONDS));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new Echo(Echo.Options.parse("client", "-s", address, "-p", port, "-m", "hello rdma"),
                new PrintStream(out, true, StandardCharsets.US_ASCII)).run();
        serving.get(60, TimeUnit.SECONDS);
        assertEquals("received \"hello rdma\"", out.toString(StandardCharsets.US_ASCII).trim());
    }
}
