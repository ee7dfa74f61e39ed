package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
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
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The connection manager on the test device's IP address ({@code RDMA4J_TEST_DEVICE}, {@code RDMA4J_TEST_ADDRESS}):
 * resolution, rejection, and a connection between two rdma4j queue pairs.
 */
@Tag("device")
class ConnectionManagerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private String device;
    private InetAddress address;
    private EventChannel channel;
    private CmId listener;
    private InetSocketAddress listening;

    @BeforeEach
    void listen() throws Exception {
        device = System.getenv("RDMA4J_TEST_DEVICE");
        String ip = System.getenv("RDMA4J_TEST_ADDRESS");
        if (device == null || ip == null) {
            fail("RDMA4J_TEST_DEVICE and RDMA4J_TEST_ADDRESS name the device and its IP address");
        }
        address = InetAddress.getByName(ip);
        channel = EventChannel.create();
        listener = channel.createId(PortSpace.TCP);
        listener.bind(new InetSocketAddress(address, 0));
        listener.listen(4);
        listening = new InetSocketAddress(address, listener.localPort());
        assertNotEquals(0, listening.getPort());
        assertEquals(device, listener.deviceName().orElseThrow(), "the address belongs to the test device");
    }

    @AfterEach
    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    @Test
    void addressAndRouteResolveToTheTestDevice() throws InterruptedException {
        CmId client = channel.createId(PortSpace.TCP);
        client.resolveAddress(listening, TIMEOUT);
        assertSame(client, channel.expect(CmEventType.ADDRESS_RESOLVED, TIMEOUT).id());
        assertEquals(device, client.deviceName().orElseThrow());
        client.resolveRoute(TIMEOUT);
        assertSame(client, channel.expect(CmEventType.ROUTE_RESOLVED, TIMEOUT).id());
        client.close();
        client.close();
        assertThrows(IllegalStateException.class, client::localPort);
    }

    @Test
    void aRejectedRequestReachesTheClientAsRejected() throws InterruptedException {
        try (Context context = open(); CompletionQueue cq = context.createCompletionQueue(8);
             ProtectionDomain pd = context.allocateProtectionDomain()) {
            QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
            qp.initialize(1, ACCESS);
            CmId client = resolved();
            client.connect(ConnectionParameters.forQueuePair(qp.number()));
            CmEvent request = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT);
            assertSame(listener, request.listenId());
            assertNotSame(listener, request.id());
            request.id().reject();
            CmEvent rejected = channel.expect(CmEventType.REJECTED, TIMEOUT);
            assertSame(client, rejected.id());
        }
    }

    @Test
    void twoQueuePairsConnectAndMoveData() throws InterruptedException {
        try (Context context = open(); CompletionQueue cq = context.createCompletionQueue(8);
             ProtectionDomain pd = context.allocateProtectionDomain();
             MemoryRegion memory = pd.allocateMemory(4096, ACCESS);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(2)) {
            QueuePair active = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
            QueuePair passive = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
            active.initialize(1, ACCESS);
            passive.initialize(1, ACCESS);
            CmId client = resolved();
            client.connect(ConnectionParameters.forQueuePair(active.number()));
            CmId server = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT).id();
            server.accept(ConnectionParameters.forQueuePair(passive.number()));
            boolean iwarp = context.device().transport() == Transport.IWARP;
            if (iwarp) {
                // iWARP: the kernel moved both queue pairs to RTS; both ends see ESTABLISHED.
                assertTrue(Set.of(client, server).contains(channel.expect(CmEventType.ESTABLISHED, TIMEOUT).id()));
                assertTrue(Set.of(client, server).contains(channel.expect(CmEventType.ESTABLISHED, TIMEOUT).id()));
                passive.postReceive(receives.clear().add(1).scatter(memory, 1024, 64));
                memory.segment().setString(0, "connected by rdma_cm");
                active.postSend(sends.clear().send(2).gather(memory, 0, 21).signaled());
                for (int seen = 0; seen < 2; seen += cq.poll(completions)) {
                    Thread.onSpinWait();
                }
                assertEquals("connected by rdma_cm", memory.segment().getString(1024));
            } else {
                // InfiniBand/RoCE: the application moves its own queue pairs, then establishes.
                assertSame(client, channel.expect(CmEventType.CONNECT_RESPONSE, TIMEOUT).id());
                client.establish();
                assertSame(server, channel.expect(CmEventType.ESTABLISHED, TIMEOUT).id());
            }
            client.disconnect();
            assertEquals(CmEventType.DISCONNECTED, channel.expect(CmEventType.DISCONNECTED, TIMEOUT).type());
        }
    }

    @Test
    void aClosedChannelClosesItsIds() {
        CmId id = channel.createId(PortSpace.TCP);
        channel.close();
        channel.close();
        assertThrows(IllegalStateException.class, id::localPort);
        assertThrows(IllegalStateException.class, () -> channel.createId(PortSpace.TCP));
        channel = null;
    }

    private CmId resolved() throws InterruptedException {
        CmId client = channel.createId(PortSpace.TCP);
        client.resolveAddress(listening, TIMEOUT);
        channel.expect(CmEventType.ADDRESS_RESOLVED, TIMEOUT);
        client.resolveRoute(TIMEOUT);
        channel.expect(CmEventType.ROUTE_RESOLVED, TIMEOUT);
        return client;
    }

    private Context open() {
        return Device.byName(device).orElseThrow(() -> new AssertionError("no RDMA device " + device)).open();
    }
}
