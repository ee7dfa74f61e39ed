package io.rdma4j.cm;

import static io.rdma4j.cm.ConnectionManagerTest.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rdma4j.verbs.AddressHandle;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.Transport;
import io.rdma4j.verbs.WorkCompletions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Unreliable datagrams over rdma_cm ({@link PortSpace#UDP}: SIDR resolution of a peer's QP number and Q_Key) and
 * multicast groups, on the test device; iWARP has neither, so they are skipped on siw with that reason.
 */
@Tag("device")
class DatagramTest {

    /** The global route header in front of every datagram received on RoCE. */
    private static final int GRH = 40;

    private EventChannel channel;
    private InetAddress ip;
    private CmId server;
    private ProtectionDomain pd;
    private CompletionQueue cq;

    @BeforeEach
    void open() throws Exception {
        ip = ConnectionManagerTest.testAddress();
        channel = EventChannel.create();
        server = channel.createId(PortSpace.UDP);
        server.bind(new InetSocketAddress(ip, 0));
        Context context = server.context();
        assumeFalse(context.device().transport() == Transport.IWARP,
                "iWARP (" + context.device().name() + ") is connected-only: no UD queue pairs, no multicast");
        pd = context.allocateProtectionDomain();
        cq = context.createCompletionQueue(16);
    }

    @AfterEach
    void close() {
        channel.close();
        if (pd != null) {
            pd.close();
            cq.close();
        }
    }

    @Test
    void aDatagramReachesThePeerWhoseQueuePairAndQkeyTheConnectionManagerResolved() throws Exception {
        server.listen(1);
        CmId client = channel.createId(PortSpace.UDP);
        client.resolveAddress(new InetSocketAddress(ip, server.localPort()), TIMEOUT);
        channel.expect(CmEventType.ADDRESS_RESOLVED, TIMEOUT);
        client.resolveRoute(TIMEOUT);
        channel.expect(CmEventType.ROUTE_RESOLVED, TIMEOUT);
        QueuePair sender = client.createQueuePair(pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM).completionQueue(cq));
        byte[] hello = "who are you".getBytes(StandardCharsets.US_ASCII);
        client.connect(ConnectionParameters.defaults().withPrivateData(hello));
        CmEvent request = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT);
        assertArrayEquals(hello, Arrays.copyOf(request.privateData(), hello.length));
        QueuePair receiver = request.id().createQueuePair(pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM)
                .completionQueue(cq));
        try (MemoryRegion memory = pd.allocateMemory(4096, ConnectionManagerTest.ACCESS);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(2)) {
            receiver.postReceive(receives.add(1).scatter(memory, 1024, GRH + 256));
            request.id().accept(ConnectionParameters.defaults());
            assertEquals(CmIdState.ESTABLISHED, request.id().state(), "a UD accept answers at once");
            CmEvent established = channel.expect(CmEventType.ESTABLISHED, TIMEOUT);
            UdParameters peer = established.udParameters().orElseThrow();
            assertEquals(receiver.number(), peer.queuePairNumber());
            AddressHandle ah = pd.createAddressHandle(peer.address());
            memory.segment().setString(0, "a datagram over rdma_cm");
            sender.postSend(sends.send(2).gather(memory, 0, 32).destination(ah, peer.queuePairNumber(), peer.qkey())
                    .signaled());
            await(completions, 2);
            assertEquals("a datagram over rdma_cm", memory.segment().getString(1024 + GRH));
        }
    }

    @Test
    void aMulticastGroupIsJoinedSentToAndLeft() throws Exception {
        InetSocketAddress group = new InetSocketAddress(InetAddress.getByName("239.255.77.1"), 0);
        CmId member = channel.createId(PortSpace.UDP);
        member.bind(new InetSocketAddress(ip, 0));
        QueuePair receiver = member.createQueuePair(pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM)
                .completionQueue(cq));
        QueuePair sender = server.createQueuePair(pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM).completionQueue(cq));
        try (MemoryRegion memory = pd.allocateMemory(4096, ConnectionManagerTest.ACCESS);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(2)) {
            receiver.postReceive(receives.add(1).scatter(memory, 1024, GRH + 256));
            member.joinMulticast(group);
            CmEvent joined = channel.expect(CmEventType.MULTICAST_JOIN, TIMEOUT);
            assertEquals(member, joined.id());
            server.joinMulticast(group);
            UdParameters target = channel.expect(CmEventType.MULTICAST_JOIN, TIMEOUT).udParameters().orElseThrow();
            assertEquals(0xFFFFFF, target.queuePairNumber(), "a group's QP number");
            AddressHandle ah = pd.createAddressHandle(target.address());
            memory.segment().setString(0, "to the group");
            sender.postSend(sends.send(2).gather(memory, 0, 16).destination(ah, target.queuePairNumber(),
                    target.qkey()).signaled());
            await(completions, 2);
            assertEquals("to the group", memory.segment().getString(1024 + GRH));
            member.leaveMulticast(group);
            server.leaveMulticast(group);
        }
    }

    private void await(WorkCompletions completions, int expected) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        for (int seen = 0; seen < expected; ) {
            int n = cq.poll(completions);
            for (int i = 0; i < n; i++) {
                assertTrue(completions.isSuccess(i), completions.statusText(i));
            }
            seen += n;
            assertTrue(System.nanoTime() < deadline, "completions within " + TIMEOUT);
            Thread.onSpinWait();
        }
    }
}
