package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.cm.CmEventType;
import io.rdma4j.cm.ConnectionException;
import io.rdma4j.verbs.VerbException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code write-bw} on the test device, server and client in this JVM: every WRITE completes, the server finds the
 * client's bytes in its buffer and the client's totals in the final SEND, progress comes every second; and a client
 * without a server fails with the connection manager's event.
 */
@Tag("device")
class WriteBwTest {

    private static final int ECONNREFUSED = 111;

    private final String address = InProcessServer.testAddress();

    @Test
    void aTimedRunPrintsProgressEverySecondAndTheServerVerifiesTheData() throws Exception {
        String port = InProcessServer.port(18600);
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        WriteBw server = new WriteBw(WriteBw.Options.parse("-s", "-a", address, "-p", port, "-S", "16384"),
                new PrintStream(serverOut, true, StandardCharsets.UTF_8));
        CompletableFuture<Void> serving = InProcessServer.start(hook -> server.onListening = hook, server::run);
        ByteArrayOutputStream clientOut = new ByteArrayOutputStream();
        long written = new WriteBw(WriteBw.Options.parse("-c", "-a", address, "-p", port, "-S", "16384", "-t", "16",
                "-D", "3"), new PrintStream(clientOut, true, StandardCharsets.UTF_8)).run();
        serving.get(60, TimeUnit.SECONDS);
        String client = clientOut.toString(StandardCharsets.UTF_8);
        String served = serverOut.toString(StandardCharsets.UTF_8);
        assertTrue(written > 0 && written % 16384 == 0, client);
        assertTrue(client.lines().filter(l -> l.matches("\\s*[0-9.]+ s\\s+[0-9.]+ MB/s\\s+[0-9]+ WRITEs/s")).count()
                >= 2, client);
        assertTrue(client.contains("total " + written / 16384 + " WRITEs of 16384 bytes"), client);
        assertTrue(served.contains("received " + written / 16384 + " WRITEs of 16384 bytes (" + written + " bytes)")
                && served.contains("holds the client's data"), served);
    }

    @Test
    void aCountedRunWritesExactlyThatMany() throws Exception {
        String port = InProcessServer.port(18650);
        WriteBw server = new WriteBw(WriteBw.Options.parse("-s", "-a", address, "-p", port),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        CompletableFuture<Void> serving = InProcessServer.start(hook -> server.onListening = hook, server::run);
        long written = new WriteBw(WriteBw.Options.parse("-c", "-a", address, "-p", port, "-n", "1000", "-S", "4096"),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)).run();
        assertEquals(1000L * 4096, written);
        serving.get(60, TimeUnit.SECONDS);
    }

    /** InfiniBand/RoCE: the CM answers REJECTED or UNREACHABLE; iWARP: the TCP connect is refused at once. */
    @Test
    void aClientWithoutAServerFailsWithTheConnectionManagersEvent() {
        String port = InProcessServer.port(18700);
        ConnectionException e = assertThrows(ConnectionException.class, () -> new WriteBw(WriteBw.Options.parse(
                "-c", "-a", address, "-p", port, "-n", "1"), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8)).run());
        assertTrue(e.eventType().filter(Set.of(CmEventType.REJECTED, CmEventType.UNREACHABLE)::contains).isPresent()
                || e.getCause() instanceof VerbException r && r.errno() == ECONNREFUSED, e.getMessage());
    }
}
