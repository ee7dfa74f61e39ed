package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kv} on the test device: a server in this JVM, clients in JVMs of their own and in this one. Each client
 * PUTs and GETs every key of its share with requests in flight and checks every value (small ones in answers,
 * large ones by RDMA READ); the clients' shares differ (fetch-and-add on the server's counter, or a request on
 * iWARP); progress comes every second, also when busy-polling; a client that asks more than the server offers is
 * refused by name.
 */
@Tag("device")
class KvTest {

    private final String address = InProcessServer.testAddress();

    @Test
    void twoClientProcessesPutAndGetTheirKeysAndCheckEveryValue() throws Exception {
        String port = InProcessServer.port(19800);
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        try (Server server = new Server(new Kv(Kv.Options.parse("-s", "-a", address, "-p", port, "-k", "128", "-C",
                "2"), new PrintStream(serverOut, true, StandardCharsets.UTF_8)))) {
            List<CompletableFuture<ExampleProcess.Result>> clients = List.of(client(port), client(port));
            List<String> ids = new ArrayList<>();
            for (CompletableFuture<ExampleProcess.Result> client : clients) {
                ExampleProcess.Result r = client.get(120, TimeUnit.SECONDS);
                assertEquals(0, r.exit(), r.all());
                assertTrue(r.out().contains("total 256 requests (") && r.out().contains("every value checked"),
                        r.all());
                assertTrue(!r.out().contains("(0 values READ)"), "large values are READ: " + r.all());
                ids.add(r.out().lines().filter(l -> l.startsWith("client ")).findFirst().orElseThrow().split(":")[0]);
            }
            assertEquals(2, ids.stream().distinct().count(), "each client has keys of its own: " + ids);
            // 2 × 256 requests, and on a device without atomics one more per client for its share of the keys.
            long requests = server.served();
            assertTrue(requests == 512 || requests == 514, serverOut.toString(StandardCharsets.UTF_8));
        }
    }

    /**
     * Messaging's many-connections case: {@code RDMA4J_PROOF_CONNECTIONS} connections (default 100, the CI's run;
     * {@code rdma-lab proof} runs 1,000: 3-4 minutes per mode and device) between two JVMs, each on a virtual thread
     * of the client doing request/response (PUT, GET, READ) and on a virtual thread of the server; every one
     * completes and every value checks, in each progress mode.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aThousandConnectionsFromAnotherJvmEachOnAVirtualThreadAllComplete(boolean busy) throws Exception {
        String env = System.getenv("RDMA4J_PROOF_CONNECTIONS");
        int connections = env == null ? 100 : Integer.parseInt(env);
        String port = InProcessServer.port(busy ? 19950 : 20000);
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        List<String> serverArgs = new ArrayList<>(List.of("-s", "-a", address, "-p", port, "-k",
                Integer.toString(8 * connections), "-S", "8192", "-C", Integer.toString(connections)));
        List<String> clientArgs = new ArrayList<>(List.of("kv", "-c", "-a", address, "-p", port, "-k", "8", "-S",
                "8192", "-t", "4", "-n", "2", "-P", Integer.toString(connections)));
        if (busy) {
            serverArgs.add("-b");
            clientArgs.add("-b");
        }
        try (Server server = new Server(new Kv(Kv.Options.parse(serverArgs.toArray(String[]::new)),
                new PrintStream(serverOut, true, StandardCharsets.UTF_8)))) {
            ExampleProcess.Result client = ExampleProcess.run(Duration.ofMinutes(8), List.of(),
                    clientArgs.toArray(String[]::new));
            assertEquals(0, client.exit(), client.all() + serverOut.toString(StandardCharsets.UTF_8));
            assertTrue(client.out().contains("total " + 32 * connections + " requests (")
                    && client.out().contains(" on " + connections + " connections") && client.out().contains(
                    "every value checked"), client.all());
            long requests = server.served();
            assertTrue(requests == 32 * connections || requests == 33 * connections,
                    requests + "\n" + serverOut.toString(StandardCharsets.UTF_8));
        }
    }

    @Test
    void aTimedBusyPollingRunPrintsProgressEverySecond() throws Exception {
        String port = InProcessServer.port(19850);
        ByteArrayOutputStream clientOut = new ByteArrayOutputStream();
        long answered;
        try (Server server = new Server(new Kv(Kv.Options.parse("-s", "-a", address, "-p", port, "-C", "1", "-b"),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))) {
            answered = new Kv(Kv.Options.parse("-c", "-a", address, "-p", port, "-k", "32", "-D", "3", "-b"),
                    new PrintStream(clientOut, true, StandardCharsets.UTF_8)).run();
            server.served();
        }
        String out = clientOut.toString(StandardCharsets.UTF_8);
        assertTrue(answered > 0 && answered % 64 == 0, out);
        assertTrue(out.lines().filter(l -> l.matches("\\s*[0-9.]+ s\\s+[0-9]+ requests/s\\s+[0-9.]+ MB/s of values"))
                .count() >= 2, out);
        assertTrue(out.contains("total " + answered + " requests") && out.contains("every value checked"), out);
    }

    @Test
    void aClientWithLargerValuesThanTheServerKeepsIsRefusedByName() throws Exception {
        String port = InProcessServer.port(19900);
        try (Server server = new Server(new Kv(Kv.Options.parse("-s", "-a", address, "-p", port, "-C", "1", "-S",
                "4096"), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))) {
            Kv client = new Kv(Kv.Options.parse("-c", "-a", address, "-p", port, "-S", "8192", "-n", "1"),
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, client::run);
            assertEquals("the server keeps values of up to 4096 bytes, fewer than -S 8192", e.getMessage());
            assertEquals(0, server.served(), "the refused client asked nothing");
        }
    }

    /**
     * A {@code kv} server on a thread of this JVM, listening once made. A test that fails before all its clients came
     * must not leave it waiting for them (its registered store would outlive the test): {@link #close()} interrupts
     * a server that has not ended, which ends its accepts and closes everything.
     */
    private static final class Server implements AutoCloseable {
        private final CompletableFuture<Long> served = new CompletableFuture<>();
        private final AtomicReference<Thread> thread = new AtomicReference<>();
        private final CompletableFuture<Void> serving;

        Server(Kv kv) throws InterruptedException {
            serving = InProcessServer.start(hook -> kv.onListening = hook, () -> {
                thread.set(Thread.currentThread());
                served.complete(kv.run());
            });
        }

        /** Waits for the server to end (its clients all came and left); the requests it served. */
        long served() throws Exception {
            serving.get(120, TimeUnit.SECONDS);
            return served.get();
        }

        @Override
        public void close() throws TimeoutException {
            if (!serving.isDone()) {
                thread.get().interrupt();
                try {
                    serving.get(60, TimeUnit.SECONDS);
                } catch (ExecutionException interrupted) {
                    // ended by the interrupt, as meant
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private CompletableFuture<ExampleProcess.Result> client(String port) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return ExampleProcess.run(List.of(), "kv", "-c", "-a", address, "-p", port, "-k", "64", "-n", "2",
                        "-t", "32");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, InProcessServer.OWN_THREAD);
    }
}
