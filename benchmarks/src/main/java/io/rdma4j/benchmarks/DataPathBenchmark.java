package io.rdma4j.benchmarks;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.AddressVector;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.GidEntry;
import io.rdma4j.verbs.GidType;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.util.EnumSet;
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
 * The data path, one operation per invocation, on a RoCE device named by {@code -Drdma4j.device} (default
 * {@code rxe0}): two RC queue pairs of one process connected through the device, exactly as
 * {@code src/main/c/datapath.c} does in C. {@code critical} switches post and poll to
 * {@code Linker.Option.critical(false)} handles (each value runs in its own JVM).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 2)
public class DataPathBenchmark {

    /** Whether post and poll use {@code critical(false)} downcalls. */
    @Param({"false", "true"})
    public String critical;

    private Context context;
    private CompletionQueue cq;
    private QueuePair requester;
    private QueuePair responder;
    private MemoryRegion memory;
    private SendWorkRequests write;
    private SendWorkRequests send;
    private ReceiveWorkRequests receive;
    private WorkCompletions completions;

    /** Connects the two queue pairs. */
    @Setup
    public void connect() {
        // Before any rdma4j class loads: the choice is a static final of the shim.
        System.setProperty("rdma4j.criticalDowncalls", critical);
        Set<Access> access = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        context = Device.byName(System.getProperty("rdma4j.device", "rxe0")).orElseThrow().open();
        cq = context.createCompletionQueue(64);
        ProtectionDomain pd = context.allocateProtectionDomain();
        memory = pd.allocateMemory(4096, access);
        requester = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        responder = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        GidEntry gid = context.gidTable().stream().filter(g -> g.type() == GidType.ROCE_V2).findFirst().orElseThrow();
        AddressVector self = AddressVector.ofGid(gid.gid(), gid.index(), 1);
        for (QueuePair[] ends : new QueuePair[][] {{requester, responder}, {responder, requester}}) {
            ends[0].initialize(1, access);
            ends[0].readyToReceive(self, ends[1].number(), 0, context.queryPort(1).activeMtu());
            ends[0].readyToSend(0);
        }
        write = new SendWorkRequests(1, 1);
        write.clear().rdmaWrite(1, memory.address() + 2048, memory.rkey()).gather(memory, 0, 8).signaled();
        send = new SendWorkRequests(1, 1);
        send.clear().send(2).gather(memory, 0, 8).signaled();
        receive = new ReceiveWorkRequests(1, 1);
        receive.clear().add(3).scatter(memory, 1024, 64);
        completions = new WorkCompletions(4);
    }

    /** Closes everything. */
    @TearDown
    public void close() {
        write.close();
        send.close();
        receive.close();
        completions.close();
        context.close();
    }

    /** An 8-byte RDMA WRITE, posted and polled until it completes (its ACK came back). */
    @Benchmark
    public long rdmaWrite() {
        requester.postSend(write);
        return awaitCompletions(1);
    }

    /** A receive posted, an 8-byte SEND posted, both completions polled. */
    @Benchmark
    public long sendReceive() {
        responder.postReceive(receive);
        requester.postSend(send);
        return awaitCompletions(2);
    }

    private long awaitCompletions(int expected) {
        long ids = 0;
        for (int seen = 0; seen < expected; ) {
            int n = cq.poll(completions);
            for (int i = 0; i < n; i++) {
                if (!completions.isSuccess(i)) {
                    throw new IllegalStateException(completions.statusText(i));
                }
                ids += completions.workRequestId(i);
            }
            seen += n;
        }
        return ids;
    }
}
