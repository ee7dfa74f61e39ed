package io.rdma4j.benchmarks;

import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.CompletionQueuePoller;
import io.rdma4j.verbs.QueuePairPoster;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletionStatus;
import io.rdma4j.verbs.WorkCompletions;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/**
 * perftest's six basic tests written with rdma4j, so that LabBench can run each beside perftest's own program
 * with the same options and compare: {@code send_lat}, {@code write_lat}, {@code read_lat} (RC ping-pong or
 * READ, the cycle counter read at each post, reported as perftest reports it: {@link LatencyReport}) and
 * {@code send_bw}, {@code write_bw}, {@code read_bw} ({@code -t} requests in flight, one in {@code -Q} signaled,
 * megabytes (2^20 bytes) per second and millions of messages per second from the first post to the last
 * completion). The loops follow perftest's {@code run_iter_*} step by step; what differs: the connection is made
 * with the connection manager (perftest's {@code -R}), the buffers' addresses and the client's closing word to a
 * server that only waits (READ and WRITE tests; it spins on its completion queue meanwhile, as perftest's does:
 * {@link PerfEndpoint#awaitGoodbye}) travel in SENDs instead of over perftest's own exchange, and one completion
 * queue serves both queues. The two tools do not talk to each other.
 * Like a single-threaded application, it posts and polls through a {@link QueuePairPoster} and a
 * {@link CompletionQueuePoller}, which save each call the pin that guards it against a close on another thread.
 *
 * <pre>
 * perf write_lat -s 64 -n 10000               (server)
 * perf write_lat -s 64 -n 10000 192.0.2.1     (client)
 * </pre>
 */
public final class Perf {

    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final VarHandle PROGRESS;

