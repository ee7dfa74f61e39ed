package io.rdma4j.verbs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Random sequences of verbs calls on the test device, from several threads at once, for {@link FuzzTest}, which runs
 * it in a JVM of its own so that a crash fails the test with the seed instead of killing the suite.
 *
 * <p>Each thread creates, fills, posts, polls, modifies and closes objects that all threads share, in any order and
 * with sizes, offsets, ports and states drawn at random, including closed objects, objects of a second context, and
 * values out of range. The only acceptable outcomes of a call are success or one of the exceptions rdma4j documents
 * ({@link IllegalArgumentException}, {@link IllegalStateException}, {@link IndexOutOfBoundsException} for ranges
 * outside a region, {@link RdmaException}); anything else is a defect, printed with the call. Then everything is
 * closed and the kernel's object counts of this process must be zero.
 *
 * <pre>Fuzzer SEED SECONDS THREADS</pre>
 * Prints one {@code fuzz:} summary line; exits 0, or 2 if a call ended in anything else.
 */
public final class Fuzzer {

    /** The exception types a misused call may end in. */
    private static final List<Class<? extends RuntimeException>> DOCUMENTED = List.of(IllegalArgumentException.class,
            IllegalStateException.class, IndexOutOfBoundsException.class, RdmaException.class);
    private static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private final Context[] contexts;
    private final List<ProtectionDomain> domains = new CopyOnWriteArrayList<>();
    private final List<MemoryRegion> regions = new CopyOnWriteArrayList<>();
    private final List<CompletionQueue> queues = new CopyOnWriteArrayList<>();
    private final List<QueuePair> queuePairs = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
    private final List<String> defects = new CopyOnWriteArrayList<>();
    private final AtomicLong calls = new AtomicLong();

