package io.rdma4j.examples;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.cm.Connector;
import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletionStatus;
import io.rdma4j.verbs.WorkCompletions;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;

/**
 * rdma-core's {@code rping} in Java, wire-compatible with it in both roles, over the connection manager's public
 * API only ({@link Connector}, {@link Acceptor}, {@link RemoteBuffer}). Each ping: the client SENDs the address of
 * its "start" buffer; the server RDMA READs it and SENDs a go-ahead; the client SENDs the address of its "rdma"
 * buffer; the server RDMA WRITEs the ping back into it and SENDs a go-ahead; the client compares ({@code -V}).
 * Every message is rping's 16-byte {@code struct rping_rdma_info} (= {@link RemoteBuffer}).
 *
 * <pre>
 * rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]
 * rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]
 * </pre>
 */
public final class Rping {

    /** The server's buffer for the pings it reads ({@code RPING_BUFSIZE}). */
    static final int BUFFER_SIZE = 64 * 1024;
    /** {@code sizeof(stringify(INT_MAX)) + sizeof(RPING_MSG_FMT)}: room for the ping's text header. */
    static final int MIN_SIZE = 26;
    /** Where the pieces live in the one registered region: receive and send messages, then the buffers. */
    private static final long RECEIVED = 0;
    private static final long SENT = RemoteBuffer.BYTES;
    private static final long RDMA = 64;
    private static final long RECEIVE_ID = 1;
    private static final long SEND_ID = 2;
    private static final long READ_ID = 3;
    private static final long WRITE_ID = 4;
    private static final long NUDGE_ID = 5;
    /** How often a wait for completions looks whether the connection ended meanwhile. */
    private static final Duration DISCONNECT_CHECK = Duration.ofSeconds(1);

    /** rping's options, with its defaults (port 7174, 64-byte pings, count 0 = forever). */
    record Options(boolean server, InetAddress address, InetAddress source, int port, int size, int count,
                   boolean verbose, boolean validate, boolean debug) {

        static Options parse(String... args) {
            Boolean server = null;
            InetAddress address = null;
            InetAddress source = null;
            int port = 7174;
            int size = 64;
            int count = 0;
            boolean verbose = false;
            boolean validate = false;
            boolean debug = false;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "-s" -> server = true;
                    case "-c" -> server = false;
                    case "-a" -> address = host(args, ++i);
                    case "-I" -> source = host(args, ++i);
                    case "-p" -> port = number(args, ++i);
                    case "-S" -> size = number(args, ++i);
                    case "-C" -> count = number(args, ++i);
                    case "-v" -> verbose = true;
                    case "-V" -> validate = true;
                    case "-d" -> debug = true;
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (server == null) {
                throw new IllegalArgumentException("-s (server) or -c (client) is required");
            }
            if (size < MIN_SIZE || size > BUFFER_SIZE - 1) {
                throw new IllegalArgumentException("Invalid size " + size + " (valid range is " + MIN_SIZE + " to "
                        + BUFFER_SIZE + ")");
            }
            if (count < 0) {
                throw new IllegalArgumentException("Invalid count " + count);
            }
            if (!server && address == null) {
                throw new IllegalArgumentException("the client needs the server's address (-a)");
            }
            return new Options(server, address, source, port, size, count, verbose, validate, debug);
        }

        private static InetAddress host(String[] args, int i) {
            try {
                return InetAddress.getByName(CommandLine.value(args, i));
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("getaddrinfo failed - invalid hostname or IP address: " + args[i]);
            }
        }

        private static int number(String[] args, int i) {
            try {
                return Integer.parseInt(CommandLine.value(args, i));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a number: " + args[i]);
            }
        }
    }

    static final String USAGE = """
            rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]
            rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]
            \t-c\t\tclient side
            \t-I\t\tSource address to bind to for client.
            \t-s\t\tserver side.  To bind to any address with IPv6 use -a ::0
            \t-v\t\tdisplay ping data to stdout
            \t-V\t\tvalidate ping data
            \t-d\t\tdebug printfs
            \t-S size \tping data size
            \t-C count\tping count times
            \t-a addr\t\taddress
            \t-p port\t\tport""";

    private final Options options;
    private final PrintStream out;
    private Connection connection;
    private MemoryRegion memory;
    private final SendWorkRequests sends = new SendWorkRequests(1, 1);
    private final ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
    private final WorkCompletions completions = new WorkCompletions(4);
    /** Completions seen and completions waited for, per kind: one poll may bring both kinds, in either order. */
    private int sendsDone;
    private int sendsTaken;
    private int receivesDone;
    private int receivesTaken;
    /** A nudge ({@link Connection#nudgePeer}) is posted and its completion not yet taken. */
    private boolean nudging;
    private Thread watcher;
    /** Called once the server listens (tests start the C client then). */
    Runnable onListening = () -> { };

