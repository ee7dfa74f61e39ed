package io.rdma4j.cm;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedConnectionManager;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_context;
import io.rdma4j.bindings.verbs.ibv_device;
import io.rdma4j.bindings.verbs.rdma_cm_id;
import io.rdma4j.bindings.verbs.rdma_conn_param;
import io.rdma4j.bindings.verbs.sockaddr_in;
import io.rdma4j.bindings.verbs.sockaddr_in6;
import io.rdma4j.verbs.RdmaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;

/**
 * A connection-manager id ({@code struct rdma_cm_id}, from {@code rdma_create_id} or a connect request; closed by
 * {@code rdma_destroy_id}): the RDMA counterpart of a socket. Passive side: {@link #bind}, {@link #listen}, then
 * {@link #accept} or {@link #reject} the ids of {@link CmEventType#CONNECT_REQUEST} events. Active side:
 * {@link #resolveAddress}, {@link #resolveRoute}, {@link #connect}. Each step completes with an event on the
 * {@link EventChannel}.
 *
 * <p>Queue pairs stay rdma4j's own: {@link ConnectionParameters} carry their number. On iWARP the kernel moves the
 * queue pairs to RTS when the connection is established (move them to INIT first); on InfiniBand and RoCE the
 * application moves them itself, answering {@link CmEventType#CONNECT_RESPONSE} with {@link #establish()}.
 *
 * <p>Lifetime: closed with its channel at the latest. Thread-safety: calls on one id must not race with its
 * {@link #close()}; a closed id throws {@link IllegalStateException}.
 */
public final class CmId implements AutoCloseable {

    private final EventChannel channel;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment id;
    private boolean closed;

    CmId(EventChannel channel, MemorySegment id) {
        this.channel = channel;
        this.id = id.reinterpret(rdma_cm_id.layout().byteSize(), arena, null);
    }

