package io.rdma4j.examples;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.cm.Connector;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Optional;

/**
 * A 16-byte echo over {@link Connector} and {@link Acceptor}, wire-compatible with librdmacm's {@code rdma_client}
 * and {@code rdma_server} examples (port 7471): the client posts a receive, connects, SENDs 16 bytes and waits for
 * 16 back (nudging a silent server once a second: {@link Connection#nudgePeer}); the server posts a receive,
 * accepts, waits for the 16 bytes and SENDs 16 back (this one echoes them; {@code rdma_server} sends zeros), then
 * disconnects.
 *
 * <pre>
 * echo server [-s server_address] [-p port_number] [-n connections]
 * echo client -s server_address [-p port_number] [-m message]
 * </pre>
 */
public final class Echo {

    /** The message size of rdma_client and rdma_server. */
    static final int MESSAGE = 16;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final long NUDGE_AFTER = Duration.ofSeconds(1).toNanos();
    static final long NUDGE_ID = 3;

    /** The options, with rdma_client's and rdma_server's defaults. */
    record Options(boolean server, InetAddress address, int port, int connections, byte[] message) {

        static Options parse(String... args) {
            if (args.length == 0 || !(args[0].equals("server") || args[0].equals("client"))) {
                throw new IllegalArgumentException("the first argument is the role: server or client");
            }
            InetAddress address = null;
            int port = 7471;
            int connections = 1;
            byte[] message = Arrays.copyOf("rdma4j echo".getBytes(StandardCharsets.US_ASCII), MESSAGE);
            for (int i = 1; i < args.length; i++) {
                String option = args[i];
                if (++i >= args.length) {
                    throw new IllegalArgumentException(option + " needs a value");
                }
                switch (option) {
                    case "-s" -> address = CommandLine.host(args[i]);
                    case "-p" -> port = Integer.parseInt(args[i]);
                    case "-n" -> connections = Integer.parseInt(args[i]);
                    case "-m" -> {
                        byte[] text = args[i].getBytes(StandardCharsets.US_ASCII);
                        if (text.length > MESSAGE) {
                            throw new IllegalArgumentException("the message has at most " + MESSAGE + " bytes");
                        }
                        message = Arrays.copyOf(text, MESSAGE);
                    }
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            boolean server = args[0].equals("server");
            if (!server && address == null) {
                throw new IllegalArgumentException("the client needs the server's address (-s)");
            }
            return new Options(server, address, port, connections, message);
        }
    }

    static final String USAGE = """
            echo server [-s server_address] [-p port_number] [-n connections]
            echo client -s server_address [-p port_number] [-m message]""";

    private final Options options;
    private final PrintStream out;
    /** Called once the server listens (tests start the C client then). */
    Runnable onListening = () -> { };

    Echo(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /** Runs one side; exits 0 on success, 1 on failure or bad options (as the C tools report a non-zero end). */
    public static void main(String[] args) throws InterruptedException {
        CommandLine.run("echo", USAGE, args, Options::parse, 1, 1, options -> new Echo(options, System.out).run());
    }

    /** Runs one side to completion, between rdma_server's and rdma_client's "start" and "end 0" lines. */
    void run() throws InterruptedException {
        String role = "echo " + (options.server() ? "server" : "client");
        out.println(role + ": start");
        exchange();
        out.println(role + ": end 0");
    }

    private void exchange() throws InterruptedException {
        if (options.server()) {
            InetAddress any = options.address() == null ? InetAddress.ofLiteral("0.0.0.0") : options.address();
            try (Acceptor acceptor = Acceptor.listen(new InetSocketAddress(any, options.port()), 1)) {
                onListening.run();
                for (int served = 0; served < options.connections(); ) {
                    try (Buffers buffers = new Buffers()) {
                        Optional<Connection> accepted = acceptor.accept(buffers.options(), Duration.ofSeconds(1));
                        if (accepted.isPresent()) {
                            try (Connection c = accepted.get()) {
                                buffers.awaitOne(c);
                                MemorySegment.copy(buffers.segment(), 0, buffers.segment(), MESSAGE, MESSAGE);
                                buffers.send(c);
                                out.println("echoed " + text(buffers.segment().asSlice(0, MESSAGE)) + " to "
                                        + c.peerAddress());
                            }
                            served++;
                        }
                    }
                }
            }
        } else {
            try (Buffers buffers = new Buffers();
                 Connection c = Connector.connect(new InetSocketAddress(options.address(), options.port()),
                         buffers.options(), TIMEOUT)) {
                MemorySegment.copy(options.message(), 0, buffers.segment(), ValueLayout.JAVA_BYTE, MESSAGE, MESSAGE);
                buffers.send(c);
                buffers.awaitEcho(c);
                out.println("received " + text(buffers.segment().asSlice(0, MESSAGE)));
            }
        }
    }

    /**
     * One connection's 16-byte receive and send buffers, registered and the receive posted before the connection is
     * made (iWARP drops a connection whose peer sends before a receive is posted).
     */
    private static final class Buffers implements AutoCloseable {
        private final SendWorkRequests sends = new SendWorkRequests(1, 1);
        private final ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
        private final WorkCompletions completions = new WorkCompletions(2);
        private final Progress progress = new Progress();
        private MemoryRegion memory;

        ConnectionOptions options() {
            // rdma_client's and rdma_server's QP: one request each way, 16 bytes inline, every send signaled.
            return ConnectionOptions.builder().capabilities(QueuePairCapabilities.defaults().withSendQueue(1)
                            .withReceiveQueue(1).withInlineData(MESSAGE))
                    .completionEvents(true).onQueuePair(this::prepare).build();
        }

        private void prepare(QueuePair qp) {
            memory = qp.protectionDomain().allocateMemory(2 * MESSAGE, EnumSet.of(Access.LOCAL_WRITE));
            qp.postReceive(receives.add(1).scatter(memory, 0, MESSAGE));
        }

        MemorySegment segment() {
            return memory.segment();
        }

        /** SENDs the second half of the buffer, inline, and waits for its completion. */
        void send(Connection c) throws InterruptedException {
            c.queuePair().postSend(sends.clear().send(2).gather(memory, MESSAGE, MESSAGE).inline().signaled());
            awaitOne(c);
        }

        /** Waits for one more completion than waited for so far. */
        void awaitOne(Connection c) throws InterruptedException {
            await(c, false);
        }

        /**
         * The client's wait for the echo: after each second of silence it nudges the server ({@link
         * Connection#nudgePeer}: on siw the server may not have read the message yet), one nudge at a time.
         */
        void awaitEcho(Connection c) throws InterruptedException {
            await(c, true);
        }

        private void await(Connection c, boolean nudge) throws InterruptedException {
            progress.expectOneMore();
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (progress.waiting()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("no completion within " + TIMEOUT + progress.nudgesSaid());
                }
                int n = c.awaitCompletions(completions, Duration.ofNanos(nudge ? Math.min(left, NUDGE_AFTER) : left));
                if (n == 0 && nudge && progress.mayNudge()) {
                    c.nudgePeer(NUDGE_ID);
                    progress.nudged();
                }
                for (int i = 0; i < n; i++) {
                    progress.take(completions.workRequestId(i), completions.isSuccess(i), completions.statusText(i));
                }
            }
        }

        @Override
        public void close() {
            sends.close();
            receives.close();
            completions.close();
        }
    }

    /**
     * The bookkeeping of a side's waits, apart from the device: completions seen and waited for (one poll may bring the
     * send's and the receive's), and the client's nudges. A nudge that fails does not fail the exchange by itself:
     * {@code rdma_server} disconnects as soon as its answer is sent, so a nudge posted while that answer is on its way
     * fails (siw: local QP operation error) though the answer arrives; the receive's own completion decides, and if it
     * fails (flushed) its error names the nudge's.
     */
    static final class Progress {
        private int done;
        private int expected;
        private int nudges;
        private boolean nudging;
        private String nudgeFailed;

        void expectOneMore() {
            expected++;
        }

        boolean waiting() {
            return done < expected;
        }

        /** One nudge at a time, and none once one has failed (the connection is gone). */
        boolean mayNudge() {
            return !nudging && nudgeFailed == null;
        }

        void nudged() {
            nudging = true;
            nudges++;
        }

        /** Takes one completion. @throws IllegalStateException if a send or receive failed */
        void take(long workRequestId, boolean success, String status) {
            if (workRequestId == NUDGE_ID) {
                nudging = false;
                if (!success) {
                    nudgeFailed = status;
                }
                return;
            }
            if (!success) {
                throw new IllegalStateException("completion " + status + nudgesSaid());
            }
            done++;
        }

        /** What a failure's message adds about the nudges, if any were sent. */
        String nudgesSaid() {
            if (nudges == 0) {
                return "";
            }
            return " (" + nudges + " zero-length WRITEs sent to wake the server"
                    + (nudgeFailed == null ? "" : ", the last failed: " + nudgeFailed) + ")";
        }
    }

    private static String text(MemorySegment bytes) {
        byte[] b = bytes.toArray(ValueLayout.JAVA_BYTE);
        int end = 0;
        while (end < b.length && b[end] != 0) {
            end++;
        }
        return "\"" + new String(b, 0, end, StandardCharsets.US_ASCII) + "\"";
    }
}
