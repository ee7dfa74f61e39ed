package io.rdma4j.examples;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.AddressHandle;
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
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code ibv_ud_pingpong} in Java: same options, TCP exchange and output. One UD queue pair per side (Q_Key
 * 0x11111111); each SEND carries an address handle made from the peer's LID or GID and its QP number. A datagram
 * arrives behind the 40-byte global route header, so receive buffers are {@code -s} + 40 bytes and SENDs go from
 * byte 40 of the same buffer, as in the C tool; {@code -s} must fit the port's MTU.
 *
 * <pre>
 * ud-pingpong [-d dev] [-i port] [-g gid-idx] [-s size] [-r rx-depth] [-n iters] [-l sl] [-e] [-c] [-p tcp-port]
 *             [server]
 * </pre>
 */
public final class UdPingPong {

    static final PingPongOptions.Tool TOOL = PingPongOptions.Tool.UD;
    /** ibv_ud_pingpong's Q_Key. */
    static final int QKEY = 0x11111111;
    /** The global route header in front of every received datagram. */
    static final int GRH = 40;

    private final PingPongOptions options;

    UdPingPong(PingPongOptions options) {
        this.options = options;
    }

    /** Runs one side; exit 1 on bad options or failure, as the C tool. */
    public static void main(String[] args) throws InterruptedException {
        CommandLine.run("ud-pingpong", PingPongOptions.usage(TOOL), args, a -> PingPongOptions.parse(TOOL, a), 1, 1,
                options -> new UdPingPong(options).run(System.out));
    }

    /** Runs one side to completion; returns the microseconds per iteration. */
    double run(PrintStream out) throws IOException, InterruptedException {
        try (PingPongDevice device = PingPongDevice.open(options, options.rxDepth() + 1);
             SendWorkRequests send = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receive = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(2)) {
            if (options.size() > device.activeMtuBytes()) {
                throw new IllegalArgumentException("Requested size larger than port MTU (" + device.activeMtuBytes()
                        + ")");
            }
            ProtectionDomain pd = device.protectionDomain();
            MemoryRegion buffer = pd.allocateMemory(options.size() + GRH, Set.of(Access.LOCAL_WRITE));
            buffer.segment().fill((byte) 0x7b);
            QueuePair qp = pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM).completionQueue(device.completionQueue())
                    .capabilities(QueuePairCapabilities.defaults().withSendQueue(1).withReceiveQueue(options.rxDepth()))
                    .create();
            qp.initialize(options.ibPort(), QKEY);
            receive.clear().add(PingPongLoop.RECEIVE_ID).scatter(buffer, 0, options.size() + GRH);
            for (int i = 0; i < options.rxDepth(); i++) {
                qp.postReceive(receive);
            }
            device.armForEvents();
            AtomicReference<AddressHandle> peerAddress = new AtomicReference<>();
            List<PingPongWire.Destination> remote = PingPongWire.exchange(options, List.of(device.destination(qp)),
                    1, r -> {
                        PingPongWire.Destination peer = r.getFirst();
                        qp.readyToReceive();
                        qp.readyToSend(device.psn(0));
                        // ibv_ud_pingpong's address handle: hop limit 64 when addressing by GID.
                        peerAddress.set(pd.createAddressHandle(device.pathTo(peer.global(), peer.gid(),
                                peer.lid(), 64)));
                    }, out);
            if (options.server() != null && options.validate()) {
                PingPongLoop.markPages(buffer.segment().asSlice(GRH));
            }
            send.clear().send(PingPongLoop.SEND_ID).gather(buffer, GRH, options.size()).signaled()
                    .destination(peerAddress.get(), remote.getFirst().qpn(), QKEY);
            double micros;
            // Closed before the device closes the queue pair: an open poster keeps it from closing.
            try (QueuePairPoster poster = qp.confinedPoster()) {
                micros = PingPongLoop.run(options, device.completionQueue(), completions,
                        PingPongLoop.onOneQueuePair(poster, send, receive), 1, 1, out);
            }
            if (options.server() == null && options.validate()) {
                PingPongLoop.checkPages(buffer.segment().asSlice(GRH), out);
            }
            return micros;
        }
    }
}