    /** Binds to a local address and port ({@code rdma_bind_addr}); port 0 picks one. */
    public void bind(InetSocketAddress local) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = Errno.state();
            check(ExportedConnectionManager.rdma_bind_addr(state, handle(), sockaddr(local, call)), "rdma_bind_addr",
                    state, local.toString());
        }
    }

    /** Listens for connect requests ({@code rdma_listen}). */
    public void listen(int backlog) {
        MemorySegment state = Errno.state();
        check(ExportedConnectionManager.rdma_listen(state, handle(), backlog), "rdma_listen", state, null);
    }

    /** Starts resolving {@code destination} to a local device ({@code rdma_resolve_addr}); then expect ADDRESS_RESOLVED. */
    public void resolveAddress(InetSocketAddress destination, Duration timeout) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = Errno.state();
            check(ExportedConnectionManager.rdma_resolve_addr(state, handle(), MemorySegment.NULL,
                    sockaddr(destination, call), (int) timeout.toMillis()), "rdma_resolve_addr", state,
                    destination.toString());
        }
    }

    /** Starts resolving the route ({@code rdma_resolve_route}); then expect ROUTE_RESOLVED. */
    public void resolveRoute(Duration timeout) {
        MemorySegment state = Errno.state();
        check(ExportedConnectionManager.rdma_resolve_route(state, handle(), (int) timeout.toMillis()),
                "rdma_resolve_route", state, null);
    }

    /** Sends a connect request ({@code rdma_connect}). */
    public void connect(ConnectionParameters parameters) {
        withParameters(parameters, (state, param) -> ExportedConnectionManager.rdma_connect(state, handle(), param),
                "rdma_connect");
    }

    /** Accepts this connect request's connection ({@code rdma_accept}). */
    public void accept(ConnectionParameters parameters) {
        withParameters(parameters, (state, param) -> ExportedConnectionManager.rdma_accept(state, handle(), param),
                "rdma_accept");
    }

    /** Rejects this connect request ({@code rdma_reject}); the active side gets {@link CmEventType#REJECTED}. */
    public void reject() {
        MemorySegment state = Errno.state();
        check(ExportedConnectionManager.rdma_reject(state, handle(), MemorySegment.NULL, (byte) 0), "rdma_reject",
                state, null);
    }

    /** Completes the active side of an InfiniBand/RoCE connection after CONNECT_RESPONSE ({@code rdma_establish}). */
    public void establish() {
        MemorySegment state = Errno.state();
        check(ExportedConnectionManager.rdma_establish(state, handle()), "rdma_establish", state, null);
    }

    /** Disconnects ({@code rdma_disconnect}); both sides then get {@link CmEventType#DISCONNECTED}. */
    public void disconnect() {
        MemorySegment state = Errno.state();
        check(ExportedConnectionManager.rdma_disconnect(state, handle()), "rdma_disconnect", state, null);
    }

    /** The local port, once bound or resolved ({@code rdma_get_src_port}, in host order). */
    public int localPort() {
        return Short.toUnsignedInt(Short.reverseBytes(RdmaCore.rdma_get_src_port(handle())));
    }

    /** The RDMA device the id is bound to (after bind to a device address or address resolution), if any. */
    public Optional<String> deviceName() {
        MemorySegment verbs = rdma_cm_id.verbs(handle());
        if (verbs.address() == 0) {
            return Optional.empty();
        }
        MemorySegment device = ibv_context.device(verbs.reinterpret(ibv_context.layout().byteSize()));
        return Optional.of(ibv_device.name(device.reinterpret(ibv_device.layout().byteSize())).getString(0));
    }

    /** Destroys the id ({@code rdma_destroy_id}). Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        MemorySegment pointer = MemorySegment.ofAddress(id.address());
        arena.close();
        channel.unregister(pointer.address());
        MemorySegment state = Errno.state();
        if (ExportedConnectionManager.rdma_destroy_id(state, pointer) != 0) {
            throw RdmaException.of("rdma_destroy_id", Errno.get(state));
        }
    }

    @FunctionalInterface
    private interface ParameterCall {
        int call(MemorySegment state, MemorySegment param);
    }

    private void withParameters(ConnectionParameters parameters, ParameterCall verb, String name) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment param = call.allocate(rdma_conn_param.layout());
            parameters.writeTo(param);
            MemorySegment state = Errno.state();
            check(verb.call(state, param), name, state, parameters.toString());
        }
    }

    private MemorySegment handle() {
        if (!id.scope().isAlive()) {
            throw new IllegalStateException("the rdma_cm id is closed");
        }
        return id;
    }

    private static void check(int rc, String verb, MemorySegment state, String context) {
        if (rc != 0) {
            throw RdmaException.of(verb, Errno.get(state), context);
        }
    }

    /** A {@code sockaddr_in} or {@code sockaddr_in6} for {@code address}, port in network order. */
    private static MemorySegment sockaddr(InetSocketAddress address, Arena arena) {
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address: " + address);
        }
        short port = Short.reverseBytes((short) address.getPort());
        byte[] ip = address.getAddress().getAddress();
        if (address.getAddress() instanceof Inet4Address) {
            MemorySegment sa = arena.allocate(sockaddr_in.layout());
            sockaddr_in.sin_family(sa, (short) RdmaCore.AF_INET());
            sockaddr_in.sin_port(sa, port);
            MemorySegment.copy(ip, 0, sockaddr_in.sin_addr(sa), ValueLayout.JAVA_BYTE, 0, 4);
            return sa;
        }
        MemorySegment sa = arena.allocate(sockaddr_in6.layout());
        sockaddr_in6.sin6_family(sa, (short) RdmaCore.AF_INET6());
        sockaddr_in6.sin6_port(sa, port);
        MemorySegment.copy(ip, 0, sockaddr_in6.sin6_addr(sa), ValueLayout.JAVA_BYTE, 0, 16);
        return sa;
    }
}
