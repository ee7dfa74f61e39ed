package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
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
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The low-level connection manager on the test device's IP address ({@code RDMA4J_TEST_DEVICE},
 * {@code RDMA4J_TEST_ADDRESS}): resolution, states, private data and its limits, rejection, and connections of
 * the ids' own queue pairs and of the application's, moving data on every transport.
 */
@Tag("device")
class ConnectionManagerTest {

    static final Duration TIMEOUT = Duration.ofSeconds(10);
    static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private String device;
    private EventChannel channel;
    private CmId listener;
    private InetSocketAddress listening;
    private boolean iwarp;

    @BeforeEach
    void listen() throws Exception {
        device = System.getenv("RDMA4J_TEST_DEVICE");
        InetAddress address = testAddress();
        channel = EventChannel.create();
        listener = channel.createId(PortSpace.TCP);
        listener.bind(new InetSocketAddress(address, 0));
        listener.listen(4);
        assertEquals(CmIdState.LISTENING, listener.state());
        listening = new InetSocketAddress(address, listener.localPort());
        assertNotEquals(0, listening.getPort());
        assertEquals(device, listener.deviceName().orElseThrow(), "the address belongs to the test device");
        iwarp = listener.context().device().transport() == Transport.IWARP;
    }

    static InetAddress testAddress() throws Exception {
        String ip = System.getenv("RDMA4J_TEST_ADDRESS");
        if (System.getenv("RDMA4J_TEST_DEVICE") == null || ip == null) {
            fail("RDMA4J_TEST_DEVICE and RDMA4J_TEST_ADDRESS name the device and its IP address");
        }
        return InetAddress.getByName(ip);
    }

    @AfterEach
    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    @Test
    void addressAndRouteResolveToTheTestDeviceAndItsContext() throws InterruptedException {
        CmId client = channel.createId(PortSpace.TCP);
        client.resolveAddress(listening, TIMEOUT);
        assertEquals(CmIdState.RESOLVING_ADDRESS, client.state());
        assertSame(client, channel.expect(CmEventType.ADDRESS_RESOLVED, TIMEOUT).id());
        assertEquals(CmIdState.ADDRESS_RESOLVED, client.state());
        Context context = client.context();
        assertEquals(device, context.device().name());
        assertSame(listener.context(), context, "one Context object per librdmacm device context");
        assertThrows(IllegalStateException.class, context::close, "librdmacm owns the context");
        assertEquals(listening, client.peerAddress());
        assertEquals(listening.getAddress(), client.localAddress().getAddress());
        assertEquals(1, client.devicePort());
        client.resolveRoute(TIMEOUT);
        assertSame(client, channel.expect(CmEventType.ROUTE_RESOLVED, TIMEOUT).id());
        assertEquals(CmIdState.ROUTE_RESOLVED, client.state());
        client.close();
        client.close();
        assertEquals(CmIdState.CLOSED, client.state());
        assertThrows(IllegalStateException.class, client::localPort);
        assertTrue(!context.isClosed(), "the context stays open after its ids");
    }

    @Test
    void callsInTheWrongStateAreRefusedBeforeLibrdmacmRuns() throws InterruptedException {
        CmId fresh = channel.createId(PortSpace.TCP);
        ConnectionParameters p = ConnectionParameters.defaults();
        assertThrows(IllegalStateException.class, () -> fresh.accept(p), "rdma_accept crashes on a fresh id");
        assertThrows(IllegalStateException.class, () -> fresh.connect(p), "rdma_connect crashes before resolution");
        assertThrows(IllegalStateException.class, () -> fresh.resolveRoute(TIMEOUT));
        assertThrows(IllegalStateException.class, fresh::reject);
        assertThrows(IllegalStateException.class, fresh::establish);
        assertThrows(IllegalStateException.class, fresh::disconnect);
        assertThrows(IllegalStateException.class, fresh::context, "no device before resolution");
        assertThrows(IllegalStateException.class, () -> listener.accept(p));
        assertThrows(IllegalStateException.class, () -> listener.listen(1));
        assertThrows(IllegalArgumentException.class, () -> fresh.resolveAddress(listening, Duration.ZERO));
        assertThrows(IllegalStateException.class, () -> fresh.joinMulticast(listening), "a TCP id");
        CmId client = resolved();
        assertThrows(IllegalStateException.class, () -> client.resolveAddress(listening, TIMEOUT));
        assertThrows(IllegalStateException.class, client::establish);
    }

