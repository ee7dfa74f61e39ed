package io.rdma4j.benchmarks;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.cm.Connector;
import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletionOpcode;
import io.rdma4j.verbs.WorkCompletionStatus;
import io.rdma4j.verbs.WorkCompletions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;

/**
 * One side of a {@link Perf} run: a connection made by the connection manager (as perftest's {@code -R}), one
 * registered buffer and the peer's. The buffer holds what this side sends, writes or reads into at
 * {@code [0, size)}, the place the peer writes or sends to at {@code [slot, slot + size)}, and the hello. Both sides
 * allocate the buffer and post their receives before the connect request or the accept leaves (iWARP ends a
 * connection whose peer sends to a queue without receives), then exchange hellos with their buffer's address and
 * key, the client first ({@link #exchangeHellos}). Closing closes the buffer, then the connection (then, on the
 * server, the listener). Single-threaded.
 */
final class PerfEndpoint implements AutoCloseable {

    /** The id of every data receive; sends use positive ids, so one completion queue serves both queues. */
    static final long RECEIVE_ID = -1;
    private static final long HELLO_ID = -2;
    private static final long NUDGE_ID = -3;
    private static final long GOODBYE_ID = -4;
    /**
     * How many empty polls a passive server spins through between looks at the clock and the connection's events:
     * each is a system call (no vDSO clock in the lab's guests), which perftest's spinning server does not make.
     */
    private static final long SPINS_PER_CHECK = 1 << 16;
    private static final long NUDGE_NANOS = Duration.ofSeconds(1).toNanos();
    private static final int HELLO_BYTES = 16;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(60);

    private final Acceptor acceptor;
    private final Connection connection;
    private final Setup setup;
    private RemoteBuffer peer;

    private PerfEndpoint(Acceptor acceptor, Connection connection, Setup setup) {
        this.acceptor = acceptor;
        this.connection = connection;
        this.setup = setup;
    }

    /** The server's or the client's side of {@code options}' test, connected and with the peer's buffer known. */
    static PerfEndpoint open(PerfOptions options) throws InterruptedException {
        Setup setup = new Setup(options);
        // One send and one receive more than the test's: the hello; one receive more again: a passive server's goodbye.
        QueuePairCapabilities caps = QueuePairCapabilities.defaults()
                .withSendQueue(Math.max(options.txDepth(), options.cqModeration()) + 1)
                .withReceiveQueue(setup.receives + 2).withInlineData(options.inlineSize());
        ConnectionOptions connection = ConnectionOptions.builder().capabilities(caps)
                .completionQueueSize(caps.maxSendWorkRequests() + caps.maxReceiveWorkRequests())
                .readDepth(options.outstandingReads()).onQueuePair(setup::prepare).build();
        Acceptor acceptor = null;
        Connection established = null;
        try {
            if (options.isServer()) {
                acceptor = Acceptor.listen(new InetSocketAddress(InetAddress.ofLiteral("0.0.0.0"), options.port()), 1);
                Optional<Connection> accepted = Optional.empty();
                while (accepted.isEmpty()) {
                    accepted = acceptor.accept(connection, CONNECT_TIMEOUT);
                }
                established = accepted.get();
            } else {
                established = Connector.connect(new InetSocketAddress(options.server(), options.port()), connection,
                        CONNECT_TIMEOUT);
            }
            PerfEndpoint endpoint = new PerfEndpoint(acceptor, established, setup);
            endpoint.exchangeHellos();
            return endpoint;
        } catch (RuntimeException | InterruptedException e) {
            // The order of close(): the buffer (made on the connection's protection domain), the connection, the
            // listener.
            setup.close();
            if (established != null) {
                established.close();
            }
            if (acceptor != null) {
                acceptor.close();
            }
            throw e;
        }
    }

    QueuePair queuePair() {
        return connection.queuePair();
    }

    CompletionQueue completionQueue() {
        return connection.completionQueue();
    }

    MemoryRegion buffer() {
        return setup.buffer;
    }

    /** Where in {@link #buffer()} the peer writes or sends to. */
    long slot() {
        return setup.slot;
    }

    /** The receives posted ahead: perftest's rx depth for SEND tests (no more than the test needs), else 0. */
    int receivesAhead() {
        return setup.receives;
    }

    /** The peer's buffer: its slot. */
    RemoteBuffer peer() {
        return peer;
    }

    /** One receive into the slot (id {@link #RECEIVE_ID}), to post again after each one consumed. */
    ReceiveWorkRequests receive() {
        return setup.receive;
    }

    /** The device's name. */
    String deviceName() {
        return connection.context().device().name();
    }

