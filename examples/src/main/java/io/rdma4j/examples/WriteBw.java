package io.rdma4j.examples;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.cm.Connector;
import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;

/**
 * RDMA WRITE bandwidth over the connection manager ({@link Connector}, {@link Acceptor}), Java at both ends. The
 * server registers a buffer and advertises it in the accept's private data ({@link RemoteBuffer}); the client keeps
 * {@code -t} WRITEs of {@code -S} bytes in flight into it for {@code -D} seconds (or {@code -n} writes), prints its
 * progress every second and a summary, then SENDs its totals; the server checks that its buffer holds the client's
 * pattern and prints the same summary. (perftest's {@code ib_write_bw} measures the same with its own exchange.)
 *
 * <pre>
 * write-bw -s [-a addr] [-p port] [-S size]
 * write-bw -c -a addr [-p port] [-S size] [-t tx-depth] [-D seconds | -n writes]
 * </pre>
 */
public final class WriteBw {

    static final String USAGE = """
            write-bw -s [-a addr] [-p port] [-S size]
            write-bw -c -a addr [-p port] [-S size] [-t tx-depth] [-D seconds | -n writes]
            \t-s\t\tserver: advertise a buffer, verify it when the client is done
            \t-c\t\tclient: RDMA WRITE into the server's buffer
            \t-a addr\t\tthe server's address (server: the address to listen on, default all)
            \t-p port\t\tport (default 18520)
            \t-S size\t\tbytes per WRITE (default 65536; the server's buffer must be as large)
            \t-t depth\tWRITEs in flight (default 128)
            \t-D seconds\tduration (default 5)
            \t-n writes\tstop after this many WRITEs instead""";

    /** The client's last message: its totals, 16 bytes (writes, bytes), little-endian. */
    private static final int TOTALS = 16;
    private static final long WRITE_ID = 1;
    private static final long TOTALS_ID = 2;

    /** The options, with their defaults. */
    record Options(boolean server, InetAddress address, int port, int size, int depth, int seconds, long writes) {

        static Options parse(String... args) {
            Boolean server = null;
            InetAddress address = null;
            int port = 18520;
            int size = 65536;
            int depth = 128;
            int seconds = 5;
            long writes = 0;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "-s" -> server = true;
                    case "-c" -> server = false;
                    case "-a" -> address = CommandLine.host(CommandLine.value(args, ++i));
                    case "-p" -> port = (int) CommandLine.number(args, ++i, 1, 65535);
                    case "-S" -> size = (int) CommandLine.number(args, ++i, 1, 1 << 30);
                    case "-t" -> depth = (int) CommandLine.number(args, ++i, 1, 8192);
                    case "-D" -> seconds = (int) CommandLine.number(args, ++i, 1, 86400);
                    case "-n" -> writes = CommandLine.number(args, ++i, 1, Long.MAX_VALUE);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (server == null) {
                throw new IllegalArgumentException("-s (server) or -c (client) is required");
            }
            if (!server && address == null) {
                throw new IllegalArgumentException("the client needs the server's address (-a)");
            }
            return new Options(server, address, port, size, depth, seconds, writes);
        }
    }

    private final Options options;
    private final PrintStream out;
    /** Called once the server listens (tests start the client then). */
    Runnable onListening = () -> { };