    private Fuzzer(Context... contexts) {
        this.contexts = contexts;
    }

    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        Duration duration = Duration.ofSeconds(Long.parseLong(args[1]));
        int threads = Integer.parseInt(args[2]);
        Context first = TestDevice.open();
        Context second = TestDevice.open();
        Fuzzer fuzzer = new Fuzzer(first, second);
        long deadline = System.nanoTime() + duration.toNanos();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            SplittableRandom random = new SplittableRandom(seed + t);
            running.add(Thread.ofPlatform().name("fuzz-" + t).start(() -> fuzzer.run(random, deadline)));
        }
        for (Thread t : running) {
            t.join();
        }
        first.close();
        second.close();
        List<String> leftovers = new ArrayList<>();
        for (String kind : List.of("qp", "cq", "mr", "pd")) {
            leftovers.addAll(LeftoverResourcesTest.ours(kind));
        }
        System.out.println("fuzz: seed " + seed + ", " + threads + " threads, " + duration.toSeconds() + " s on "
                + TestDevice.device().name() + ": " + fuzzer.calls.get() + " calls, outcomes "
                + new TreeMap<>(fuzzer.outcomes) + ", defects " + fuzzer.defects.size() + ", leftover kernel objects "
                + leftovers.size());
        fuzzer.defects.stream().limit(20).forEach(d -> System.out.println("fuzz defect: " + d));
        leftovers.forEach(l -> System.out.println("fuzz leftover: " + l));
        System.exit(fuzzer.defects.isEmpty() && leftovers.isEmpty() ? 0 : 2);
    }

    private void run(SplittableRandom random, long deadline) {
        SendWorkRequests sends = new SendWorkRequests(1 + random.nextInt(4), random.nextInt(3));
        ReceiveWorkRequests receives = new ReceiveWorkRequests(1 + random.nextInt(4), random.nextInt(3));
        WorkCompletions completions = new WorkCompletions(1 + random.nextInt(8));
        while (System.nanoTime() < deadline) {
            switch (random.nextInt(12)) {
                case 0 -> call("allocate PD", () -> domains.add(context(random).allocateProtectionDomain()));
                case 1 -> call("register memory", () -> regions.add(pick(random, domains).allocateMemory(size(random),
                        ACCESS)));
                case 2 -> call("create CQ", () -> queues.add(context(random).createCompletionQueue((int) size(random))));
                case 3 -> call("create QP", () -> queuePairs.add(pick(random, domains)
                        .queuePair(random.nextBoolean() ? QueuePairType.RELIABLE_CONNECTED
                                : QueuePairType.UNRELIABLE_DATAGRAM)
                        .completionQueue(pick(random, queues))
                        .capabilities(QueuePairCapabilities.defaults().withSendQueue(random.nextInt(40))
                                .withReceiveQueue(random.nextInt(40)).withSendScatterGather(random.nextInt(4))
                                .withReceiveScatterGather(random.nextInt(4)).withInlineData(random.nextInt(2) * 64))
                        .create()));
                case 4 -> call("fill send", () -> fillSend(random, sends));
                case 5 -> call("fill receive", () -> receives.clear().add(random.nextLong())
                        .scatter(pick(random, regions), offset(random), (int) size(random)));
                case 6 -> call("post send", () -> pick(random, queuePairs).postSend(sends));
                case 7 -> call("post receive", () -> pick(random, queuePairs).postReceive(receives));
                case 8 -> call("poll", () -> pick(random, queues).poll(completions));
                case 9 -> call("modify QP", () -> modify(random, pick(random, queuePairs)));
                case 10 -> call("close", () -> closeOne(random));
                default -> call("query QP", () -> pick(random, queuePairs).query());
            }
        }
        sends.close();
        receives.close();
        completions.close();
    }

    private void fillSend(SplittableRandom random, SendWorkRequests sends) {
        sends.clear();
        MemoryRegion region = pick(random, regions);
        switch (random.nextInt(6)) {
            case 0 -> sends.send(1).gather(region, offset(random), (int) size(random)).inline();
            // Inline bytes from raw addresses are refused; from any live segment they are copied into the batch.
            case 4 -> sends.send(5).gatherUnchecked(random.nextLong(), size(random), random.nextInt()).inline();
            case 5 -> sends.send(6).inline(inlineData(random));
            case 1 -> sends.rdmaWrite(2, region.address() + offset(random), region.rkey())
                    .gather(pick(random, regions), offset(random), (int) size(random));
            case 2 -> sends.rdmaRead(3, random.nextLong(), random.nextInt()).gather(region, 0, 8);
            default -> sends.fetchAndAdd(4, region.address(), region.rkey(), 1).gather(region, offset(random), 8);
        }
        if (random.nextBoolean()) {
            sends.signaled();
        }
    }

    /** A segment to send inline: native or heap, of any size up to 4 KiB, or one whose arena is closed. */
    private static java.lang.foreign.MemorySegment inlineData(SplittableRandom random) {
        int size = random.nextInt(0, 4097);
        return switch (random.nextInt(3)) {
            case 0 -> java.lang.foreign.MemorySegment.ofArray(new byte[size]);
            case 1 -> java.lang.foreign.Arena.ofAuto().allocate(size);
            default -> {
                try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
                    yield arena.allocate(size);
                }
            }
        };
    }

    private void modify(SplittableRandom random, QueuePair qp) {
        QueuePairState[] states = QueuePairState.values();
        QueuePairAttributes a = new QueuePairAttributes().state(states[random.nextInt(states.length)]);
        if (random.nextBoolean()) {
            a.port(random.nextInt(-1, 300)).pkeyIndex(random.nextInt(-1, 3)).access(ACCESS);
        }
        if (random.nextBoolean()) {
            a.sendPsn(random.nextInt(1 << 25)).destinationQueuePair(random.nextInt(1 << 25));
        }
        if (random.nextBoolean()) {
            a.timeout(random.nextInt(40)).retryCount(random.nextInt(9)).rnrRetry(random.nextInt(9));
        }
        qp.modify(a);
    }

    private void closeOne(SplittableRandom random) {
        List<? extends AutoCloseable> pool = switch (random.nextInt(4)) {
            case 0 -> domains;
            case 1 -> regions;
            case 2 -> queues;
            default -> queuePairs;
        };
        AutoCloseable victim = pick(random, pool);
        try {
            victim.close();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        if (random.nextInt(4) == 0) {
            pool.remove(victim); // usually keep it, to be used after close
        }
    }

    private Context context(SplittableRandom random) {
        return contexts[random.nextInt(contexts.length)];
    }

    private static long size(SplittableRandom random) {
        return switch (random.nextInt(6)) {
            case 0 -> 0;
            case 1 -> -random.nextInt(1, 100);
            case 2 -> random.nextInt(8) == 0 ? 1L << 40 : random.nextLong(1, 1 << 24);
            default -> random.nextInt(1, 65536);
        };
    }

    private static long offset(SplittableRandom random) {
        return random.nextInt(4) == 0 ? random.nextLong() : random.nextInt(0, 4096);
    }

    private static <T> T pick(SplittableRandom random, List<T> pool) {
        if (pool.isEmpty()) {
            throw new IllegalStateException("nothing to pick yet");
        }
        return pool.get(random.nextInt(pool.size()));
    }

    /** Runs one call and counts its outcome; an undocumented one is a defect. */
    private void call(String name, Runnable call) {
        calls.incrementAndGet();
        String outcome;
        try {
            call.run();
            outcome = "ok";
        } catch (RuntimeException e) {
            outcome = e.getClass().getSimpleName();
            if (DOCUMENTED.stream().noneMatch(d -> d.isInstance(e))) {
                defects.add(name + ": " + e);
            }
        } catch (Error e) {
            outcome = e.getClass().getSimpleName();
            defects.add(name + ": " + e);
        }
        outcomes.computeIfAbsent(outcome, k -> new AtomicLong()).incrementAndGet();
    }
}
