package io.rdma4j.examples;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.cm.ConnectionException;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.messaging.ChannelException;
import io.rdma4j.messaging.MessageChannel;
import io.rdma4j.messaging.MessagingGroup;
import io.rdma4j.messaging.MessagingOptions;
import io.rdma4j.messaging.ProgressMode;
import io.rdma4j.messaging.ReceivedMessage;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A key-value service on rdma4j's messaging layer ({@link MessagingGroup}, {@link MessageChannel}), Java at both
 * ends: PUT and GET are messages; a value above 1 KiB the client fetches with an RDMA READ from the server's store,
 * which the server advertises with a counter in the accept's private data; each client takes its share of the keys
 * with a fetch-and-add on that counter (a request where the device has no atomics, as on iWARP). The client keeps
 * {@code -t} requests in flight, prints its progress every second and checks every value it gets back. Receive
 * buffers, credits, large messages and completions are the layer's.
 */
public final class Kv {

    static final String USAGE = """
            kv -s [-a addr] [-p port] [-k keys] [-S max-value] [-C clients] [-b]
            kv -c -a addr [-p port] [-k keys] [-S max-value] [-t depth] [-P connections] [-D seconds | -n rounds] [-b]
            \t-s / -c\t\tserver / client
            \t-a addr\t\tthe server's address (server: the address to listen on, default all)
            \t-p port\t\tport (default 18530)
            \t-k keys\t\tserver: keys in its store (default 4096); client: its share of them (default 256)
            \t-S bytes\tlargest value (default 65536); values above 1024 bytes are fetched by RDMA READ
            \t-C clients\tserver: stop after this many clients (default: serve until killed)
            \t-t requests\tclient: requests in flight per connection (default 64)
            \t-P connections\tclient: connections, a virtual thread and a share of the keys each (default 1)
            \t-D seconds\tclient: run this long (default 5); -n rounds: PUT and GET each key this often instead
            \t-b\t\tbusy-poll (spends a core) instead of sleeping on completion events""";

    private static final byte PUT = 1, GET = 2, TAKE_ID = 3, OK = 0, VALUE = 1, AT = 2, REFUSED = 3;
    private static final int INLINE = 1024;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final VarHandle COUNTER = ValueLayout.JAVA_LONG.varHandle();

    record Options(boolean server, InetAddress address, int port, int keys, int maxValue, int clients, int depth,
                   int connections, int seconds, long rounds, boolean busy) {

        static Options parse(String... args) {
            Boolean server = null;
            InetAddress address = null;
            long port = 18530, keys = 0, maxValue = 65536, clients = 0, depth = 64, connections = 1, seconds = 5;
            long rounds = 0;
            boolean busy = false;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "-s", "-c" -> server = args[i].equals("-s");
                    case "-a" -> address = CommandLine.host(CommandLine.value(args, ++i));
                    case "-p" -> port = CommandLine.number(args, ++i, 1, 65535);
                    case "-k" -> keys = CommandLine.number(args, ++i, 1, 1 << 20);
                    case "-S" -> maxValue = CommandLine.number(args, ++i, 1, 1 << 24);
                    case "-C" -> clients = CommandLine.number(args, ++i, 1, Integer.MAX_VALUE);
                    case "-t" -> depth = CommandLine.number(args, ++i, 1, 4096);
                    case "-P" -> connections = CommandLine.number(args, ++i, 1, 1 << 16);
                    case "-D" -> seconds = CommandLine.number(args, ++i, 1, 86400);
                    case "-n" -> rounds = CommandLine.number(args, ++i, 1, Integer.MAX_VALUE);
                    case "-b" -> busy = true;
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (server == null || !server && address == null) {
                throw new IllegalArgumentException(server == null ? "-s (server) or -c (client) is required"
                        : "the client needs the server's address (-a)");
            }
            return new Options(server, address, (int) port, (int) (keys > 0 ? keys : server ? 4096 : 256),
                    (int) maxValue, (int) clients, (int) depth, (int) connections, (int) seconds, rounds, busy);
        }
    }