    @Test
    void aRejectionCarriesItsPrivateDataToTheClient() throws InterruptedException {
        try (Ends ends = new Ends()) {
            CmId client = resolved();
            ends.clientQueuePair(client);
            client.connect(ConnectionParameters.defaults());
            CmEvent request = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT);
            assertSame(listener, request.listenId());
            assertNotSame(listener, request.id());
            assertEquals(CmIdState.CONNECT_REQUEST, request.id().state());
            byte[] reason = "not now, try 7472".getBytes(StandardCharsets.US_ASCII);
            assertThrows(IllegalArgumentException.class, () -> request.id().reject(new byte[iwarp ? 252 : 149]));
            request.id().reject(reason);
            assertThrows(IllegalStateException.class, () -> request.id().accept(ConnectionParameters.defaults()));
            CmEvent rejected = channel.expect(CmEventType.REJECTED, TIMEOUT);
            assertSame(client, rejected.id());
            assertEquals(CmIdState.REJECTED, client.state());
            assertNotEquals(0, rejected.status(), "the reject reason");
            assertArrayEquals(reason, Arrays.copyOf(rejected.privateData(), reason.length));
        }
    }

    @Test
    void privateDataIsCheckedAgainstTheTransportsLimitAndArrivesWhole() throws InterruptedException {
        int limit = iwarp ? 251 : 56;
        try (Ends ends = new Ends()) {
            CmId client = resolved();
            ends.clientQueuePair(client);
            IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                    () -> client.connect(ConnectionParameters.defaults().withPrivateData(new byte[limit + 1])));
            assertTrue(tooLong.getMessage().contains("limit of " + limit + " bytes"), tooLong.getMessage());
            assertEquals(CmIdState.ROUTE_RESOLVED, client.state(), "nothing was sent");
            byte[] data = new byte[limit];
            for (int i = 0; i < limit; i++) {
                data[i] = (byte) (i + 1);
            }
            client.connect(ConnectionParameters.defaults().withPrivateData(data));
            CmEvent request = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT);
            assertArrayEquals(data, Arrays.copyOf(request.privateData(), limit));
            ConnectionParameters peer = request.peerParameters().orElseThrow();
            if (!iwarp) {
                assertEquals(ends.clientQueuePair.number(), peer.queuePairNumber(), "librdmacm sent the id's QP number");
            }
            request.id().reject();
            channel.expect(CmEventType.REJECTED, TIMEOUT);
        }
    }

    @Test
    void theIdsOwnQueuePairsConnectWithARemoteBufferInThePrivateDataAndMoveData() throws InterruptedException {
        try (Ends ends = new Ends(); MemoryRegion serverMemory = ends.serverPd.allocateMemory(8192, ACCESS)) {
            CmId client = resolved();
            QueuePair clientQp = ends.clientQueuePair(client);
            assertSame(clientQp, client.queuePair().orElseThrow());
            assertThrows(IllegalStateException.class, () -> ends.clientQueuePair(client), "one QP per id");
            client.connect(ConnectionParameters.defaults().withPrivateData("hello".getBytes(StandardCharsets.US_ASCII)));
            CmEvent request = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT);
            CmId server = request.id();
            QueuePair serverQp = server.createQueuePair(ends.serverPd.queuePair(QueuePairType.RELIABLE_CONNECTED)
                    .completionQueue(ends.serverCq));
            serverQp.postReceive(ends.receives.clear().add(7).scatter(serverMemory, 4096, 64));
            server.accept(ConnectionParameters.defaults().withPrivateData(RemoteBuffer.of(serverMemory, 0, 4096)
                    .toBytes()));
            assertEquals(CmIdState.ACCEPTING, server.state());
            CmEvent clientEstablished = awaitEstablished(client, server);
            assertEquals(CmIdState.ESTABLISHED, client.state());
            assertEquals(CmIdState.ESTABLISHED, server.state());
            assertEquals(QueuePairState.READY_TO_SEND, iwarp ? QueuePairState.READY_TO_SEND : clientQp.state());
            RemoteBuffer target = RemoteBuffer.fromBytes(clientEstablished.privateData());
            assertEquals(RemoteBuffer.of(serverMemory, 0, 4096), target);

            ends.moveData(clientQp, target, serverMemory);
            client.disconnect();
            Set<CmId> disconnected = new HashSet<>();
            disconnected.add(channel.expect(CmEventType.DISCONNECTED, TIMEOUT).id());
            disconnected.add(channel.expect(CmEventType.DISCONNECTED, TIMEOUT).id());
            assertEquals(Set.of(client, server), disconnected, "both sides see the disconnect");
            server.disconnect();
            client.close();
            assertTrue(clientQp.isClosed(), "the id closes its queue pair first");
        }
    }

    @Test
    void applicationQueuePairsMoveWithTheAttributesLibrdmacmNegotiated() throws InterruptedException {
        try (Ends ends = new Ends(); MemoryRegion serverMemory = ends.serverPd.allocateMemory(8192, ACCESS)) {
            CmId client = resolved();
            QueuePair active = ends.clientPd.queuePair(QueuePairType.RELIABLE_CONNECTED)
                    .completionQueue(ends.clientCq).create();
            QueuePair passive = ends.serverPd.queuePair(QueuePairType.RELIABLE_CONNECTED)
                    .completionQueue(ends.serverCq).create();
            active.modify(client.initQueuePairAttributes(QueuePairState.INIT));
            client.connect(ConnectionParameters.forQueuePair(active.number()));
            CmEvent request = channel.expect(CmEventType.CONNECT_REQUEST, TIMEOUT);
            if (!iwarp) {
                assertEquals(active.number(), request.peerParameters().orElseThrow().queuePairNumber(),
                        "the CM's REQ carries the QP number (MPA does not)");
            }
            CmId server = request.id();
            passive.modify(server.initQueuePairAttributes(QueuePairState.INIT));
            passive.postReceive(ends.receives.clear().add(7).scatter(serverMemory, 4096, 64));
            if (!iwarp) {
                passive.modify(server.initQueuePairAttributes(QueuePairState.READY_TO_RECEIVE));
                passive.modify(server.initQueuePairAttributes(QueuePairState.READY_TO_SEND));
            }
            server.accept(ConnectionParameters.forQueuePair(passive.number())
                    .withPrivateData(RemoteBuffer.of(serverMemory, 0, 4096).toBytes()));
            RemoteBuffer target;
            if (iwarp) {
                // iWARP: the kernel moves both queue pairs to RTS; both ends see ESTABLISHED.
                target = RemoteBuffer.fromBytes(awaitEstablished(client, server).privateData());
            } else {
                // InfiniBand/RoCE: the application moves its queue pair with librdmacm's attributes, then establishes.
                CmEvent response = channel.expect(CmEventType.CONNECT_RESPONSE, TIMEOUT);
                assertSame(client, response.id());
                assertEquals(CmIdState.CONNECT_RESPONSE, client.state());
                assertEquals(passive.number(), response.peerParameters().orElseThrow().queuePairNumber());
                target = RemoteBuffer.fromBytes(response.privateData());
                active.modify(client.initQueuePairAttributes(QueuePairState.READY_TO_RECEIVE));
                active.modify(client.initQueuePairAttributes(QueuePairState.READY_TO_SEND));
                assertEquals(QueuePairState.READY_TO_SEND, active.state());
                client.establish();
                assertSame(server, channel.expect(CmEventType.ESTABLISHED, TIMEOUT).id());
            }
            ends.moveData(active, target, serverMemory);
            client.disconnect();
            assertEquals(CmEventType.DISCONNECTED, channel.expect(CmEventType.DISCONNECTED, TIMEOUT).type());
        }
    }

    @Test
    void aClosedChannelClosesItsIdsAndTheirQueuePairs() throws InterruptedException {
        try (Ends ends = new Ends()) {
            CmId client = resolved();
            QueuePair qp = ends.clientQueuePair(client);
            int fd = channel.fileDescriptor();
            assertTrue(fd >= 0);
            channel.close();
            channel.close();
            assertTrue(qp.isClosed());
            assertEquals(CmIdState.CLOSED, client.state());
            assertEquals(CmIdState.CLOSED, listener.state());
            assertThrows(IllegalStateException.class, client::localPort);
            assertThrows(IllegalStateException.class, () -> channel.createId(PortSpace.TCP));
            assertThrows(IllegalStateException.class, channel::fileDescriptor);
            channel = null;
        }
    }

    @Test
    void anIdMigratesToAnotherChannelAndItsEventsFollow() throws InterruptedException {
        EventChannel other = EventChannel.create();
        try {
            CmId client = channel.createId(PortSpace.TCP);
            client.migrate(other);
            assertSame(other, client.channel());
            client.resolveAddress(listening, TIMEOUT);
            assertSame(client, other.expect(CmEventType.ADDRESS_RESOLVED, TIMEOUT).id());
            assertTrue(channel.next(Duration.ofMillis(100)).isEmpty());
            other.close();
            assertEquals(CmIdState.CLOSED, client.state(), "it closed with its new channel");
        } finally {
            other.close();
        }
    }

    @Test
    void optionsAreSetOrRefusedWithTheirNames() {
        CmId id = channel.createId(PortSpace.TCP);
        id.setReuseAddress(true);
        id.setTypeOfService(32);
        assertThrows(IllegalArgumentException.class, () -> id.setTypeOfService(256));
        assertThrows(IllegalArgumentException.class, () -> id.setAckTimeout(32));
        id.setAckTimeout(14);
    }

    /** A channel closed while another thread waits in next(): the waiter ends at once, the channel stays closed. */
    @Test
    void aChannelClosedWhileAThreadWaitsOnItWakesTheWaiter() throws Exception {
        EventChannel waitedOn = EventChannel.create();
        java.util.concurrent.CompletableFuture<Throwable> waiter = new java.util.concurrent.CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                waitedOn.next(Duration.ofSeconds(60));
                waiter.complete(null);
            } catch (Throwable t) {
                waiter.complete(t);
            }
        });
        Thread.sleep(300);
        waitedOn.close();
        long closed = System.nanoTime();
        Throwable ended = waiter.get(10, TimeUnit.SECONDS);
        assertTrue(ended instanceof IllegalStateException, String.valueOf(ended));
        assertTrue(System.nanoTime() - closed < TimeUnit.SECONDS.toNanos(5), "woken promptly");
        waitedOn.close();
        assertThrows(IllegalStateException.class, () -> waitedOn.createId(PortSpace.TCP), "still closed");
    }

    /** Dropped channels are closed by their Cleaner (each warns): their file descriptors do not pile up. */
    @Test
    void droppedEventChannelsAreClosedByTheirCleaner() throws Exception {
        long before = openDescriptors();
        for (int i = 0; i < 50; i++) {
            EventChannel.create();
        }
        assertTrue(openDescriptors() >= before + 50, "each channel holds a descriptor");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (openDescriptors() > before + 5 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(100);
        }
        assertTrue(openDescriptors() <= before + 5, "descriptors: " + before + " before, " + openDescriptors() + " now");
    }

    /** An open channel does not keep the ids the program dropped: each is destroyed, with a warning, while it lives. */
    @Test
    void droppedIdsAreClosedWhileTheirChannelLives() throws Exception {
        try (EventChannel channel = EventChannel.create()) {
            java.lang.ref.WeakReference<CmId> last = null;
            long before = io.rdma4j.verbs.internal.NativeResource.leaksReclaimed();
            for (int i = 0; i < 100; i++) {
                last = new java.lang.ref.WeakReference<>(channel.createId(PortSpace.TCP));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (io.rdma4j.verbs.internal.NativeResource.leaksReclaimed() < before + 100
                    && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(100);
            }
            assertTrue(io.rdma4j.verbs.internal.NativeResource.leaksReclaimed() >= before + 100,
                    "closed by the Cleaner: " + (io.rdma4j.verbs.internal.NativeResource.leaksReclaimed() - before));
            assertTrue(last.get() == null, "the channel let go of them");
            assertFalse(channel.isClosed());
            channel.createId(PortSpace.TCP).close(); // and goes on
        }
    }

    private static long openDescriptors() throws java.io.IOException {
        try (java.util.stream.Stream<java.nio.file.Path> fds = java.nio.file.Files.list(
                java.nio.file.Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    /** Waits for both ESTABLISHED events; returns the client's. */
    private CmEvent awaitEstablished(CmId client, CmId server) throws InterruptedException {
        CmEvent first = channel.expect(CmEventType.ESTABLISHED, TIMEOUT);
        CmEvent second = channel.expect(CmEventType.ESTABLISHED, TIMEOUT);
        assertEquals(Set.of(client, server), Set.of(first.id(), second.id()));
        return first.id() == client ? first : second;
    }

    private CmId resolved() throws InterruptedException {
        CmId client = channel.createId(PortSpace.TCP);
        client.resolveAddress(listening, TIMEOUT);
        channel.expect(CmEventType.ADDRESS_RESOLVED, TIMEOUT);
        client.resolveRoute(TIMEOUT);
        channel.expect(CmEventType.ROUTE_RESOLVED, TIMEOUT);
        return client;
    }

    /** Both ends' verbs objects, on librdmacm's context of the test device. */
    private final class Ends implements AutoCloseable {
        final ProtectionDomain clientPd = listener.context().allocateProtectionDomain();
        final ProtectionDomain serverPd = listener.context().allocateProtectionDomain();
        final CompletionQueue clientCq = listener.context().createCompletionQueue(16);
        final CompletionQueue serverCq = listener.context().createCompletionQueue(16);
        final SendWorkRequests sends = new SendWorkRequests(1, 1);
        final ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
        final WorkCompletions completions = new WorkCompletions(4);
        QueuePair clientQueuePair;

        QueuePair clientQueuePair(CmId client) {
            clientQueuePair = client.createQueuePair(clientPd.queuePair(QueuePairType.RELIABLE_CONNECTED)
                    .completionQueue(clientCq));
            return clientQueuePair;
        }

        /** RDMA WRITE into the server's buffer, READ it back, SEND a message: all checked. */
        void moveData(QueuePair client, RemoteBuffer target, MemoryRegion serverMemory) throws InterruptedException {
            try (MemoryRegion local = clientPd.allocateMemory(8192, ACCESS)) {
                for (int i = 0; i < 4096; i++) {
                    local.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
                }
                client.postSend(sends.clear().rdmaWrite(1, target.address(), target.rkey()).gather(local, 0, 4096)
                        .signaled());
                awaitOne(clientCq);
                assertEquals(local.segment().asSlice(0, 4096).mismatch(serverMemory.segment().asSlice(0, 4096)), -1);
                client.postSend(sends.clear().rdmaRead(2, target.address(), target.rkey()).gather(local, 4096, 4096)
                        .signaled());
                awaitOne(clientCq);
                assertEquals(-1, local.segment().asSlice(0, 4096).mismatch(local.segment().asSlice(4096, 4096)));
                local.segment().setString(0, "over rdma_cm");
                client.postSend(sends.clear().send(3).gather(local, 0, 13).signaled());
                awaitOne(clientCq);
                awaitOne(serverCq);
                assertEquals("over rdma_cm", serverMemory.segment().getString(4096));
            }
        }

        private void awaitOne(CompletionQueue cq) {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            int n;
            while ((n = cq.poll(completions)) == 0) {
                if (System.nanoTime() > deadline) {
                    fail("no completion within " + TIMEOUT);
                }
                Thread.onSpinWait();
            }
            assertEquals(1, n);
            assertEquals(WorkCompletionStatus.SUCCESS, completions.status(0));
        }

        @Override
        public void close() {
            if (channel != null && clientQueuePair != null) {
                clientQueuePair.close();
            }
            sends.close();
            receives.close();
            completions.close();
            clientPd.close();
            serverPd.close();
            clientCq.close();
            serverCq.close();
        }
    }
}
