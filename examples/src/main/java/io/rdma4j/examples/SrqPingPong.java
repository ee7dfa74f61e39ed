package io.rdma4j.examples;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.SharedReceiveQueue;
import io.rdma4j.verbs.WorkCompletions;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code ibv_srq_pingpong} in Java: same options, TCP exchange and output. {@code -q} RC queue pairs (default 16)
 * per side take their receives from one shared receive queue of {@code -r} entries; the sides swap one
 * "LID:QPN:PSN:GID" per queue pair, and every pair ping-pongs at once, {@code -n} exchanges in all. A completion
 * finds its queue pair by QP number; the shared queue is topped up once only as many receives as pairs remain.
 *
 * <pre>
 * srq-pingpong [-d dev] [-i port] [-g gid-idx] [-s size] [-m mtu] [-q num-qp] [-r rx-depth] [-n iters] [-l sl]
 *              [-e] [-c] [-p tcp-port] [server]
 * </pre>
 */
public final class SrqPingPong {

    static final PingPongOptions.Tool TOOL = PingPongOptions.Tool.SRQ;
    /** ibv_srq_pingpong's MAX_QP: it always swaps this many addresses (unused ones zero), and -q stays below it. */
    static final int MAX_QP = 256;

    private final PingPongOptions options;

    SrqPingPong(PingPongOptions options) {
        this.options = options;
    }

    /** Runs one side; exit 1 on bad options or failure, as the C tool. */
    public static void main(String[] args) throws InterruptedException {
        CommandLine.run("srq-pingpong", PingPongOptions.usage(TOOL), args, a -> PingPongOptions.parse(TOOL, a), 1, 1,
                options -> new SrqPingPong(options).run(System.out));
    }

    /** Runs one side to completion; returns the microseconds per iteration. */
    double run(PrintStream out) throws IOException, InterruptedException {
        int pairs = options.queuePairs();
        try (PingPongDevice device = PingPongDevice.open(options, options.rxDepth() + pairs);
             SendWorkRequests send = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receive = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(options.rxDepth() + pairs)) {
            ProtectionDomain pd = device.protectionDomain();
            MemoryRegion buffer = pd.allocateMemory(options.size(), Set.of(Access.LOCAL_WRITE));
            buffer.segment().fill((byte) 0x7b);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(options.rxDepth(), 1);
            List<QueuePair> qps = new ArrayList<>();
            Map<Integer, Integer> indexByNumber = new HashMap<>();
            List<PingPongWire.Destination> mine = new ArrayList<>();
            for (int i = 0; i < pairs; i++) {
                QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(device.completionQueue())
                        .sharedReceiveQueue(srq).capabilities(QueuePairCapabilities.defaults().withSendQueue(1)
                                .withReceiveQueue(0).withReceiveScatterGather(0)).create();
                qp.initialize(options.ibPort(), Set.of());
                qps.add(qp);
                indexByNumber.put(qp.number(), i);
                mine.add(device.destination(qp));
            }
            receive.clear().add(PingPongLoop.RECEIVE_ID).scatter(buffer, 0, options.size());
            for (int i = 0; i < options.rxDepth(); i++) {
                srq.postReceive(receive);
            }
            device.armForEvents();
            PingPongWire.exchange(options, mine, MAX_QP, remote -> {
                for (int i = 0; i < pairs; i++) {
                    PingPongWire.Destination peer = remote.get(i);
                    // ibv_srq_pingpong's paths: hop limit 1, and the GID of the first destination for all.
                    PingPongWire.Destination first = remote.getFirst();
                    qps.get(i).readyToReceive(device.pathTo(first.global(), first.gid(), peer.lid(), 1), peer.qpn(),
                            peer.psn(), options.mtu());
                    qps.get(i).readyToSend(device.psn(i));
                }
            }, out);
            if (options.server() != null && options.validate()) {
                PingPongLoop.markPages(buffer.segment());
            }
            send.clear().send(PingPongLoop.SEND_ID).gather(buffer, 0, options.size()).signaled();
            double micros = PingPongLoop.run(options, device.completionQueue(), completions, new PingPongLoop.Side() {
                @Override
                public void send(int index) {
                    qps.get(index).postSend(send);
                }

                @Override
                public void postReceives(int count) {
                    for (int i = 0; i < count; i++) {
                        srq.postReceive(receive);
                    }
                }

                @Override
                public int indexOf(int qpNumber) {
                    Integer index = indexByNumber.get(qpNumber);
                    if (index == null) {
                        throw new IllegalStateException(String.format("Couldn't find QPN %06x", qpNumber));
                    }
                    return index;
                }
            }, pairs, pairs, out);
            if (options.server() == null && options.validate()) {
                PingPongLoop.checkPages(buffer.segment(), out);
            }
            return micros;
        }
    }
}