    static {
        try {
            PROGRESS = MethodHandles.lookup().findVarHandle(Perf.class, "progress", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private static final Duration CLIENT_RUN = Duration.ofHours(1);
    /** How long a loop waits for a completion or the peer's next byte before it gives up (a peer gone). */
    private static final long STALL_NANOS = Duration.ofSeconds(30).toNanos();
    /**
     * The longest wait for the JIT after a warm-up: below the 30 s after which a peer gives up (both sides of a
     * ping-pong wait at once; a SEND's receiver spins through the sender's wait).
     */
    private static final Duration JIT_WAIT = Duration.ofSeconds(20);
    /** About how many iterations, or requests, one phase of a warm-up runs (rounded up to whole moderation rounds). */
    private static final int WARMUP_PHASE = 1000;
    /** The largest message of a bandwidth warm-up (see {@link #bandwidth}). */
    static final int WARMUP_SIZE = 4096;

    private final PerfOptions options;
    private final PerfEndpoint endpoint;
    private final QueuePairPoster qp;
    private final CompletionQueuePoller cq;
    private final WorkCompletions completions = new WorkCompletions(32);
    private final int receivesAhead;
    private final double cyclesPerMicrosecond;
    private final PrintStream out;
    /** Receive completions seen. */
    private long received;
    /** Send requests retired: each signaled request's id is the number of requests its completion retires. */
    private long retired;
    /** Send requests posted, and the count up to the last signaled one. */
    private long posted;
    private long signaledUpTo;
    /** A latency test's requests posted, the peer's SENDs consumed, the peer's WRITEs seen. */
    private int sent;
    private int consumed;
    private int seen;
    /** Completions and peer's bytes seen: the watchdog reads it (opaque: a plain store on the loops' side). */
    private long progress;
    /** Set by the watchdog once {@link #progress} has not moved for 30 s: a peer that died or a connection gone. */
    private volatile boolean stalled;

    private Perf(PerfOptions options, PerfEndpoint endpoint, QueuePairPoster qp, CompletionQueuePoller cq,
                 double cyclesPerMicrosecond, PrintStream out) {
        this.options = options;
        this.endpoint = endpoint;
        this.qp = qp;
        this.cq = cq;
        this.receivesAhead = endpoint.receivesAhead();
        this.cyclesPerMicrosecond = cyclesPerMicrosecond;
        this.out = out;
    }

    /** Runs one side of one test; exit 1 on bad options or failure. */
    public static void main(String[] args) throws InterruptedException {
        PerfOptions options;
        try {
            options = PerfOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("perf: " + e.getMessage());
            System.err.println(PerfOptions.USAGE);
            System.exit(1);
            return;
        }
        try {
            run(options, System.out);
        } catch (RuntimeException e) {
            System.err.println("perf " + options.test().command() + ": " + e.getMessage());
            System.exit(1);
        }
    }

    /** Runs one side of {@code options}' test to its end, printing perftest's lines to {@code out}. */
    static void run(PerfOptions options, PrintStream out) throws InterruptedException {
        double cyclesPerMicrosecond = Cycles.perMicrosecond();
        try (PerfEndpoint endpoint = PerfEndpoint.open(options);
             QueuePairPoster qp = endpoint.queuePair().confinedPoster();
             CompletionQueuePoller cq = endpoint.completionQueue().confinedPoller()) {
            Perf perf = new Perf(options, endpoint, qp, cq, cyclesPerMicrosecond, out);
            perf.header();
            perf.run();
        }
    }

    private void header() {
        out.printf(Locale.ROOT, """
                ---------------------------------------------------------------------------------------
                 rdma4j Perf %s (%s)   Device : %s   Connection type : RC   rdma_cm QPs : ON
                 TX depth : %d   CQ Moderation : %d   RX depth : %d   Max inline data : %d[B]   Outstand reads : %d
                 warm-up iterations : %d   cycles per usec : %.1f
                ---------------------------------------------------------------------------------------
                """, options.test().command(), options.isServer() ? "server" : "client",
                endpoint.deviceName(), options.txDepth(), options.cqModeration(),
                receivesAhead, options.inlineSize(), options.outstandingReads(),
                options.warmup(), cyclesPerMicrosecond);
    }

    private void run() throws InterruptedException {
        if (options.isServer() && options.test().passiveServer()) {
            endpoint.awaitGoodbye(CLIENT_RUN);
            return;
        }
        RemoteBuffer peer = endpoint.peer();
        Kind kind = switch (options.test()) {
            case SEND_LAT, SEND_BW -> (b, id) -> b.send(id);
            case WRITE_LAT, WRITE_BW -> (b, id) -> b.rdmaWrite(id, peer.address(), peer.rkey());
            case READ_LAT, READ_BW -> (b, id) -> b.rdmaRead(id, peer.address(), peer.rkey());
        };
        Thread watchdog = startWatchdog();
        try (Requests requests = new Requests(kind, options.size())) {
            switch (options.test()) {
                case SEND_LAT -> report(latency(this::sendLatency, requests), true);
                case WRITE_LAT -> report(latency(this::writeLatency, requests), true);
                case READ_LAT -> report(latency(this::readLatency, requests), false);
                case SEND_BW -> {
                    if (options.isServer()) {
                        receiveBandwidth();
                    } else {
                        bandwidth(requests);
                    }
                }
                case WRITE_BW, READ_BW -> bandwidth(requests);
            }
            if (options.test().passiveServer()) {
                endpoint.sayGoodbye();
            }
        } finally {
            watchdog.interrupt();
        }
    }

    /**
     * Runs a latency test's loop: the warm-up in phases of about {@link #WARMUP_PHASE} iterations through the same
     * method as the measured run (so that the JIT has seen the loop end, as in {@link #bandwidth}), then a wait for
     * the JIT to finish what the warm-up gave it ({@link JitQuiet}), then the measured iterations. Without the wait,
     * the compiler threads (on the loop's CPU under {@code taskset}) still compiled through the measured READs of the
     * lab's rxe0 and took the CPU from the loop for 8 ms at a time, ~30 times in 10,000 iterations (an ftrace of
     * the client: benchmarks/results/2026-12-06-lab-rxe-read-jit.md). The two sides of a ping-pong pause at the same
     * turn, each in an iteration the report leaves out: the side that posts first after its request
     * {@code warmup - 1} went out, the other after its answer {@code warmup - 2}.
     */
    private long[] latency(LatencyLoop loop, Requests requests) throws InterruptedException {
        long[] postedAt = new long[options.total()];
        int warmupEnd = postsFirst() ? options.warmup() : Math.max(0, options.warmup() - 1);
        for (int end = 0; end < warmupEnd; ) {
            end = Math.min(warmupEnd, end + WARMUP_PHASE);
            loop.run(requests, postedAt, end);
        }
        if (options.warmup() > 0) {
            awaitJit();
        }
        loop.run(requests, postedAt, postedAt.length);
        return postedAt;
    }

    /**
     * Waits for the JIT to finish what the warm-up gave it ({@link JitQuiet}), at most {@link #JIT_WAIT}, and prints
     * how long it took: a run that began with the compiler still busy says so.
     */
    private void awaitJit() throws InterruptedException {
        double seconds = JitQuiet.await(JIT_WAIT).toMillis() / 1000.0;
        out.printf(Locale.ROOT, seconds < JIT_WAIT.toSeconds() ? " JIT quiet after %.1f s of waiting%n"
                : " JIT still compiling after %.1f s of waiting%n", seconds);
    }

    /**
     * Whether this side posts the latency test's first request, as in perftest: the client of {@code send_lat}, the
     * server of {@code write_lat}, the client of {@code read_lat} (its server posts nothing). The other side waits for
     * the peer's first message before it posts.
     */
    private boolean postsFirst() {
        return options.test() == PerfOptions.Test.WRITE_LAT ? options.isServer() : !options.isServer();
    }

    /** One latency test's loop, run until {@code until} requests are posted, and to the test's end at the last. */
    private interface LatencyLoop {
        void run(Requests requests, long[] postedAt, int until);
    }

    /** perftest's {@code run_iter_lat_send}: the server receives first; each side sends when it has received. */
    private void sendLatency(Requests requests, long[] postedAt, int until) {
        int iterations = postedAt.length;
        boolean postsFirst = postsFirst();
        while (sent < until || (until == iterations && consumed < iterations)) {
            if (consumed < iterations && !(sent < 1 && postsFirst)) {
                while (received == consumed) {
                    poll();
                }
                consumed++;
            }
            if (sent < iterations) {
                postedAt[sent++] = Cycles.now();
                requests.post();
                awaitSignaled();
            }
        }
    }

    /**
     * perftest's {@code run_iter_lat_write}: each side WRITEs its count into the last byte of the peer's slot and
     * spins on the last byte of its own until the peer's count arrives there; the server writes first.
     */
    private void writeLatency(Requests requests, long[] postedAt, int until) {
        int iterations = postedAt.length;
        MemorySegment memory = endpoint.buffer().segment();
        long arrives = endpoint.slot() + options.size() - 1;
        long leaves = options.size() - 1;
        boolean postsFirst = postsFirst();
        while (sent < until || (until == iterations && (retired < iterations || seen < iterations))) {
            if (seen < iterations && !(sent < 1 && postsFirst)) {
                seen++;
                while ((byte) BYTE.getVolatile(memory, arrives) != (byte) seen) {
                    idle("the peer's next WRITE");
                }
                progress();
            }
            if (sent < iterations) {
                postedAt[sent] = Cycles.now();
                BYTE.setRelease(memory, leaves, (byte) ++sent);
                requests.post();
            }
            awaitSignaled();
        }
    }

    /** perftest's {@code run_iter_lat}: one READ at a time. */
    private void readLatency(Requests requests, long[] postedAt, int until) {
        while (sent < until) {
            postedAt[sent++] = Cycles.now();
            requests.post();
            awaitSignaled();
        }
    }

    /**
     * perftest's {@code run_iter_bw} after a warm-up. The clock starts at the first measured post, as perftest's does
     * at its first post, with the warm-up's requests all retired (left in flight, their transfers would count as
     * measured time: half of a 100-iteration run of 1 MiB). The warm-up runs in phases of whole moderation rounds,
     * each ending as the measured run ends (its last request signaled, all retired), through the same method: the
     * end of a phase is then a branch the JIT has seen taken. Warmed up in one phase, that branch was taken once, at
     * the warm-up's end, as an uncommon trap: the loop was deoptimized and the measured run began interpreted until
     * it was compiled again (measured: about a second of a 20,000-request run under emulation). Between warm-up and
     * run, the JIT finishes what the warm-up gave it ({@link #awaitJit}). The warm-up's requests carry at most
     * {@link #WARMUP_SIZE} bytes: the JIT needs about 100,000 passes through the loop whatever the size (fewer, and it
     * compiles during the measured run, on the CPU the loop runs on), and the Java code does not depend on the size;
     * 100,000 transfers of 1 MiB would take over 20 minutes on the lab's rxe0.
     */
    private void bandwidth(Requests requests) throws InterruptedException {
        int phase = options.cqModeration() * Math.ceilDiv(WARMUP_PHASE, options.cqModeration());
        try (Requests warmup = new Requests(requests.kind, Math.min(options.size(), WARMUP_SIZE))) {
            for (int end = 0; end < options.warmup(); ) {
                end = Math.min(options.warmup(), end + phase);
                warmup.startPhase(end);
                keepInFlight(warmup, end);
            }
        }
        if (options.warmup() > 0) {
            awaitJit();
        }
        requests.startPhase(options.total());
        long start = Cycles.now();
        keepInFlight(requests, options.total());
        reportBandwidth(Cycles.now() - start);
    }

    /** Keeps {@code -t} requests in flight until {@code until} requests are posted and retired. */
    private void keepInFlight(Requests requests, int until) {
        while (retired < until) {
            while (posted < until && posted - retired < options.txDepth()) {
                requests.post();
            }
            poll();
        }
    }

    /** perftest's {@code run_iter_bw_server}: receives, posting each receive again while more are to come. */
    private void receiveBandwidth() {
        long start = 0;
        while (received < options.total()) {
            poll();
            if (start == 0 && received > options.warmup()) {
                start = Cycles.now();
            }
        }
        reportBandwidth(Cycles.now() - start);
    }

    /** Polls once; counts receives (posting the next while the test needs more) and retired sends. */
    private void poll() {
        int n = cq.poll(completions);
        if (n == 0) {
            idle("a completion");
            return;
        }
        progress();
        for (int i = 0; i < n; i++) {
            long id = completions.workRequestId(i);
            if (!completions.isSuccess(i)) {
                if (id == PerfEndpoint.RECEIVE_ID && received >= options.total()
                        && completions.status(i) == WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR) {
                    // Every receive the test needs is in, and the peer, done, has disconnected: the spare receives
                    // are flushed. Seen on siw0 in CI when that flush came in the same poll as the last receive.
                    return;
                }
                throw new IllegalStateException((id == PerfEndpoint.RECEIVE_ID ? "a receive" : "a send request")
                        + " failed after " + received + " receives and " + retired + " sends: "
                        + completions.statusText(i));
            }
            if (id == PerfEndpoint.RECEIVE_ID) {
                // Posted again even when no more are needed: stopping short would be a branch first taken in the
                // last iterations, deoptimizing the loop there (spare receives are flushed at close).
                received++;
                qp.postReceive(endpoint.receive());
            } else {
                retired += id;
            }
        }
    }

    /**
     * A fruitless spin: gives up once the watchdog has seen no progress for 30 s. The loops never read the clock
     * (microseconds a read under emulation) and take no branch of their own that only a long wait would take: such
     * a branch, never taken while the JIT compiled the loop, deoptimizes it when it is, and the run goes on
     * interpreted (seen in the lab's latency runs).
     */
    private void idle(String awaited) {
        if (stalled) {
            throw new IllegalStateException("waited 30 s for " + awaited + " after " + received + " receives and "
                    + retired + " sends: is the peer gone?" + endpoint.tcpQueues());
        }
    }

    private void progress() {
        PROGRESS.setOpaque(this, progress + 1);
    }

    /** Checks {@link #progress} once a second from a daemon thread; sets {@link #stalled} after 30 s without. */
    private Thread startWatchdog() {
        return Thread.ofPlatform().daemon().name("perf-watchdog").start(() -> {
            long seen = -1;
            long since = System.nanoTime();
            while (!stalled) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
                long now = (long) PROGRESS.getOpaque(this);
                if (now != seen) {
                    seen = now;
                    since = System.nanoTime();
                } else if (System.nanoTime() - since > STALL_NANOS) {
                    stalled = true;
                }
            }
        });
    }

    /** Polls until the last signaled request is retired. */
    private void awaitSignaled() {
        while (retired < signaledUpTo) {
            poll();
        }
    }

    private void report(long[] all, boolean roundTrip) {
        long[] postedAt = Arrays.copyOfRange(all, options.warmup(), all.length);
        if (options.unsorted()) {
            LatencyReport.printUnsorted(out, postedAt, roundTrip, cyclesPerMicrosecond);
        }
        LatencyReport.of(options.size(), postedAt, roundTrip, cyclesPerMicrosecond).print(out);
    }

    private void reportBandwidth(long cycles) {
        double micros = cycles / cyclesPerMicrosecond;
        int iterations = options.iterations();
        out.println(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]");
        out.printf(Locale.ROOT, " %-10d %-10d       %-9.2f            %-9.6f%n", options.size(), iterations,
                (double) options.size() * iterations / micros * 1e6 / (1 << 20), iterations / micros);
    }

    /** How one test's request is made: its opcode and target, given the batch and the request id. */
    private interface Kind {
        SendWorkRequests add(SendWorkRequests batch, long id);
    }

    /**
     * The test's request, of {@code size} bytes, in prepared batches of one: unsignaled, signaled (retiring {@code -Q}
     * requests), and the last of the current phase (retiring what is left of it: the signaled batch when the phase is
     * whole moderation rounds), so that the loops post without building anything. Moderation counts within a phase; a
     * phase ends with nothing in flight. Latency tests run warm-up and measurement as one phase.
     */
    private final class Requests implements AutoCloseable {
        private final Kind kind;
        private final int size;
        private final SendWorkRequests unsignaled;
        private final SendWorkRequests signaled;
        private SendWorkRequests phaseLast;
        private long phaseStart;
        private long phaseEnd;

        Requests(Kind kind, int size) {
            this.kind = kind;
            this.size = size;
            unsignaled = prepared(0, false);
            signaled = prepared(options.cqModeration(), true);
            phaseLast = signaled;
            startPhase(options.total());
        }

        /** Starts a phase that ends once {@code end} requests have been posted in all. */
        void startPhase(long end) {
            closePhaseLast();
            phaseStart = posted;
            phaseEnd = end;
            int remainder = (int) ((end - posted) % options.cqModeration());
            phaseLast = remainder == 0 ? signaled : prepared(remainder, true);
        }

        private SendWorkRequests prepared(long id, boolean signal) {
            SendWorkRequests batch = kind.add(new SendWorkRequests(1, 1), id).gather(endpoint.buffer(), 0, size);
            if (signal) {
                batch.signaled();
            }
            if (size <= options.inlineSize() && !options.test().reads()) {
                batch.inline();
            }
            return batch;
        }

        /** Posts the next request. */
        void post() {
            posted++;
            if (posted == phaseEnd) {
                qp.postSend(phaseLast);
                signaledUpTo = posted;
            } else if ((posted - phaseStart) % options.cqModeration() == 0) {
                qp.postSend(signaled);
                signaledUpTo = posted;
            } else {
                qp.postSend(unsignaled);
            }
        }

        private void closePhaseLast() {
            if (phaseLast != signaled) {
                phaseLast.close();
            }
        }

        @Override
        public void close() {
            closePhaseLast();
            unsignaled.close();
            signaled.close();
        }
    }
}