    private final Options options;
    private final PrintStream out;
    /** Called once the server listens (tests start the clients then). */
    Runnable onListening = () -> { };
    /** Counted by each of the client's connections, reported every second. */
    private final LongAdder answered = new LongAdder(), reads = new LongAdder(), valueBytes = new LongAdder();

    Kv(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public static void main(String[] args) throws InterruptedException {
        CommandLine.run("kv", USAGE, args, Options::parse, 1, 1, o -> new Kv(o, System.out).run());
    }

    /** Runs one side; returns the requests served (server) or answered and checked (client). */
    long run() throws InterruptedException {
        try (MessagingGroup group = MessagingGroup.create(options.busy() ? ProgressMode.BUSY_POLLING
                : ProgressMode.EVENT_DRIVEN)) {
            return options.server() ? serve(group) : clients(group);
        }
    }

    /** The server: one virtual thread per client, a store of {@code -k} values READable by clients, a counter. */
    private long serve(MessagingGroup group) throws InterruptedException {
        InetAddress any = options.address() != null ? options.address() : InetAddress.ofLiteral("0.0.0.0");
        AtomicLong served = new AtomicLong();
        try (Acceptor acceptor = Acceptor.listen(new InetSocketAddress(any, options.port()), 128);
             MemoryRegion store = group.protectionDomain(acceptor.context()).allocateMemory(
                     (long) options.keys() * options.maxValue(), EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
             MemoryRegion counter = group.protectionDomain(acceptor.context()).allocateMemory(Long.BYTES,
                     EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_ATOMIC));
             ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            MemorySegment hello = MemorySegment.ofArray(new byte[2 * RemoteBuffer.BYTES + 8]);
            RemoteBuffer.of(store, 0, store.length()).writeTo(hello, 0);
            RemoteBuffer.of(counter, 0, Long.BYTES).writeTo(hello, RemoteBuffer.BYTES);
            hello.set(INT, 2 * RemoteBuffer.BYTES, options.keys());
            hello.set(INT, 2 * RemoteBuffer.BYTES + 4, options.maxValue());
            MessagingOptions setup = MessagingOptions.builder().maxMessageSize(options.maxValue() + 8).connection(
                    ConnectionOptions.builder().privateData(hello.toArray(JAVA_BYTE)).build()).build();
            int[] lengths = new int[options.keys()];
            out.println("serving " + options.keys() + " keys on " + acceptor.localAddress());
            onListening.run();
            for (int accepted = 0; options.clients() == 0 || accepted < options.clients(); ) {
                try {
                    Optional<MessageChannel> channel = group.accept(acceptor, setup, Duration.ofSeconds(1));
                    if (channel.isPresent()) {
                        accepted++;
                        clients.execute(() -> served.addAndGet(serve(channel.get(), store, counter, lengths)));
                    }
                } catch (ConnectionException e) {
                    out.println("a client failed to connect: " + e.getMessage());
                }
            }
        }
        out.println("served " + served + " requests");
        return served.get();
    }

    /** Answers one client's requests in order until it leaves; returns how many. */
    private long serve(MessageChannel channel, MemoryRegion store, MemoryRegion counter, int[] lengths) {
        long requests = 0;
        MemorySegment answer = MemorySegment.ofArray(new byte[8 + INLINE]);
        try (channel) {
            for (;; requests++) {
                int length = 8;
                try (ReceivedMessage request = channel.receive()) {
                    MemorySegment m = request.segment();
                    byte op = m.get(JAVA_BYTE, 0);
                    int key = m.get(INT, 4);
                    long slot = (long) key * options.maxValue(), size = m.byteSize() - 8;
                    answer.set(JAVA_BYTE, 0, OK);
                    if (op == TAKE_ID) {
                        answer.set(LONG, length, (long) COUNTER.getAndAdd(counter.segment(), 0L, 1L));
                        length += Long.BYTES;
                    } else if (key < 0 || key >= lengths.length || op == PUT && size > options.maxValue()) {
                        answer.set(JAVA_BYTE, 0, REFUSED);
                    } else if (op == PUT) {
                        MemorySegment.copy(m, 8, store.segment(), slot, size);
                        lengths[key] = (int) size;
                    } else if (lengths[key] <= INLINE) {
                        answer.set(JAVA_BYTE, 0, VALUE);
                        MemorySegment.copy(store.segment(), slot, answer, length, lengths[key]);
                        length += lengths[key];
                    } else {
                        answer.set(JAVA_BYTE, 0, AT);
                        RemoteBuffer.of(store, slot, lengths[key]).writeTo(answer, length);
                        length += RemoteBuffer.BYTES;
                    }
                }
                channel.send(answer.asSlice(0, length));
            }
        } catch (ChannelException e) {
            if (e.reason() != ChannelException.Reason.PEER_DISCONNECTED) {
                out.println("client " + channel + " failed: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return requests;
    }

    /** The client: {@code -P} connections in one group, a virtual thread each; progress over all every second. */
    private long clients(MessagingGroup group) throws InterruptedException {
        // Connect requests at once: the server accepts one at a time, and a request queued behind too many others
        // outwaited its connect timeout on siw under emulation (200 connections, 32 at once).
        Semaphore connecting = new Semaphore(8);
        List<Future<Long>> connections = new ArrayList<>();
        long start = System.nanoTime();
        Thread reporter = Thread.ofVirtual().name("kv-progress").start(() -> report(start));
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < options.connections(); i++) {
                connections.add(threads.submit(() -> requests(group, connecting)));
            }
        } finally {
            reporter.interrupt();
        }
        long total = 0;
        for (Future<Long> connection : connections) {
            try {
                total += connection.get();
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            }
        }
        long elapsed = System.nanoTime() - start;
        progress(String.format("total %d requests (%d values READ) on %d connections in %.2f s:", total, reads.sum(),
                options.connections(), elapsed / 1e9), total, valueBytes.sum(), elapsed);
        out.println("every value checked");
        return total;
    }

    /** Prints the rates of the last second, every second, until interrupted. */
    private void report(long start) {
        long last = start, lastAnswered = 0, lastBytes = 0;
        try {
            for (;;) {
                Thread.sleep(Duration.ofNanos(Math.max(0, last + 1_000_000_000L - System.nanoTime())));
                long now = System.nanoTime(), answers = answered.sum(), bytes = valueBytes.sum();
                progress(String.format("%5.1f s", (now - start) / 1e9), answers - lastAnswered, bytes - lastBytes,
                        now - last);
                last = now;
                lastAnswered = answers;
                lastBytes = bytes;
            }
        } catch (InterruptedException e) {
            // the run ended
        }
    }

    /**
     * One connection: takes its share of the keys, then runs rounds of a PUT of each key and a GET of each key with
     * {@code -t} requests in flight, and checks each answer, READing the large values, as it comes (in order).
     */
    private long requests(MessagingGroup group, Semaphore connecting) throws InterruptedException {
        // As many receives as requests in flight: the server can always answer, so it never stops taking requests.
        MessagingOptions setup = MessagingOptions.builder().maxMessageSize(options.maxValue() + 8)
                .receiveCredits(Math.max(options.depth(), MessagingOptions.defaults().receiveCredits())).build();
        MessageChannel channel;
        connecting.acquire();
        try {
            channel = group.connect(new InetSocketAddress(options.address(), options.port()), setup,
                    Duration.ofSeconds(30));
        } finally {
            connecting.release();
        }
        try (channel;
             MemoryRegion landing = channel.connection().protectionDomain().allocateMemory(options.maxValue(),
                     EnumSet.of(Access.LOCAL_WRITE))) {
            MemorySegment hello = MemorySegment.ofArray(channel.peerPrivateData());
            int serverKeys = hello.get(INT, 2 * RemoteBuffer.BYTES);
            int serverMaxValue = hello.get(INT, 2 * RemoteBuffer.BYTES + 4);
            if (serverMaxValue < options.maxValue()) {
                throw new IllegalArgumentException("the server keeps values of up to " + serverMaxValue
                        + " bytes, fewer than -S " + options.maxValue());
            }
            MemorySegment request = MemorySegment.ofArray(new byte[8 + options.maxValue()]);
            MemorySegment expected = MemorySegment.ofArray(new byte[8 + options.maxValue()]);
            long id;
            if (channel.capabilities().atomics()) {
                id = channel.fetchAndAdd(RemoteBuffer.readFrom(hello, RemoteBuffer.BYTES), 0, 1);
            } else {
                request.set(JAVA_BYTE, 0, TAKE_ID);
                channel.send(request.asSlice(0, 8));
                try (ReceivedMessage answer = channel.receive()) {
                    id = answer.segment().get(LONG, 8);
                }
            }
            if ((id + 1) * options.keys() > serverKeys) {
                throw new IllegalStateException("client " + id + " finds no " + options.keys() + " keys left of the "
                        + "server's " + serverKeys);
            }
            int first = (int) id * options.keys();
            if (options.connections() <= 16) {
                out.printf("client %d: keys %d..%d on %s%n", id, first, first + options.keys() - 1, channel);
            }
            long[] inFlight = new long[options.depth()]; // operation, key and round of each request, by number
            long sent = 0, done = 0, end = System.nanoTime() + options.seconds() * 1_000_000_000L;
            for (int round = 0; options.rounds() > 0 ? round < options.rounds() : System.nanoTime() < end; round++) {
                for (int n = 0; n < 2 * options.keys() || done < sent; ) {
                    if (n < 2 * options.keys() && sent - done < options.depth()) {
                        byte op = n < options.keys() ? PUT : GET;
                        int key = first + n++ % options.keys();
                        request.set(JAVA_BYTE, 0, op);
                        request.set(INT, 4, key);
                        inFlight[(int) (sent++ % options.depth())] = (long) op << 56 | (long) key << 32 | round;
                        channel.send(request.asSlice(0, 8 + (op == PUT ? fill(request, key, round) : 0)));
                        continue;
                    }
                    long e = inFlight[(int) (done++ % options.depth())];
                    byte op = (byte) (e >>> 56);
                    int key = (int) (e >>> 32) & 0xFF_FFFF;
                    try (ReceivedMessage answer = channel.receive()) {
                        MemorySegment a = answer.segment();
                        byte status = a.get(JAVA_BYTE, 0);
                        if (op == PUT ? status != OK : status != VALUE && status != AT) {
                            throw new IllegalStateException("the server answered status " + status + " to a "
                                    + (op == PUT ? "PUT" : "GET") + " of key " + key);
                        }
                        if (op == GET) {
                            MemorySegment value = a.asSlice(8);
                            if (status == AT) { // the round's READs end before the next round's PUTs overwrite them
                                RemoteBuffer at = RemoteBuffer.readFrom(a, 8);
                                channel.read(at, landing, 0);
                                value = landing.segment().asSlice(0, at.length());
                                reads.increment();
                            }
                            long length = fill(expected, key, round);
                            if (length != value.byteSize() || value.mismatch(expected.asSlice(8, length)) != -1) {
                                throw new IllegalStateException("key " + key + " holds " + value.byteSize()
                                        + " bytes that are not the " + length + " PUT in round " + round);
                            }
                            valueBytes.add(length);
                        }
                    }
                    answered.increment();
                }
            }
            return done;
        }
    }

    private void progress(String label, long requests, long bytes, long nanos) {
        out.printf("%s %10.0f requests/s %9.2f MB/s of values%n", label, requests * 1e9 / nanos, bytes * 1e3 / nanos);
    }

    /**
     * Writes key's value of {@code round} behind the 8 bytes of a request: 1 to -S bytes, spread over the powers of
     * two so that values travel both in answers and by READ. Returns its length.
     */
    private int fill(MemorySegment request, int key, int round) {
        int h = (key * 0x9E3779B9 + round) * 0x85EBCA6B;
        int bits = Integer.remainderUnsigned(h, 33 - Integer.numberOfLeadingZeros(options.maxValue()));
        int length = 1 + Integer.remainderUnsigned(h >>> 7, Math.min(1 << bits, options.maxValue()));
        for (int i = 0; i < length; i++) {
            request.set(JAVA_BYTE, 8 + i, (byte) (i * 31 + key * 7 + round * 13));
        }
        return length;
    }
}
