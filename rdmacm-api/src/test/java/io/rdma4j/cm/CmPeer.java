package io.rdma4j.cm;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletionStatus;
import io.rdma4j.verbs.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * One end of {@link ConnectorAcceptorTest}'s two-process tests, run in a JVM of its own.
 *
 * <ul>
 *   <li>{@code server IP}: listens, prints {@code listening PORT}, accepts one connection advertising a 1 MiB buffer
 *       ({@link RemoteBuffer} in the accept's private data), echoes {@value #ROUND_TRIPS} messages, waits for the
 *       client's disconnect, closes everything and exits 0.</li>
 *   <li>{@code hold IP}: the same up to the accept, then prints {@code connected} and sleeps until killed.</li>
 *   <li>{@code client IP PORT}: connects, RDMA WRITEs 1 MiB into the server's buffer, READs it back and compares,
 *       makes {@value #ROUND_TRIPS} SEND/RECV round trips, disconnects and exits 0.</li>
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
            case "server", "hold" -> serve(ip, args[0].equals("hold"));
            case "client" -> client(new InetSocketAddress(ip, Integer.parseInt(args[2])));
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
                    .onQueuePair(qp -> qp.postReceive(first.add(4).scatter(memory, BUFFER + 64, 64))).build();
            System.out.println("listening " + acceptor.localAddress().getPort());
            try (Connection c = acceptor.accept(options, TIMEOUT).orElseThrow(() -> new AssertionError("no client"))) {
                if (hold) {
                    System.out.println("connected");
                    Thread.sleep(Long.MAX_VALUE);
                }
                first.close();
                try (Messages m = new Messages(c, memory)) {
                    for (int i = 0; i < ROUND_TRIPS; i++) {
                        m.awaitReceives(i + 1);
                        long value = m.received();
                        if (i + 1 < ROUND_TRIPS) {
                            m.postReceive();
                        }
                        m.send(value);
                    }
                    m.awaitSends(ROUND_TRIPS);
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
             Messages m = new Messages(c, memory)) {
            RemoteBuffer target = RemoteBuffer.fromBytes(c.peerPrivateData());
            if (target.length() != BUFFER) {
                throw new AssertionError("advertised " + target);
            }
            for (int i = 0; i < BUFFER; i += 8) {
                memory.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            m.sends.clear().rdmaWrite(1, target.address(), target.rkey()).gather(memory, 0, BUFFER).signaled();
            c.queuePair().postSend(m.sends);
            m.awaitSends(1);
            m.sends.clear().rdmaRead(2, target.address(), target.rkey()).gather(memory, BUFFER, BUFFER).signaled();
            c.queuePair().postSend(m.sends);
            m.awaitSends(2);
            long mismatch = memory.segment().asSlice(0, BUFFER).mismatch(memory.segment().asSlice(BUFFER, BUFFER));
            if (mismatch != -1) {
                throw new AssertionError("RDMA READ returned other bytes at " + mismatch);
            }
            for (long i = 1; i <= ROUND_TRIPS; i++) {
                m.postReceive();
                m.send(i);
                m.awaitReceives((int) i);
                long echoed = m.received();
                if (echoed != i) {
                    throw new AssertionError("sent message " + i + ", got " + echoed + " back");
                }
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

        Messages(Connection c, MemoryRegion memory) {
            this.qp = c.queuePair();
            this.cq = c.completionQueue();
            this.memory = memory;
            this.at = memory.length() - 4096;
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
