package io.rdma4j.benchmarks;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.CompletionQueuePoller;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.QueuePairPoster;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost rdma4j adds to a post and a poll, without a device or an emulator: with the stub of
 * {@code src/main/c/stub-provider.c} loaded in its place ({@link StubProvider}, run by {@link HostBench}), rdma4j's own
 * {@link QueuePair#postSend} and {@link CompletionQueue#poll} call the stub's provider functions through the
 * context's ops table exactly as they call a real provider's; likewise the registration of 4 KiB (the stub's
 * registration is a calloc: what is left is rdma4j's own cost and the memory's), and of a queue pair's create +
 * close. {@code src/main/c/stub-loops.c} runs the same seven loops in C against the same stub. The {@code Confined}
 * cases post and poll through a {@link QueuePairPoster} and a {@link CompletionQueuePoller} (one pin held for the
 * thread) instead of the queues' own methods (a pin per call). {@code critical} switches post and poll to
 * {@code Linker.Option.critical(false)} handles (each value runs in its own JVM).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class HostDataPathBenchmark {

    /** Work requests in the chained cases, as in stub-loops.c. */
    static final int CHAIN = 16;
    /** The created queue pairs' capabilities, as in stub-loops.c and Registration. */
    private static final QueuePairCapabilities CAPABILITIES = QueuePairCapabilities.defaults();

    /** Whether post and poll use {@code critical(false)} downcalls. */
    @Param({"false", "true"})
    public String critical;

    private Context context;
    private CompletionQueue cq;
    private QueuePair qp;
    private QueuePairPoster poster;
    private CompletionQueuePoller poller;
    private SendWorkRequests one;
    private SendWorkRequests chain;
    private SendWorkRequests signaled;
    private SendWorkRequests refilled;
    private WorkCompletions completions;
    private MemoryRegion memory;
    private ProtectionDomain pd;
    private MemorySegment applicationMemory;

    /** Opens the stub device and fills the three batches once, as the C loops fill their requests once. */
    @Setup
    public void open() {
        // Before any rdma4j class loads: the choice is a static final of the shim.
        System.setProperty("rdma4j.criticalDowncalls", critical);
        StubProvider.loadIntoThisProcess();
        context = Device.byName("stub0").orElseThrow().open();
        cq = context.createCompletionQueue(64);
        pd = context.allocateProtectionDomain();
        applicationMemory = Arena.ofAuto().allocate(4096, 4096);
        memory = pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE));
        qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        one = new SendWorkRequests(1, 1);
        one.rdmaWrite(1, memory.address() + 2048, memory.rkey()).gather(memory, 0, 8);
        chain = new SendWorkRequests(CHAIN, 1);
        signaled = new SendWorkRequests(CHAIN, 1);
        for (int i = 0; i < CHAIN; i++) {
            chain.rdmaWrite(i, memory.address() + 2048, memory.rkey()).gather(memory, 0, 8);
            signaled.rdmaWrite(i, memory.address() + 2048, memory.rkey()).gather(memory, 0, 8).signaled();
        }
        refilled = new SendWorkRequests(CHAIN, 1);
        completions = new WorkCompletions(CHAIN);
        // JMH runs a thread-scoped state's setup on the thread that runs the benchmark: the posters' owner.
        poster = qp.confinedPoster();
        poller = cq.confinedPoller();
    }

    /** Closes everything. */
    @TearDown
    public void close() {
        poster.close();
        poller.close();
        one.close();
        chain.close();
        signaled.close();
        refilled.close();
        completions.close();
        context.close();
    }

    /** One unsignaled RDMA WRITE with one gather entry. */
    @Benchmark
    public void postOne() {
        qp.postSend(one);
    }

    /** A chain of 16 unsignaled RDMA WRITEs in one post. */
    @Benchmark
    public void postChainOf16() {
        qp.postSend(chain);
    }

    /** A chain of 16 signaled RDMA WRITEs, then their 16 completions polled and read (wrId, status, byteLen). */
    @Benchmark
    public long postAndPoll16() {
        qp.postSend(signaled);
        return drain(false);
    }

    /** {@link #postOne()} through the thread's {@link QueuePairPoster}. */
    @Benchmark
    public void postOneConfined() {
        poster.postSend(one);
    }

    /** {@link #postChainOf16()} through the thread's {@link QueuePairPoster}. */
    @Benchmark
    public void postChainOf16Confined() {
        poster.postSend(chain);
    }

    /** {@link #postAndPoll16()} through the thread's {@link QueuePairPoster} and {@link CompletionQueuePoller}. */
    @Benchmark
    public long postAndPoll16Confined() {
        poster.postSend(signaled);
        return drain(true);
    }

    /**
     * A chain of 16 unsignaled RDMA WRITEs filled anew, each from its own 8 bytes of the region, then posted: what a
     * loop pays whose requests change from post to post.
     */
    @Benchmark
    public void refillAndPost16() {
        qp.postSend(refill());
    }

    /** {@link #refillAndPost16()} through the thread's {@link QueuePairPoster}. */
    @Benchmark
    public void refillAndPost16Confined() {
        poster.postSend(refill());
    }

    private SendWorkRequests refill() {
        refilled.clear();
        long remote = memory.address() + 2048;
        int rkey = memory.rkey();
        for (int i = 0; i < CHAIN; i++) {
            refilled.rdmaWrite(i, remote + 8L * i, rkey).gather(memory, 8L * i, 8);
        }
        return refilled;
    }

    /** Polls the 16 completions of {@link #signaled} and reads them. */
    private long drain(boolean confined) {
        long acc = 0;
        for (int seen = 0; seen < CHAIN; ) {
            int n = confined ? poller.poll(completions) : cq.poll(completions);
            for (int i = 0; i < n; i++) {
                if (!completions.isSuccess(i)) {
                    throw new IllegalStateException(completions.statusText(i));
                }
                acc += completions.workRequestId(i) + completions.byteLength(i);
            }
            seen += n;
        }
        return acc;
    }

    /** The control path beside it: {@code registerMemory} + close of 4 KiB of the application's memory. */
    @Benchmark
    public void registerAndClose4K() {
        pd.registerMemory(applicationMemory, Set.of(Access.LOCAL_WRITE)).close();
    }

    /** {@code allocateMemory(4096)} + close: the memory's allocation and zeroing, registration, deregistration. */
    @Benchmark
    public void allocateAndClose4K() {
        pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE)).close();
    }

    /** An RC queue pair's create + close: the builder, the verb's attributes, the {@code QueuePair} and its close. */
    @Benchmark
    public void createAndCloseQueuePair() {
        pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).capabilities(CAPABILITIES).create().close();
    }
}