    /**
     * What the kernel's TCP holds for this connection, for a stall's report: iWARP runs over TCP, and bytes left
     * unread there (the provider did not take what arrived) or unsent name the side that stopped moving data. From
     * {@code /proc/net/tcp} and {@code tcp6}; empty where the connection is not TCP (RoCE) or nothing matches.
     */
    String tcpQueues() {
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                String found = tcpQueues(Files.readAllLines(Path.of(table)), connection.localAddress().getPort(),
                        connection.peerAddress().getPort());
                if (!found.isEmpty()) {
                    return found;
                }
            } catch (IOException e) {
                // Not Linux, or no such table: nothing to add.
            }
        }
        return "";
    }

    /** {@link #tcpQueues()} from the lines of a {@code /proc/net/tcp} table. */
    static String tcpQueues(List<String> table, int localPort, int peerPort) {
        String local = ":%04X".formatted(localPort);
        String peer = ":%04X".formatted(peerPort);
        for (String line : table) {
            // sl local_address rem_address st tx_queue:rx_queue ...
            String[] f = line.trim().split("\\s+");
            if (f.length > 4 && f[1].endsWith(local) && f[2].endsWith(peer)) {
                String[] queues = f[4].split(":");
                return " (its TCP connection" + ("01".equals(f[3]) ? "" : ", state 0x" + f[3]) + ": "
                        + Long.parseLong(queues[1], 16) + " bytes received and not read, "
                        + Long.parseLong(queues[0], 16) + " not sent)";
            }
        }
        return "";
    }

    /**
     * The client's end of a test whose server only waits ({@link PerfOptions.Test#passiveServer()}): a zero-length
     * SEND, signaled and awaited, that tells the server the run is over (as perftest's closing
     * {@code ctx_hand_shake}). Call it with every request of the run retired.
     */
    void sayGoodbye() {
        try (SendWorkRequests goodbye = new SendWorkRequests(1, 0); WorkCompletions one = new WorkCompletions(1)) {
            connection.queuePair().postSend(goodbye.send(GOODBYE_ID).signaled());
            long deadline = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
            while (connection.completionQueue().poll(one) == 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the goodbye SEND did not complete within " + CONNECT_TIMEOUT);
                }
                Thread.onSpinWait();
            }
            if (!one.isSuccess(0) || one.workRequestId(0) != GOODBYE_ID) {
                throw new IllegalStateException("the goodbye SEND did not complete: " + describe(one));
            }
        }
    }

    /**
     * The wait of a server that only waits ({@link PerfOptions.Test#passiveServer()}) while its client runs, as
     * perftest's: it spins on its completion queue until the client's goodbye ({@link #sayGoodbye}) arrives (perftest's
     * closing {@code ctx_hand_shake} polls in {@code rdma_read_keys}), then waits for the disconnect. On siw the
     * server's CPU also runs the transmit thread that sends the READ responses: a server asleep instead left that thread
     * the CPU to itself, where perftest's shares it with the spinner, and its READ bandwidth was 1.4-2x perftest's
     * (benchmarks/results/2026-12-06-lab-siw-read-server-wait.md).
     *
     * @throws IllegalStateException if the client disconnects without its goodbye, it fails, or {@code timeout} passes
     */
    void awaitGoodbye(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        CompletionQueue cq = connection.completionQueue();
        try (WorkCompletions one = new WorkCompletions(1)) {
            boolean gone = false;
            for (long spins = 1; cq.poll(one) == 0; spins++) {
                if (gone) {
                    throw new IllegalStateException("the client disconnected without its goodbye");
                }
                // No Thread.onSpinWait(), as perftest's loop has none: under QEMU's TCG each x86 PAUSE leaves the
                // vCPU's translated code and takes the emulator's global lock, which slowed the client's 64-byte
                // WRITEs on siw0 by 4-19% (2026-12-06-lab-passive-server-pause.md).
                if (spins % SPINS_PER_CHECK == 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the client's goodbye did not arrive within " + timeout);
                    }
                    connection.nextEvent(Duration.ZERO);
                    // Its goodbye precedes its disconnect: poll once more before giving up.
                    gone = connection.isDisconnected();
                }
            }
            if (one.status(0) == WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR) {
                // The queue pair went to error (on iWARP the end of the TCP connection does so): the receive flushed.
                throw new IllegalStateException("the client disconnected without its goodbye (" + describe(one) + ")");
            }
            if (!one.isSuccess(0) || one.workRequestId(0) != GOODBYE_ID
                    || one.opcode(0) != WorkCompletionOpcode.RECEIVE) {
                throw new IllegalStateException("the client's goodbye did not arrive: " + describe(one));
            }
        }
        awaitDisconnect(timeout);
    }

    /** A completion, for an error's message. */
    private static String describe(WorkCompletions one) {
        return one.statusText(0) + " (id " + one.workRequestId(0) + ", " + one.opcode(0) + ", " + one.byteLength(0)
                + " bytes)";
    }

    /** Waits (up to {@code timeout}) until the peer disconnects. */
    private void awaitDisconnect(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!connection.isDisconnected()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException("the client did not disconnect within " + timeout);
            }
            connection.nextEvent(Duration.ofNanos(left));
        }
    }

    /**
     * Exchanges the slots: the client sends its hello first (unsignaled, so the loops never meet its completion),
     * the server answers with its own once the client's has arrived. On siw (Linux 6.1) neither side may send the
     * moment it is connected: data that reaches the server before {@code siw_accept} has handed the socket to the
     * queue pair stays unread in the socket until more data arrives (seen: the client's hello, 40 bytes, unread for
     * good, about one connection in a hundred under emulation), and data that reaches the client while it still
     * reads the MPA reply fails the connection (EPROTO, reported as refused). So the server sends only once the
     * client has been heard, and a client that hears nothing for a second nudges it ({@link Connection#nudgePeer}: a
     * zero-length RDMA WRITE, awaited, no receive consumed), whose arrival makes the server read what waits in its
     * socket.
     */
    private void exchangeHellos() {
        MemoryRegion buffer = setup.buffer;
        long slot = setup.slot;
        long out = 2 * slot;
        RemoteBuffer.of(buffer, slot, slot).writeTo(buffer.segment(), out);
        QueuePair qp = connection.queuePair();
        try (SendWorkRequests hello = new SendWorkRequests(1, 1); WorkCompletions one = new WorkCompletions(1)) {
            hello.send(HELLO_ID).gather(buffer, out, HELLO_BYTES);
            boolean client = acceptor == null;
            if (client) {
                qp.postSend(hello);
            }
            // The peer's hello precedes anything else it sends (RC is ordered): poll one completion at a time.
            long start = System.nanoTime();
            long nudges = 0;
            long nudged = 0;
            boolean arrived = false;
            while (!arrived || nudged < nudges) {
                long waited = System.nanoTime() - start;
                if (waited > CONNECT_TIMEOUT.toNanos()) {
                    throw new IllegalStateException("the peer's hello did not arrive within " + CONNECT_TIMEOUT
                            + (nudges > 0 ? " (" + nudges + " zero-length WRITEs sent to wake it)" : ""));
                }
                if (client && !arrived && nudged == nudges && waited > (nudges + 1) * NUDGE_NANOS) {
                    connection.nudgePeer(NUDGE_ID);
                    nudges++;
                }
                if (connection.completionQueue().poll(one) == 0) {
                    Thread.onSpinWait();
                } else if (one.isSuccess(0) && one.workRequestId(0) == NUDGE_ID) {
                    nudged++;
                } else if (one.isSuccess(0) && one.workRequestId(0) == HELLO_ID
                        && one.opcode(0) == WorkCompletionOpcode.RECEIVE && one.byteLength(0) == HELLO_BYTES) {
                    arrived = true;
                } else {
                    throw new IllegalStateException("the peer's hello did not arrive: " + describe(one));
                }
            }
            if (!client) {
                qp.postSend(hello);
            }
        }
        peer = RemoteBuffer.readFrom(buffer.segment(), setup.helloArrives);
    }

    @Override
    public void close() {
        try {
            setup.close();
            connection.close();
        } finally {
            if (acceptor != null) {
                acceptor.close();
            }
        }
    }

    /** What {@code onQueuePair} makes on the new queue pair's protection domain, before the connection exists. */
    private static final class Setup implements AutoCloseable {
        private final PerfOptions options;
        private final long slot;
        /** Where the peer's hello lands in the buffer, and then the client's goodbye. */
        private final long helloArrives;
        private final int receives;
        private final ReceiveWorkRequests receive = new ReceiveWorkRequests(1, 1);
        private MemoryRegion buffer;

        Setup(PerfOptions options) {
            this.options = options;
            this.slot = (options.size() + 63) & ~63L;
            this.helloArrives = 2 * slot + 64;
            this.receives = options.test().sends() ? Math.min(options.rxDepth(), options.total()) : 0;
        }

        void prepare(QueuePair qp) {
            buffer = qp.protectionDomain().allocateMemory(2 * slot + 128,
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            try (ReceiveWorkRequests hello = new ReceiveWorkRequests(1, 1)) {
                qp.postReceive(hello.add(HELLO_ID).scatter(buffer, helloArrives, HELLO_BYTES));
                if (options.isServer() && options.test().passiveServer()) {
                    // Into the hello's place, read by then (libsiw refuses a receive without a scatter entry).
                    qp.postReceive(hello.clear().add(GOODBYE_ID).scatter(buffer, helloArrives, HELLO_BYTES));
                }
            }
            receive.add(RECEIVE_ID).scatter(buffer, slot, options.size());
            for (int i = 0; i < receives; i++) {
                qp.postReceive(receive);
            }
        }

        @Override
        public void close() {
            if (buffer != null) {
                buffer.close();
            }
            receive.close();
        }
    }
}