    WriteBw(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /** Runs one side; exit 1 on bad options or failure. */
    public static void main(String[] args) throws InterruptedException {
        CommandLine.run("write-bw", USAGE, args, Options::parse, 1, 1, o -> new WriteBw(o, System.out).run());
    }

    /** Runs one side to completion; returns the bytes written (client) or verified (server). */
    long run() throws InterruptedException {
        return options.server() ? serve() : write();
    }

    /** The server: one client, whose WRITEs land in {@code buffer}; its totals arrive in a SEND at the end. */
    private long serve() throws InterruptedException {
        InetAddress any = options.address() != null ? options.address() : InetAddress.ofLiteral("0.0.0.0");
        try (Acceptor acceptor = Acceptor.listen(new InetSocketAddress(any, options.port()), 1);
             ProtectionDomain pd = acceptor.context().allocateProtectionDomain();
             MemoryRegion buffer = pd.allocateMemory(options.size() + TOTALS,
                     EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
             ReceiveWorkRequests receive = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(1)) {
            ConnectionOptions setup = ConnectionOptions.builder().protectionDomain(pd).completionEvents(true)
                    .privateData(RemoteBuffer.of(buffer, 0, options.size()).toBytes())
                    .onQueuePair(qp -> qp.postReceive(receive.clear().add(TOTALS_ID)
                            .scatter(buffer, options.size(), TOTALS)))
                    .build();
            out.println("waiting for a client on " + acceptor.localAddress());
            onListening.run();
            Optional<Connection> accepted = Optional.empty();
            while (accepted.isEmpty()) {
                accepted = acceptor.accept(setup, Duration.ofSeconds(1));
            }
            try (Connection connection = accepted.get()) {
                if (connection.awaitCompletions(completions, Duration.ofHours(24)) != 1) {
                    throw new IllegalStateException("the client's totals did not arrive");
                }
                if (!completions.isSuccess(0)) {
                    throw new IllegalStateException("the client's totals did not arrive: " + completions.statusText(0));
                }
                MemorySegment totals = buffer.segment().asSlice(options.size(), TOTALS);
                long writes = totals.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
                long bytes = totals.get(ValueLayout.JAVA_LONG_UNALIGNED, 8);
                long size = bytes / Math.max(1, writes);
                if (size > options.size() || pattern(size).mismatch(buffer.segment().asSlice(0, size)) != -1) {
                    throw new IllegalStateException("the buffer does not hold the client's WRITEs of " + size
                            + " bytes");
                }
                out.printf("received %d WRITEs of %d bytes (%d bytes) from %s; the buffer holds the client's data%n",
                        writes, size, bytes, connection.peerAddress());
                return bytes;
            }
        }
    }

    /** The client: WRITEs with {@code -t} in flight, progress every second, then the totals. */
    private long write() throws InterruptedException {
        ConnectionOptions setup = ConnectionOptions.builder()
                .capabilities(QueuePairCapabilities.defaults().withSendQueue(options.depth() + 1).withReceiveQueue(1))
                .completionQueueSize(options.depth() + 1).build();
        try (Connection connection = Connector.connect(new InetSocketAddress(options.address(), options.port()),
                setup, Duration.ofSeconds(30));
             MemoryRegion local = connection.protectionDomain().allocateMemory(Math.max(options.size(), TOTALS),
                     EnumSet.of(Access.LOCAL_WRITE));
             SendWorkRequests writeOne = new SendWorkRequests(1, 1);
             SendWorkRequests totals = new SendWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(options.depth())) {
            RemoteBuffer target = RemoteBuffer.fromBytes(connection.peerPrivateData());
            if (target.length() < options.size()) {
                throw new IllegalArgumentException("the server's buffer has " + target.length()
                        + " bytes, fewer than -S " + options.size());
            }
            local.segment().asSlice(0, options.size()).copyFrom(pattern(options.size()));
            writeOne.rdmaWrite(WRITE_ID, target.address(), target.rkey()).gather(local, 0, options.size())
                    .signaled();
            long limit = options.writes() > 0 ? options.writes() : Long.MAX_VALUE;
            long start = System.nanoTime();
            long end = options.writes() > 0 ? Long.MAX_VALUE : start + options.seconds() * 1_000_000_000L;
            long lastReport = start;
            long reportedWrites = 0;
            long posted = 0;
            long completed = 0;
            // The clock is read once per round, not per WRITE: it costs microseconds under emulation.
            long now = start;
            while (completed < posted || (posted < limit && now < end)) {
                // Keep -t WRITEs in flight while there is time (or writes) left.
                while (posted - completed < options.depth() && posted < limit && now < end) {
                    connection.queuePair().postSend(writeOne);
                    posted++;
                }
                int n = connection.completionQueue().poll(completions);
                for (int i = 0; i < n; i++) {
                    if (!completions.isSuccess(i)) {
                        throw new IllegalStateException("WRITE " + (completed + i) + " failed: "
                                + completions.statusText(i));
                    }
                }
                completed += n;
                now = System.nanoTime();
                if (now - lastReport >= 1_000_000_000L) {
                    progress(String.format("%5.1f s", (now - start) / 1e9), completed - reportedWrites,
                            now - lastReport);
                    lastReport = now;
                    reportedWrites = completed;
                }
            }
            long elapsed = System.nanoTime() - start;
            long bytes = completed * options.size();
            progress(String.format("total %d WRITEs of %d bytes in %.2f s:", completed, options.size(),
                    elapsed / 1e9), completed, elapsed);
            local.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, completed);
            local.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8, bytes);
            connection.queuePair().postSend(totals.send(TOTALS_ID).gather(local, 0, TOTALS).signaled());
            while (connection.completionQueue().poll(completions) == 0) {
                Thread.onSpinWait();
            }
            if (!completions.isSuccess(0)) {
                throw new IllegalStateException("the totals were not sent: " + completions.statusText(0));
            }
            return bytes;
        }
    }

    /** Prints {@code label} and the rate of {@code writes} WRITEs in {@code nanos}. */
    private void progress(String label, long writes, long nanos) {
        double seconds = nanos / 1e9;
        out.printf("%s %10.2f MB/s %12.0f WRITEs/s%n", label, writes * (double) options.size() / seconds / 1e6,
                writes / seconds);
    }

    /** The bytes every WRITE carries: a pattern the server can check without knowing more than the size. */
    static MemorySegment pattern(long size) {
        byte[] bytes = new byte[(int) size];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        return MemorySegment.ofArray(bytes);
    }
}
