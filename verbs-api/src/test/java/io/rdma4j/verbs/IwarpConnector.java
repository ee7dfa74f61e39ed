package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.bindings.shim.FileDescriptors;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.rdma_cm_event;
import io.rdma4j.bindings.verbs.rdma_conn_param;
import io.rdma4j.bindings.verbs.rdma_event_channel;
import io.rdma4j.bindings.verbs.sockaddr_in;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * Connects two of rdma4j's queue pairs over iWARP, where a connection can only be made through the connection
 * manager (MPA over TCP): a test-only use of the raw librdmacm bindings, listening on and connecting to the test
 * device's IP address. The queue pairs stay rdma4j's own (created with {@code ibv_create_qp}); rdma_cm is given
 * their numbers, and the kernel moves them to RTS when the connection is established.
 */
final class IwarpConnector implements AutoCloseable {

    private static final int TIMEOUT_MS = 10_000;

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment channel;
    private MemorySegment listenId = MemorySegment.NULL;
    private MemorySegment clientId = MemorySegment.NULL;
    private MemorySegment serverId = MemorySegment.NULL;

    IwarpConnector() {
        channel = RdmaCore.rdma_create_event_channel();
        if (channel.address() == 0) {
            fail("rdma_create_event_channel failed (is rdma_ucm loaded?)");
        }
        int fd = rdma_event_channel.fd(channel.reinterpret(rdma_event_channel.layout().byteSize()));
        assertEquals(0, FileDescriptors.makeNonBlocking(fd));
    }

    /** Connects {@code client} to {@code server} (both in INIT) through {@code address}. */
    void connect(QueuePair client, QueuePair server, InetAddress address) {
        listenId = createId();
        MemorySegment listenAddress = sockaddr(address, (short) 0);
        check(RdmaCore.rdma_bind_addr(listenId, listenAddress), "rdma_bind_addr");
        check(RdmaCore.rdma_listen(listenId, 4), "rdma_listen");
        short port = RdmaCore.rdma_get_src_port(listenId);

        clientId = createId();
        check(RdmaCore.rdma_resolve_addr(clientId, MemorySegment.NULL, sockaddr(address, port), 2000),
                "rdma_resolve_addr");
        expect(RdmaCore.RDMA_CM_EVENT_ADDR_RESOLVED());
        check(RdmaCore.rdma_resolve_route(clientId, 2000), "rdma_resolve_route");
        expect(RdmaCore.RDMA_CM_EVENT_ROUTE_RESOLVED());

        check(RdmaCore.rdma_connect(clientId, connectionParameters(client)), "rdma_connect");
        serverId = expect(RdmaCore.RDMA_CM_EVENT_CONNECT_REQUEST());
        check(RdmaCore.rdma_accept(serverId, connectionParameters(server)), "rdma_accept");
        expect(RdmaCore.RDMA_CM_EVENT_ESTABLISHED());
        expect(RdmaCore.RDMA_CM_EVENT_ESTABLISHED());
    }

    private MemorySegment connectionParameters(QueuePair qp) {
        MemorySegment param = arena.allocate(rdma_conn_param.layout());
        rdma_conn_param.responder_resources(param, (byte) 1);
        rdma_conn_param.initiator_depth(param, (byte) 1);
        rdma_conn_param.retry_count(param, (byte) 7);
        rdma_conn_param.rnr_retry_count(param, (byte) 7);
        rdma_conn_param.qp_num(param, qp.number());
        return param;
    }

    private MemorySegment createId() {
        MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
        check(RdmaCore.rdma_create_id(channel, out, MemorySegment.NULL, RdmaCore.RDMA_PS_TCP()), "rdma_create_id");
        return out.get(ValueLayout.ADDRESS, 0);
    }

    private MemorySegment sockaddr(InetAddress address, short networkOrderPort) {
        if (!(address instanceof Inet4Address)) {
            fail("the iWARP test connector handles IPv4 only: " + address);
        }
        MemorySegment sa = arena.allocate(sockaddr_in.layout());
        sockaddr_in.sin_family(sa, (short) RdmaCore.AF_INET());
        sockaddr_in.sin_port(sa, networkOrderPort);
        MemorySegment.copy(address.getAddress(), 0, sockaddr_in.sin_addr(sa), ValueLayout.JAVA_BYTE, 0, 4);
        return sa;
    }

    /** Waits for the next CM event, which must be {@code type}; returns its id. */
    private MemorySegment expect(int type) {
        MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
        int fd = rdma_event_channel.fd(channel.reinterpret(rdma_event_channel.layout().byteSize()));
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (RdmaCore.rdma_get_cm_event(channel, out) != 0) {
            if (System.currentTimeMillis() > deadline) {
                return fail("no rdma_cm event " + RdmaCore.rdma_event_str(type).getString(0) + " within " + TIMEOUT_MS + " ms");
            }
            FileDescriptors.awaitReadable(fd, 100);
        }
        MemorySegment event = out.get(ValueLayout.ADDRESS, 0).reinterpret(rdma_cm_event.layout().byteSize());
        int got = rdma_cm_event.event(event);
        int status = rdma_cm_event.status(event);
        MemorySegment id = rdma_cm_event.id(event);
        RdmaCore.rdma_ack_cm_event(event);
        if (got != type) {
            fail("expected rdma_cm event " + RdmaCore.rdma_event_str(type).getString(0) + ", got "
                    + RdmaCore.rdma_event_str(got).getString(0) + " (status " + status + ")");
        }
        return id;
    }

    private static void check(int rc, String verb) {
        if (rc != 0) {
            fail(verb + " failed");
        }
    }

    @Override
    public void close() {
        for (MemorySegment id : new MemorySegment[] {clientId, serverId}) {
            if (id.address() != 0) {
                RdmaCore.rdma_disconnect(id);
            }
        }
        for (MemorySegment id : new MemorySegment[] {clientId, serverId, listenId}) {
            if (id.address() != 0) {
                drainEvents();
                RdmaCore.rdma_destroy_id(id);
            }
        }
        RdmaCore.rdma_destroy_event_channel(channel);
        arena.close();
    }

    /** Acknowledges pending events (disconnects): rdma_destroy_id waits for its events to be acknowledged. */
    private void drainEvents() {
        MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
        while (RdmaCore.rdma_get_cm_event(channel, out) == 0) {
            RdmaCore.rdma_ack_cm_event(out.get(ValueLayout.ADDRESS, 0));
        }
    }
}