    Rping(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /** Runs one side; exits 0 on success, 255 (rping's -1) on failure, 22 (EINVAL) for bad options. */
    public static void main(String[] args) throws InterruptedException {
        CommandLine.run("rping", USAGE, args, Options::parse, 22, 255,
                options -> new Rping(options, System.out).run());
    }

    /**
     * rping's QP: 16 sends, 2 receives, 1 SGE each; completions wake the waiting thread (no spinning). rping's retry
     * counts too (7 and 7, {@code rping_init_conn_param}): the client's request sets the C server's, and with the
     * library's 6 a C server under 20% loss ran out of retries (RETRY_EXCEEDED) where C against C retries on.
     */
    static ConnectionOptions.Builder connectionSetup() {
        return ConnectionOptions.builder().capabilities(QueuePairCapabilities.defaults().withReceiveQueue(2))
                .completionQueueSize(32).retries(7, 7).completionEvents(true);
    }

    /** Runs one side to completion. */
    void run() throws InterruptedException {
        ConnectionOptions.Builder setup = connectionSetup().onQueuePair(this::prepare);
        try (sends; receives; completions) {
            if (options.server()) {
                InetAddress any = options.address() == null ? InetAddress.getByName("0.0.0.0") : options.address();
                try (Acceptor acceptor = Acceptor.listen(new InetSocketAddress(any, options.port()), 3)) {
                    onListening.run();
                    Optional<Connection> accepted = Optional.empty();
                    while (accepted.isEmpty()) {
                        accepted = acceptor.accept(setup.build(), Duration.ofSeconds(1));
                    }
                    connection = accepted.get();
                }
                serve();
            } else {
                if (options.source() != null) {
                    setup.source(new InetSocketAddress(options.source(), 0));
                }
                connection = Connector.connect(new InetSocketAddress(options.address(), options.port()),
                        setup.build(), Duration.ofSeconds(60));
                ping();
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        } finally {
            if (watcher != null) {
                watcher.interrupt();
                watcher.join();
            }
            if (connection != null) {
                connection.close();
            }
            if (memory != null) {
                memory.close();
            }
        }
    }

    /** Before connect or accept: register the buffers and post the first receive (iWARP needs it posted first). */
    private void prepare(QueuePair qp) {
        memory = qp.protectionDomain().allocateMemory(RDMA + 2L * BUFFER_SIZE,
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE));
        qp.postReceive(receives.clear().add(RECEIVE_ID).scatter(memory, RECEIVED, RemoteBuffer.BYTES));
    }

    /** The server: serve pings until the client disconnects. */
    private void serve() throws InterruptedException {
        watchForDisconnect();
        MemorySegment rdma = memory.segment().asSlice(RDMA, BUFFER_SIZE);
        while (true) {
            // The client's "start" buffer: RDMA READ it.
            if (!awaitReceive()) {
                return;
            }
            RemoteBuffer source = RemoteBuffer.readFrom(memory.segment(), RECEIVED);
            debug("server received sink adv " + source);
            if (source.length() > BUFFER_SIZE) {
                throw new IllegalStateException("the client's buffer has " + source.length() + " bytes, more than "
                        + BUFFER_SIZE);
            }
            postReceive();
            post(sends.clear().rdmaRead(READ_ID, source.address(), source.rkey())
                    .gather(memory, RDMA, (int) source.length()).signaled());
            if (!awaitSend()) {
                return;
            }
            if (options.verbose()) {
                out.println("server ping data: " + string(rdma));
            }
            if (!goAhead()) {
                return;
            }
            // The client's "rdma" buffer: RDMA WRITE the ping back into it.
            if (!awaitReceive()) {
                return;
            }
            RemoteBuffer sink = RemoteBuffer.readFrom(memory.segment(), RECEIVED);
            postReceive();
            post(sends.clear().rdmaWrite(WRITE_ID, sink.address(), sink.rkey())
                    .gather(memory, RDMA, string(rdma).length() + 1).signaled());
            if (!awaitSend() || !goAhead()) {
                return;
            }
        }
    }

    /** The client: {@code -C} pings (or forever), each read and written back by the server. */
    private void ping() throws InterruptedException {
        watchForDisconnect();
        int size = options.size();
        long startAt = RDMA + BUFFER_SIZE;
        MemorySegment start = memory.segment().asSlice(startAt, size);
        MemorySegment echo = memory.segment().asSlice(RDMA, size);
        int first = 65;
        for (int ping = 0; options.count() == 0 || ping < options.count(); ping++) {
            fill(start, ping, first);
            first = first == 122 ? 65 : first + 1;
            advertise(new RemoteBuffer(memory.address() + startAt, memory.rkey(), size));
            requireStep(awaitReceive(), "the server's go-ahead after its RDMA READ");
            postReceive();
            advertise(new RemoteBuffer(memory.address() + RDMA, memory.rkey(), size));
            requireStep(awaitReceive(), "the server's go-ahead after its RDMA WRITE");
            postReceive();
            if (options.validate() && start.mismatch(echo) != -1) {
                throw new IllegalStateException("data mismatch!");
            }
            if (options.verbose()) {
                out.println("ping data: " + string(echo));
            }
        }
    }

    /** rping's ping text: "rdma-ping-N: " then letters A..z from {@code first}, NUL-terminated. */
    static void fill(MemorySegment buffer, int ping, int first) {
        byte[] header = ("rdma-ping-" + ping + ": ").getBytes(StandardCharsets.US_ASCII);
        int size = (int) buffer.byteSize();
        MemorySegment.copy(header, 0, buffer, ValueLayout.JAVA_BYTE, 0, Math.min(header.length, size - 1));
        int c = first;
        for (int i = header.length; i < size; i++) {
            buffer.set(ValueLayout.JAVA_BYTE, i, (byte) c);
            c = c == 122 ? 65 : c + 1;
        }
        buffer.set(ValueLayout.JAVA_BYTE, size - 1, (byte) 0);
    }

    private void advertise(RemoteBuffer buffer) throws InterruptedException {
        buffer.writeTo(memory.segment(), SENT);
        post(sends.clear().send(SEND_ID).gather(memory, SENT, RemoteBuffer.BYTES).signaled());
        requireStep(awaitSend(), "sending " + buffer);
    }

    private boolean goAhead() throws InterruptedException {
        post(sends.clear().send(SEND_ID).gather(memory, SENT, RemoteBuffer.BYTES).signaled());
        return awaitSend();
    }

    private void post(SendWorkRequests requests) {
        connection.queuePair().postSend(requests);
    }

    private void postReceive() {
        connection.queuePair().postReceive(receives.clear().add(RECEIVE_ID).scatter(memory, RECEIVED,
                RemoteBuffer.BYTES));
    }

    private static void requireStep(boolean done, String step) {
        if (!done) {
            throw new IllegalStateException("disconnected while waiting for " + step);
        }
    }

    /** Waits for the next send-side completion; false if the connection ended (flushed). */
    private boolean awaitSend() throws InterruptedException {
        while (sendsDone == sendsTaken) {
            if (!poll()) {
                return false;
            }
        }
        sendsTaken++;
        return true;
    }

    /** Waits for the next receive; false if the connection ended (flushed). */
    private boolean awaitReceive() throws InterruptedException {
        while (receivesDone == receivesTaken) {
            if (!poll()) {
                return false;
            }
        }
        receivesTaken++;
        return true;
    }

    /**
     * Takes completions (sends and receives can finish in either order); false once work was flushed or the
     * connection ended. The wait ends on DISCONNECTED too, as rping's does (its cm_thread posts the semaphore that the
     * client waits on): a provider that ends a connection without flushing its queue pair cannot hang it. A client
     * that has had no answer yet nudges the server after each second of silence, one nudge at a time (on siw the
     * server may not have read its first message: {@link Connection#nudgePeer}).
     */
    private boolean poll() throws InterruptedException {
        int n;
        while ((n = connection.awaitCompletions(completions, DISCONNECT_CHECK)) == 0) {
            if (connection.isDisconnected()) {
                return false;
            }
            if (!options.server() && receivesDone == 0 && !nudging) {
                connection.nudgePeer(NUDGE_ID);
                nudging = true;
            }
        }
        for (int i = 0; i < n; i++) {
            WorkCompletionStatus status = completions.status(i);
            if (status == WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR) {
                return false;
            }
            if (status != WorkCompletionStatus.SUCCESS) {
                throw new IllegalStateException("completion " + status + ": " + completions.statusText(i));
            }
            if (completions.workRequestId(i) == NUDGE_ID) {
                nudging = false;
            } else if (completions.workRequestId(i) == RECEIVE_ID) {
                if (completions.byteLength(i) != RemoteBuffer.BYTES) {
                    throw new IllegalStateException("Received bogus data, size " + completions.byteLength(i));
                }
                receivesDone++;
            } else {
                sendsDone++;
            }
        }
        return true;
    }

    /**
     * Takes the connection's events on a virtual thread, as rping's cm_thread does: when the peer disconnects,
     * rdma4j answers and the queue pair's posted work is flushed, which ends the waits above.
     */
    private void watchForDisconnect() {
        Connection c = connection;
        watcher = Thread.ofVirtual().name("rping-cm").start(() -> {
            try {
                while (!c.isDisconnected()) {
                    c.nextEvent(Duration.ofSeconds(1)).ifPresent(e -> debug("cm event " + e));
                }
            } catch (InterruptedException | IllegalStateException closed) {
                // The connection was closed: nothing more to watch.
            }
        });
    }

    private void debug(String message) {
        if (options.debug()) {
            System.err.println(message);
        }
    }

    /** The NUL-terminated ASCII string at the start of {@code buffer}. */
    private static String string(MemorySegment buffer) {
        long end = 0;
        while (end < buffer.byteSize() && buffer.get(ValueLayout.JAVA_BYTE, end) != 0) {
            end++;
        }
        return new String(buffer.asSlice(0, end).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII);
    }
}
