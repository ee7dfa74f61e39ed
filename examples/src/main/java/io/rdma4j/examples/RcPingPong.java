package io.rdma4j.examples;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairPoster;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/**
 * {@code ibv_rc_pingpong} in Java: same options, TCP exchange and output, so either end can be the C tool. One RC
 * queue pair per side, connected by hand with the peer's LID/QPN/PSN/GID; {@code -n} SENDs of {@code -s} bytes
 * each way, one in flight.
 *
 * <pre>
 * rc-pingpong [-d dev] [-i port] [-g gid-idx] [-s size] [-m mtu] [-r rx-depth] [-n iters] [-l sl] [-e] [-c]
 *             [-p tcp-port] [server]
 * </pre>
 */
public final class RcPingPong {

    static final PingPongOptions.Tool TOOL = PingPongOptions.Tool.RC;

    private final PingPongOptions options;

    RcPingPong(PingPongOptions options) {
        this.options = options;
    }

    /** Runs one side; exit 1 on bad options or failure, as the C tool. */
    public static void main(String[] args) throws InterruptedException {
        CommandLine.run("rc-pingpong", PingPongOptions.usage(TOOL), args, a -> PingPongOptions.parse(TOOL, a), 1, 1,
                options -> new RcPingPong(options).run(System.out));
    }

    /** Runs one side to completion; returns the microseconds per iteration. */
    double run(PrintStream out) throws IOException, InterruptedException {
        try (PingPongDevice device = PingPongDevice.open(options, options.rxDepth() + 1);
             SendWorkRequests send = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receive = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(2)) {
            CompletionQueue cq = device.completionQueue();
            ProtectionDomain pd = device.protectionDomain();
            MemoryRegion buffer = pd.allocateMemory(options.size(), Set.of(Access.LOCAL_WRITE));
            buffer.segment().fill((byte) 0x7b);
            QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq)
                    .capabilities(QueuePairCapabilities.defaults().withSendQueue(1).withReceiveQueue(options.rxDepth()))
                    .create();
            qp.initialize(options.ibPort(), Set.of());
            receive.clear().add(PingPongLoop.RECEIVE_ID).scatter(buffer, 0, options.size());
            for (int i = 0; i < options.rxDepth(); i++) {
                qp.postReceive(receive);
            }
            device.armForEvents();
            PingPongWire.exchange(options, List.of(device.destination(qp)), 1, remote -> {
                PingPongWire.Destination peer = remote.getFirst();
                // ibv_rc_pingpong's path: hop limit 1 when addressing by GID.
                qp.readyToReceive(device.pathTo(peer.global(), peer.gid(), peer.lid(), 1), peer.qpn(), peer.psn(),
                        options.mtu());
                qp.readyToSend(device.psn(0));
            }, out);
            if (options.server() != null && options.validate()) {
                PingPongLoop.markPages(buffer.segment());
            }
            send.clear().send(PingPongLoop.SEND_ID).gather(buffer, 0, options.size()).signaled();
            double micros;
            // Closed before the device closes the queue pair: an open poster keeps it from closing.
            try (QueuePairPoster poster = qp.confinedPoster()) {
                micros = PingPongLoop.run(options, cq, completions, PingPongLoop.onOneQueuePair(poster, send, receive),
                        1, 1, out);
            }
            if (options.server() == null && options.validate()) {
                PingPongLoop.checkPages(buffer.segment(), out);
            }
            return micros;
        }
    }
}
