package io.rdma4j.cm;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairState;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.Transport;
import io.rdma4j.verbs.WorkCompletionStatus;
import io.rdma4j.verbs.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * One end of {@link ConnectorAcceptorTest}'s two-process tests, run in a JVM of its own. {@code API} says how the
 * connection is made: {@code connector} ({@link Connector}/{@link Acceptor}), {@code cm-qp} (low level, the id's own
 * queue pair from {@link CmId#createQueuePair}) or {@code user-qp} (low level, the application's queue pair moved
 * with {@link CmId#initQueuePairAttributes} on InfiniBand/RoCE, by the kernel on iWARP).
 *
 * <ul>
 *   <li>{@code server IP API}: listens, prints {@code listening PORT}, accepts one connection advertising a 1 MiB
 *       buffer ({@link RemoteBuffer} in the accept's private data), echoes {@value #ROUND_TRIPS} messages, waits for
 *       the client's disconnect, closes everything and exits 0.</li>
 *   <li>{@code hold IP}: the same as a {@code connector} server up to the accept, then prints {@code connected} and
 *       sleeps until killed.</li>
 *   <li>{@code client IP PORT API}: connects, RDMA WRITEs 1 MiB into the server's buffer, READs it back and
 *       compares, makes {@value #ROUND_TRIPS} SEND/RECV round trips, disconnects and exits 0.</li>
 * </ul>
 */
public final class CmPeer {

    static final int ROUND_TRIPS = 1000;
    static final int BUFFER = 1 << 20;
    static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private CmPeer() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress ip = InetAddress.getByName(args[1]);
        switch (args[0]) {
            case "server" -> {
                switch (args[2]) {
                    case "connector" -> serve(ip, false);
                    case "cm-qp", "user-qp" -> serveLowLevel(ip, args[2].equals("user-qp"));
                    default -> throw new IllegalArgumentException(args[2]);
                }
            }
            case "hold" -> serve(ip, true);
            case "client" -> {
                InetSocketAddress server = new InetSocketAddress(ip, Integer.parseInt(args[2]));
                switch (args[3]) {
                    case "connector" -> client(server);
                    case "cm-qp", "user-qp" -> clientLowLevel(server, args[3].equals("user-qp"));
                    default -> throw new IllegalArgumentException(args[3]);
                }
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
        System.out.println(args[0] + " done");
    }

    private static void serve(InetAddress ip, boolean hold) throws Exception {
        try (Acceptor acceptor = Acceptor.listen(new InetSocketAddress(ip, 0), 4);
             ProtectionDomain pd = acceptor.context().allocateProtectionDomain();
             MemoryRegion memory = pd.allocateMemory(BUFFER + 4096, ACCESS)) {
            ReceiveWorkRequests first = new ReceiveWorkRequests(1, 1);
            // iWARP drops a connection whose peer sends before a receive is posted: post it before accepting.
            ConnectionOptions options = ConnectionOptions.builder().protectionDomain(pd)
                    .privateData(RemoteBuffer.of(memory, 0, BUFFER).toBytes())
                    .onQueuePair(qp -> Messages.postFirstReceive(qp, first, memory)).build();
            System.out.println("listening " + acceptor.localAddress().getPort());
            try (Connection c = acceptor.accept(options, TIMEOUT).orElseThrow(() -> new AssertionError("no client"))) {
                if (hold) {
                    System.out.println("connected");
                    Thread.sleep(Long.MAX_VALUE);
                }
                first.close();
                try (Messages m = new Messages(c.queuePair(), c.completionQueue(), memory)) {
                    m.echo();
                }
                CmEvent event = c.nextEvent(TIMEOUT).orElseThrow(() -> new AssertionError("no DISCONNECTED"));
                if (event.type() != CmEventType.DISCONNECTED) {
                    throw new AssertionError("expected DISCONNECTED, got " + event);
                }
            }
        }
    }

    private static void client(InetSocketAddress server) throws Exception {
        try (Connection c = Connector.connect(server, ConnectionOptions.defaults(), TIMEOUT);
             MemoryRegion memory = c.protectionDomain().allocateMemory(2L * BUFFER + 4096, ACCESS);
             Messages m = new Messages(c.queuePair(), c.completionQueue(), memory)) {
            m.writeReadAndRoundTrips(RemoteBuffer.fromBytes(c.peerPrivateData()));
        }
    }

    /** The server over the low-level API: every rdma_cm step and every queue pair transition written out. */
    private static void serveLowLevel(InetAddress ip, boolean userQueuePair) throws Exception {
        // The listener in the try: the channel does not keep its ids reachable, and it must listen throughout.
        try (EventChannel channel = EventChannel.create(); CmId listener = channel.createId(PortSpace.TCP)) {
            listener.bind(new InetSocketAddress(ip, 0));
            listener.listen(1);
            // Everything but the queue pair is ready before the first request: iWARP gives a request 10 s to be
            // answered (siw's MPA timeout), less than a fresh JVM under emulation may need to load the classes.
            // The CQ is declared before the PD: closing the PD closes the QP, which uses the CQ.
            try (CompletionQueue cq = listener.context().createCompletionQueue(16);
                 ProtectionDomain pd = listener.context().allocateProtectionDomain();
                 MemoryRegion memory = pd.allocateMemory(BUFFER + 4096, ACCESS);
                 ReceiveWorkRequests first = new ReceiveWorkRequests(1, 1)) {
                boolean iwarp = listener.context().device().transport() == Transport.IWARP;
                System.out.println("listening " + listener.localPort());
                CmId id = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT).id();
                QueuePair.Builder builder = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq);
                QueuePair qp = userQueuePair ? builder.create() : id.createQueuePair(builder);
                if (userQueuePair) {
                    qp.modify(id.initQueuePairAttributes(QueuePairState.INIT));
                }
                Messages.postFirstReceive(qp, first, memory);
                if (userQueuePair && !iwarp) {
                    // InfiniBand/RoCE: the passive side is ready to receive and send before it accepts.
                    qp.modify(id.initQueuePairAttributes(QueuePairState.READY_TO_RECEIVE));
                    qp.modify(id.initQueuePairAttributes(QueuePairState.READY_TO_SEND));
                }
                ConnectionParameters accept = userQueuePair ? ConnectionParameters.forQueuePair(qp.number())
                        : ConnectionParameters.defaults();
                id.accept(accept.withPrivateData(RemoteBuffer.of(memory, 0, BUFFER).toBytes()));
                channel.expect(CmEventType.ESTABLISHED, TIMEOUT);
                try (Messages m = new Messages(qp, cq, memory)) {
                    m.echo();
                }
                channel.expect(CmEventType.DISCONNECTED, TIMEOUT);
                if (userQueuePair) {
                    qp.close();
                }
                id.close();
            }
        }
    }

    /** The client over the low-level API. */
    private static void clientLowLevel(InetSocketAddress server, boolean userQueuePair) throws Exception {
        try (EventChannel channel = EventChannel.create()) {
            CmId id = channel.createId(PortSpace.TCP);
            id.resolveAddress(server, TIMEOUT);
            channel.expect(CmEventType.ADDRESS_RESOLVED, TIMEOUT);
            id.resolveRoute(TIMEOUT);
            channel.expect(CmEventType.ROUTE_RESOLVED, TIMEOUT);
            boolean iwarp = id.context().device().transport() == Transport.IWARP;
            try (CompletionQueue cq = id.context().createCompletionQueue(16);
                 ProtectionDomain pd = id.context().allocateProtectionDomain();
                 MemoryRegion memory = pd.allocateMemory(2L * BUFFER + 4096, ACCESS)) {
                QueuePair.Builder builder = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq);
                QueuePair qp = userQueuePair ? builder.create() : id.createQueuePair(builder);
                if (userQueuePair) {
                    qp.modify(id.initQueuePairAttributes(QueuePairState.INIT));
                    id.connect(ConnectionParameters.forQueuePair(qp.number()));
                } else {
                    id.connect(ConnectionParameters.defaults());
                }
                CmEvent connected;
                if (userQueuePair && !iwarp) {
                    // InfiniBand/RoCE: the application moves its QP with what the CM negotiated, then sends the RTU.
                    connected = channel.expect(CmEventType.CONNECT_RESPONSE, TIMEOUT);
                    qp.modify(id.initQueuePairAttributes(QueuePairState.READY_TO_RECEIVE));
                    qp.modify(id.initQueuePairAttributes(QueuePairState.READY_TO_SEND));
                    id.establish();
                } else {
                    connected = channel.expect(CmEventType.ESTABLISHED, TIMEOUT);
                }
                try (Messages m = new Messages(qp, cq, memory)) {
                    m.writeReadAndRoundTrips(RemoteBuffer.fromBytes(connected.privateData()));
                }
                id.disconnect();
                channel.expect(CmEventType.DISCONNECTED, TIMEOUT);
                if (userQueuePair) {
                    qp.close();
                }
                id.close();
            }
        }
    }

    /**
     * SEND/RECV of 64-byte messages at the end of a region, one receive outstanding at a time. Send and receive
     * completions share the CQ and may come in either order: both are counted.
     */
    private static final class Messages implements AutoCloseable {
        final SendWorkRequests sends = new SendWorkRequests(1, 1);
        final ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
        final WorkCompletions completions = new WorkCompletions(4);
        final QueuePair qp;
        final CompletionQueue cq;
        final MemoryRegion memory;
        final long at;
        int sendsDone;
        int receivesDone;

        Messages(QueuePair qp, CompletionQueue cq, MemoryRegion memory) {
            this.qp = qp;
            this.cq = cq;
            this.memory = memory;
            this.at = memory.length() - 4096;
        }

        /** The server's first receive, where {@link #received} reads it; posted before the accept. */
        static void postFirstReceive(QueuePair qp, ReceiveWorkRequests first, MemoryRegion memory) {
            qp.postReceive(first.add(4).scatter(memory, memory.length() - 4096 + 64, 64));
        }

        /** The server's part: echoes {@value #ROUND_TRIPS} messages, the first receive already posted. */
        void echo() {
            for (int i = 0; i < ROUND_TRIPS; i++) {
                awaitReceives(i + 1);
                long value = received();
                if (i + 1 < ROUND_TRIPS) {
                    postReceive();
                }
                send(value);
            }
            awaitSends(ROUND_TRIPS);
        }

        /** The client's part: 1 MiB WRITE into {@code target}, READ back and compared, then the round trips. */
        void writeReadAndRoundTrips(RemoteBuffer target) {
            if (target.length() != BUFFER) {
                throw new AssertionError("advertised " + target);
            }
            for (int i = 0; i < BUFFER; i += 8) {
                memory.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            qp.postSend(sends.clear().rdmaWrite(1, target.address(), target.rkey()).gather(memory, 0, BUFFER)
                    .signaled());
            awaitSends(1);
            qp.postSend(sends.clear().rdmaRead(2, target.address(), target.rkey()).gather(memory, BUFFER, BUFFER)
                    .signaled());
            awaitSends(2);
            long mismatch = memory.segment().asSlice(0, BUFFER).mismatch(memory.segment().asSlice(BUFFER, BUFFER));
            if (mismatch != -1) {
                throw new AssertionError("RDMA READ returned other bytes at " + mismatch);
            }
            for (long i = 1; i <= ROUND_TRIPS; i++) {
                postReceive();
                send(i);
                awaitReceives((int) i);
                long echoed = received();
                if (echoed != i) {
                    throw new AssertionError("sent message " + i + ", got " + echoed + " back");
                }
            }
        }

        void send(long value) {
            memory.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, at, value);
            qp.postSend(sends.clear().send(3).gather(memory, at, 64).signaled());
        }

        void postReceive() {
            qp.postReceive(receives.clear().add(4).scatter(memory, at + 64, 64));
        }

        long received() {
            return memory.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, at + 64);
        }

        void awaitSends(int total) {
            while (sendsDone < total) {
                poll();
            }
        }

        void awaitReceives(int total) {
            while (receivesDone < total) {
                poll();
            }
        }

        private void poll() {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            int n;
            while ((n = cq.poll(completions)) == 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no completion within " + TIMEOUT);
                }
                Thread.onSpinWait();
            }
            for (int i = 0; i < n; i++) {
                if (completions.status(i) != WorkCompletionStatus.SUCCESS) {
                    throw new AssertionError("completion " + completions.status(i) + ": " + completions.statusText(i));
                }
                if (completions.workRequestId(i) == 4) {
                    receivesDone++;
                } else {
                    sendsDone++;
                }
            }
        }

        @Override
        public void close() {
            sends.close();
            receives.close();
            completions.close();
        }
    }
}
