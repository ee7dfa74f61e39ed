package io.rdma4j.cm;

import io.rdma4j.bindings.shim.Pointers;
import static io.rdma4j.cm.CmIdState.ACCEPTING;
import static io.rdma4j.cm.CmIdState.ADDRESS_RESOLVED;
import static io.rdma4j.cm.CmIdState.BOUND;
import static io.rdma4j.cm.CmIdState.CONNECTING;
import static io.rdma4j.cm.CmIdState.CONNECT_REQUEST;
import static io.rdma4j.cm.CmIdState.CONNECT_RESPONSE;
import static io.rdma4j.cm.CmIdState.DISCONNECTED;
import static io.rdma4j.cm.CmIdState.ESTABLISHED;
import static io.rdma4j.cm.CmIdState.FAILED;
import static io.rdma4j.cm.CmIdState.IDLE;
import static io.rdma4j.cm.CmIdState.LISTENING;
import static io.rdma4j.cm.CmIdState.REJECTED;
import static io.rdma4j.cm.CmIdState.RESOLVING_ADDRESS;
import static io.rdma4j.cm.CmIdState.RESOLVING_ROUTE;
import static io.rdma4j.cm.CmIdState.ROUTE_RESOLVED;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedConnectionManager;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_qp_attr;
import io.rdma4j.bindings.verbs.rdma_addr;
import io.rdma4j.bindings.verbs.rdma_cm_id;
import io.rdma4j.bindings.verbs.rdma_conn_param;
import io.rdma4j.bindings.verbs.rdma_route;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairAttributes;
import io.rdma4j.verbs.QueuePairState;
import io.rdma4j.verbs.VerbException;
import io.rdma4j.verbs.Transport;
import io.rdma4j.verbs.internal.FieldRange;
import io.rdma4j.verbs.NativeObject;
import io.rdma4j.verbs.internal.NativeResource;
import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.verbs.internal.QueuePairFactory;
import io.rdma4j.verbs.internal.VerbsInternals;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A connection-manager id ({@code struct rdma_cm_id}, from {@code rdma_create_id} or a connect request; closed by
 * {@code rdma_destroy_id}): the RDMA counterpart of a socket. Passive side: {@link #bind}, {@link #listen}, then
 * {@link #accept} or {@link #reject} the ids of {@link CmEventType#CONNECT_REQUEST} events. Active side:
 * {@link #resolveAddress}, {@link #resolveRoute}, {@link #connect}. Each step completes with an event on the
 * {@link EventChannel}. Most programs use {@link Connector} and {@link Acceptor} instead, which do all of this.
 *
 * <p>Queue pairs: either the id's own ({@link #createQueuePair}, {@code rdma_create_qp}), which librdmacm moves
 * through its states during connect and accept, or the application's, which it moves itself with the attributes
 * librdmacm negotiated ({@link #initQueuePairAttributes}), answering {@link CmEventType#CONNECT_RESPONSE} with
 * {@link #establish()}. Either is created on the id's {@link #context()}.
 *
 * <p>States: rdma4j tracks the id's {@link CmIdState} and refuses a call that the state does not allow with
 * {@link IllegalStateException}, before librdmacm runs.
 *
 * <p>Lifetime: {@link NativeObject}'s rules. An id keeps its channel alive and closes before it; closing the id first
 * destroys its own queue pair; close ({@code rdma_destroy_id}) is idempotent, thread-safe and refused while a call on
 * the id runs, and a failed destroy leaves the id closed to Java and abandoned; an id dropped without being closed
 * (a connect request neither accepted nor rejected, say) is closed by a Cleaner, with a warning, while its channel
 * lives on: hold a listening id as long as it should listen, as one holds a {@code ServerSocket}. Thread-safety: every method may be called from any thread; calls on one id are serialized.
 */
public final class CmId extends NativeObject {

    /** Private data that fits through librdmacm per transport and message (the limits of the wire protocols). */
    private static final int IB_CONNECT_PRIVATE_DATA = 56;
    private static final int IB_ACCEPT_PRIVATE_DATA = 196;
    private static final int IB_REJECT_PRIVATE_DATA = 148;
    private static final int IB_UD_CONNECT_PRIVATE_DATA = 180;
    private static final int IB_UD_ACCEPT_PRIVATE_DATA = 136;
    /**
     * The kernel's 256 bytes (RDMA_MAX_PRIVATE_DATA) less the 4-byte IRD/ORD header of MPA version 2, less one more:
     * siw (Linux 6.1) adds that header to a {@code u8} length, so 252 bytes go out as a frame announcing none and
     * the peer resets the connection.
     */
    private static final int IWARP_PRIVATE_DATA = 251;

    private final NativeResource resource;
    private final PortSpace portSpace;
    private volatile EventChannel channel;
    private volatile CmIdState state;
    private volatile QueuePair queuePair;
    /** Whether this side called {@link #disconnect()} (else a DISCONNECTED comes from the peer). */
    private boolean disconnecting;

    CmId(EventChannel channel, MemorySegment id, PortSpace portSpace, CmIdState state) {
        this.channel = channel;
        this.portSpace = portSpace;
        this.state = state;
        super(channel, id, rdma_cm_id.layout().byteSize(), Rank.CM_ID, "rdma_destroy_id", pointer -> {
            MemorySegment errno = Errno.state();
            return ExportedConnectionManager.rdma_destroy_id(errno, pointer) == 0 ? 0 : Errno.get(errno);
        });
        this.resource = nativeResource();
        findable(); // its channel's events name it by address
    }

    /** Where the id stands; {@link CmIdState#CLOSED} once it (or its channel) is closed. */
    public CmIdState state() {
        return resource.isClosed() ? CmIdState.CLOSED : state;
    }

    /** The port space it was created in (or, for a connect request, its listener's). */
    public PortSpace portSpace() {
        return portSpace;
    }

    /** The channel its events arrive on. */
    public EventChannel channel() {
        return channel;
    }

    /**
     * Binds to a local address and port ({@code rdma_bind_addr}); port 0 picks one. Binding to a device's address
     * gives the id that device's {@link #context()}.
     */
    public synchronized void bind(InetSocketAddress local) {
        require("bind", IDLE);
        try (Arena call = Arena.ofConfined()) {
            MemorySegment address = SocketAddresses.toC(local, call);
            verb("rdma_bind_addr", local.toString(),
                    (errno, id) -> ExportedConnectionManager.rdma_bind_addr(errno, id, address));
        }
        state = BOUND;
    }

    /** Listens for connect requests ({@code rdma_listen}); binds to any address and a free port first if unbound. */
    public synchronized void listen(int backlog) {
        require("listen", IDLE, BOUND);
        if (backlog < 0) {
            throw new IllegalArgumentException("backlog must not be negative: " + backlog);
        }
        verb("rdma_listen", null, (errno, id) -> ExportedConnectionManager.rdma_listen(errno, id, backlog));
        state = LISTENING;
    }

    /** Starts resolving {@code destination} to a local device ({@code rdma_resolve_addr}); then expect ADDRESS_RESOLVED. */
    public void resolveAddress(InetSocketAddress destination, Duration timeout) {
        resolveAddress(null, destination, timeout);
    }

    /**
     * Starts resolving {@code destination} to a local device, from the local address {@code source} (or any, when
     * {@code null}) ({@code rdma_resolve_addr}); then expect ADDRESS_RESOLVED or ADDRESS_ERROR within
     * {@code timeout}.
     */
    public synchronized void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        require("resolveAddress", IDLE, BOUND);
        int millis = millis(timeout);
        try (Arena call = Arena.ofConfined()) {
            MemorySegment from = source == null ? MemorySegment.NULL : SocketAddresses.toC(source, call);
            MemorySegment to = SocketAddresses.toC(destination, call);
            verb("rdma_resolve_addr", destination.toString(),
                    (errno, id) -> ExportedConnectionManager.rdma_resolve_addr(errno, id, from, to, millis));
        }
        state = RESOLVING_ADDRESS;
    }

    /** Starts resolving the route ({@code rdma_resolve_route}); then expect ROUTE_RESOLVED or ROUTE_ERROR. */
    public synchronized void resolveRoute(Duration timeout) {
        require("resolveRoute", ADDRESS_RESOLVED);
        int millis = millis(timeout);
        verb("rdma_resolve_route", null,
                (errno, id) -> ExportedConnectionManager.rdma_resolve_route(errno, id, millis));
        state = RESOLVING_ROUTE;
    }

    /**
     * Sends a connect request ({@code rdma_connect}); then expect ESTABLISHED (the id's own queue pair, iWARP) or
     * CONNECT_RESPONSE (the application's queue pair on InfiniBand/RoCE), or REJECTED, UNREACHABLE, CONNECT_ERROR.
     * Private data: at most 56 bytes on InfiniBand/RoCE (92 of the CM's REQ less rdma_cm's 36-byte header), 180
     * for {@link PortSpace#UDP}, 251 on iWARP (256 less MPA v2's IRD/ORD header, less one for siw).
     *
     * @throws IllegalArgumentException if the private data exceeds the transport's limit (named in the message)
     */
    public synchronized void connect(ConnectionParameters parameters) {
        require("connect", ROUTE_RESOLVED);
        checkPrivateData("rdma_connect", parameters.privateData().length,
                portSpace == PortSpace.UDP ? IB_UD_CONNECT_PRIVATE_DATA : IB_CONNECT_PRIVATE_DATA);
        withParameters(parameters, "rdma_connect", ExportedConnectionManager::rdma_connect);
        state = CONNECTING;
    }

    /**
     * Accepts this connect request's connection ({@code rdma_accept}); then expect ESTABLISHED (not for
     * {@link PortSpace#UDP}, where the peer is answered at once). Private data: at most 196 bytes on
     * InfiniBand/RoCE, 136 for UDP, 251 on iWARP.
     *
     * @throws IllegalArgumentException if the private data exceeds the transport's limit
     */
    public synchronized void accept(ConnectionParameters parameters) {
        require("accept", CONNECT_REQUEST);
        checkPrivateData("rdma_accept", parameters.privateData().length,
                portSpace == PortSpace.UDP ? IB_UD_ACCEPT_PRIVATE_DATA : IB_ACCEPT_PRIVATE_DATA);
        withParameters(parameters, "rdma_accept", ExportedConnectionManager::rdma_accept);
        state = portSpace == PortSpace.UDP ? ESTABLISHED : ACCEPTING;
    }

    /** Rejects this connect request without private data ({@code rdma_reject}). */
    public void reject() {
        reject(new byte[0]);
    }

    /** {@link #reject(byte[])} with the bytes of {@code privateData}. */
    public void reject(MemorySegment privateData) {
        reject(ConnectionParameters.bytesOf(privateData));
    }

    /**
     * Rejects this connect request ({@code rdma_reject}); the active side gets {@link CmEventType#REJECTED} with
     * {@code privateData}: at most 148 bytes on InfiniBand/RoCE, 251 on iWARP.
     *
     * @throws IllegalArgumentException if the private data exceeds the transport's limit
     */
    public synchronized void reject(byte[] privateData) {
        require("reject", CONNECT_REQUEST);
        checkPrivateData("rdma_reject", privateData.length, IB_REJECT_PRIVATE_DATA);
        try (Arena call = Arena.ofConfined()) {
            MemorySegment data = privateData.length == 0 ? MemorySegment.NULL
                    : call.allocateFrom(ValueLayout.JAVA_BYTE, privateData);
            verb("rdma_reject", null,
                    (errno, id) -> ExportedConnectionManager.rdma_reject(errno, id, data, (byte) privateData.length));
        }
        state = REJECTED;
    }

    /**
     * Completes the active side of an InfiniBand/RoCE connection to the application's queue pair after
     * CONNECT_RESPONSE ({@code rdma_establish}), once that queue pair is in RTS.
     */
    public synchronized void establish() {
        require("establish", CONNECT_RESPONSE);
        verb("rdma_establish", null, ExportedConnectionManager::rdma_establish);
        state = ESTABLISHED;
    }

    /**
     * Disconnects ({@code rdma_disconnect}): the id's own queue pair goes to ERROR (its posted work flushes), and
     * both sides get {@link CmEventType#DISCONNECTED}. When the peer disconnects first, rdma4j answers for this side
     * as it takes the DISCONNECTED event (on InfiniBand/RoCE the initiator waits for that answer, the CM's DREP,
     * and would otherwise see its own DISCONNECTED only when its request times out); calling this then does nothing.
     */
    public synchronized void disconnect() {
        require("disconnect", CONNECTING, CONNECT_RESPONSE, ACCEPTING, ESTABLISHED, DISCONNECTED);
        if (disconnecting) {
            return;
        }
        disconnecting = true;
        verb("rdma_disconnect", null, ExportedConnectionManager::rdma_disconnect);
    }

    /**
     * The verbs context of the id's device, opened and owned by librdmacm, once the id has a device (after address
     * resolution, binding to a device's address, or for a connect request). Create the connection's protection
     * domain, completion queues, memory regions and queue pair on it: they are ordinary verbs objects, closed by
     * the application. The context itself is never closed (librdmacm keeps it open); it is the same object for
     * every id on that device.
     *
     * @throws IllegalStateException if the id has no device yet
     */
    public Context context() {
        MemorySegment verbs = resource.withPinned(rdma_cm_id::verbs);
        if (verbs.address() == 0) {
            throw new IllegalStateException("the id has no device yet (" + state() + "): resolve an address, bind to"
                    + " a device's address, or take a connect request");
        }
        return VerbsInternals.access().borrowedContext(verbs);
    }

    /** The name of the id's device, if it has one. */
    public Optional<String> deviceName() {
        return resource.withPinned(rdma_cm_id::verbs).address() == 0 ? Optional.empty()
                : Optional.of(context().device().name());
    }

    /** The id's port on its device ({@code port_num}), once it has a device. */
    public int devicePort() {
        context();
        return Byte.toUnsignedInt(resource.withPinned(rdma_cm_id::port_num));
    }

    /**
     * The attributes that move a queue pair of the application's own to {@code target} for this connection
     * ({@code rdma_init_qp_attr}): INIT (port, P_Key index, access; Q_Key for UD) once the id has a device, RTR and
     * RTS once the peer's parameters are known (a connect request, or CONNECT_RESPONSE). Pass them to
     * {@link QueuePair#modify}, adding or changing what the application wants.
     *
     * @throws VerbException if librdmacm cannot give them in this state (EINVAL)
     */
    public synchronized QueuePairAttributes initQueuePairAttributes(QueuePairState target) {
        Objects.requireNonNull(target, "target");
        context();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment attr = call.allocate(ibv_qp_attr.layout());
            MemorySegment mask = call.allocate(ValueLayout.JAVA_INT);
            ibv_qp_attr.qp_state(attr, target.value());
            verb("rdma_init_qp_attr", target + " in state " + state,
                    (errno, id) -> ExportedConnectionManager.rdma_init_qp_attr(errno, id, attr, mask));
            return VerbsInternals.access().queuePairAttributes(attr, mask.get(ValueLayout.JAVA_INT, 0));
        }
    }

    /**
     * Creates the id's own queue pair ({@code rdma_create_qp}), as {@code builder} describes it, on the id's
     * {@link #context()}: librdmacm moves it to RTS during {@link #connect} and {@link #accept} (and to ERROR on
     * {@link #disconnect}), and announces its number itself. It posts and polls as any queue pair. It closes
     * before the id, or with its protection domain ({@code rdma_destroy_qp}); it keeps the id reachable.
     *
     * @param builder from {@link ProtectionDomain#queuePair}, with its completion queues set; the protection domain
     *                must be on this id's {@link #context()}
     * @throws IllegalStateException    if the id has no device yet, or has a queue pair already
     * @throws IllegalArgumentException if the protection domain belongs to another context
     * @throws VerbException            if the verb fails
     */
    public synchronized QueuePair createQueuePair(QueuePair.Builder builder) {
        require("createQueuePair", ADDRESS_RESOLVED, RESOLVING_ROUTE, ROUTE_RESOLVED, CONNECT_REQUEST, BOUND);
        VerbsInternals.Access verbs = VerbsInternals.access();
        Context context = context();
        ProtectionDomain pd = verbs.protectionDomain(builder);
        if (pd.context() != context) {
            throw new IllegalArgumentException("the queue pair's protection domain belongs to " + pd.context().device()
                    .name() + "'s context opened by the application; create it on the id's context()");
        }
        if (queuePair != null && !queuePair.isClosed()) {
            throw new IllegalStateException("the id has a queue pair already: " + queuePair);
        }
        MemorySegment id = resource.pinned();
        long idAddress = id.address();
        QueuePair created;
        try {
            created = verbs.createQueuePair(builder, new QueuePairFactory() {
                @Override
                public MemorySegment create(MemorySegment errno, MemorySegment pdHandle, MemorySegment init,
                                            boolean extended) {
                    int rc = extended ? ExportedConnectionManager.rdma_create_qp_ex(errno, id, init)
                            : ExportedConnectionManager.rdma_create_qp(errno, id, pdHandle, init);
                    return rc == 0 ? rdma_cm_id.qp(id) : MemorySegment.NULL;
                }

                @Override
                public String verb(boolean extended) {
                    return extended ? "rdma_create_qp_ex" : "rdma_create_qp";
                }

                @Override
                public String destroyVerb() {
                    return "rdma_destroy_qp";
                }

                @Override
                public NativeResource.Destroyer destroyer(MemorySegment qp) {
                    // rdma_destroy_qp is ibv_destroy_qp and id->qp = NULL, without the errno: done here to keep it.
                    return pointer -> {
                        int rc = RdmaCore.ibv_destroy_qp(pointer);
                        if (rc == 0) {
                            rdma_cm_id.qp(Pointers.at(idAddress, rdma_cm_id.layout().byteSize()),
                                    MemorySegment.NULL);
                        }
                        return rc;
                    };
                }
            });
            // Still pinned: the id cannot close before the queue pair is tied to it.
            verbs.resource(created).closesWith(resource);
        } finally {
            resource.unpin();
        }
        verbs.keepReachable(created, this);
        queuePair = created;
        return created;
    }

    /** The id's own queue pair ({@link #createQueuePair}), if it has one that is open. */
    public Optional<QueuePair> queuePair() {
        QueuePair qp = queuePair;
        return qp == null || qp.isClosed() ? Optional.empty() : Optional.of(qp);
    }

    /** The local address, once bound or resolved ({@code rdma_get_local_addr}). */
    public InetSocketAddress localAddress() {
        return resource.withPinned(
                id -> SocketAddresses.fromC(rdma_addr.src_addr(rdma_route.addr(rdma_cm_id.route(id)))));
    }

    /** The peer's address, once resolved or connected ({@code rdma_get_peer_addr}). */
    public InetSocketAddress peerAddress() {
        return resource.withPinned(
                id -> SocketAddresses.fromC(rdma_addr.dst_addr(rdma_route.addr(rdma_cm_id.route(id)))));
    }

    /** The local port, once bound or resolved ({@code rdma_get_src_port}, in host order). */
    public int localPort() {
        return Short.toUnsignedInt(Short.reverseBytes(resource.withPinned(RdmaCore::rdma_get_src_port)));
    }

    /**
     * Sets the IP type of service of the connection's packets ({@code RDMA_OPTION_ID_TOS}); before
     * {@link #resolveRoute} (active) or {@link #listen}.
     */
    public void setTypeOfService(int tos) {
        FieldRange.unsigned8("type of service", tos);
        setOption("RDMA_OPTION_ID_TOS", RdmaCore.RDMA_OPTION_ID(), RdmaCore.RDMA_OPTION_ID_TOS(),
                ValueLayout.JAVA_BYTE.byteSize(), s -> s.set(ValueLayout.JAVA_BYTE, 0, (byte) tos));
    }

    /** Lets a listener bind to a port still in use by connections in time-wait ({@code RDMA_OPTION_ID_REUSEADDR}); before {@link #bind}. */
    public void setReuseAddress(boolean reuse) {
        setOption("RDMA_OPTION_ID_REUSEADDR", RdmaCore.RDMA_OPTION_ID(), RdmaCore.RDMA_OPTION_ID_REUSEADDR(),
                ValueLayout.JAVA_INT.byteSize(), s -> s.set(ValueLayout.JAVA_INT, 0, reuse ? 1 : 0));
    }

    /**
     * Sets the QP's local ACK timeout code, 0..31 (4.096 µs × 2^code) that librdmacm uses instead of the path's
     * packet life time ({@code RDMA_OPTION_ID_ACK_TIMEOUT}); before connecting.
     */
    public void setAckTimeout(int code) {
        FieldRange.check("ACK timeout code", code, 0, 31);
        setOption("RDMA_OPTION_ID_ACK_TIMEOUT", RdmaCore.RDMA_OPTION_ID(), RdmaCore.RDMA_OPTION_ID_ACK_TIMEOUT(),
                ValueLayout.JAVA_BYTE.byteSize(), s -> s.set(ValueLayout.JAVA_BYTE, 0, (byte) code));
    }

    /**
     * Moves the id to another event channel ({@code rdma_migrate_id}): its later events arrive there, and it closes
     * with that channel. An accepting server moves each connection to a channel of its own, so that one thread per
     * connection waits for its events.
     */
    public synchronized void migrate(EventChannel to) {
        Objects.requireNonNull(to, "to");
        EventChannel from = channel;
        if (from == to) {
            return;
        }
        NativeResource target = VerbsInternals.access().resource(to);
        MemorySegment toChannel = target.pinned();
        try {
            verb("rdma_migrate_id", null,
                    (errno, id) -> ExportedConnectionManager.rdma_migrate_id(errno, id, toChannel));
        } finally {
            target.unpin();
        }
        resource.moveTo(target);
        channel = to;
    }

    /**
     * Joins a multicast group ({@code rdma_join_multicast}) on a {@link PortSpace#UDP} id that has a device; then
     * expect MULTICAST_JOIN, whose {@link UdParameters} address the group, or MULTICAST_ERROR. The id's own queue
     * pair, if any, is attached to the group.
     */
    public synchronized void joinMulticast(InetSocketAddress group) {
        requireMulticast("joinMulticast");
        try (Arena call = Arena.ofConfined()) {
            MemorySegment address = SocketAddresses.toC(group, call);
            verb("rdma_join_multicast", group.toString(),
                    (errno, id) -> ExportedConnectionManager.rdma_join_multicast(errno, id, address,
                            MemorySegment.NULL));
        }
    }

    /** Leaves a multicast group joined before ({@code rdma_leave_multicast}). */
    public synchronized void leaveMulticast(InetSocketAddress group) {
        requireMulticast("leaveMulticast");
        try (Arena call = Arena.ofConfined()) {
            MemorySegment address = SocketAddresses.toC(group, call);
            verb("rdma_leave_multicast", group.toString(),
                    (errno, id) -> ExportedConnectionManager.rdma_leave_multicast(errno, id, address));
        }
    }

    @Override
    protected String describe() {
        return "CmId@0x" + Long.toHexString(resource.address()) + "(" + portSpace + ", " + state() + ")";
    }

    long address() {
        return resource.address();
    }

    /** Moves the state as event {@code type} says; called by the channel before the event is returned. */
    synchronized void onEvent(CmEventType type) {
        if (type == CmEventType.DISCONNECTED && !disconnecting) {
            // The peer disconnected: answer (DREP on InfiniBand/RoCE) so that its DISCONNECTED comes at once, and
            // flush our queue pair. The connection is gone either way, so a failure here changes nothing.
            disconnecting = true;
            resource.withPinned(id -> ExportedConnectionManager.rdma_disconnect(Errno.state(), id));
        }
        state = switch (type) {
            case ADDRESS_RESOLVED -> ADDRESS_RESOLVED;
            case ADDRESS_ERROR -> IDLE;
            case ROUTE_RESOLVED -> ROUTE_RESOLVED;
            case ROUTE_ERROR -> ADDRESS_RESOLVED;
            case CONNECT_RESPONSE -> CONNECT_RESPONSE;
            case ESTABLISHED -> ESTABLISHED;
            case REJECTED -> REJECTED;
            case DISCONNECTED -> DISCONNECTED;
            case CONNECT_ERROR, UNREACHABLE, DEVICE_REMOVAL -> FAILED;
            default -> state;
        };
    }

    private void requireMulticast(String call) {
        if (portSpace != PortSpace.UDP) {
            throw new IllegalStateException(call + " needs a UDP id; this is " + portSpace);
        }
        require(call, BOUND, ADDRESS_RESOLVED, RESOLVING_ROUTE, ROUTE_RESOLVED);
        context();
    }

    private void require(String call, CmIdState... allowed) {
        CmIdState now = state();
        Set<CmIdState> set = EnumSet.noneOf(CmIdState.class);
        set.addAll(java.util.List.of(allowed));
        if (!set.contains(now)) {
            throw new IllegalStateException(call + " is not allowed on " + this + "; it needs " + set);
        }
    }

    /** The private-data limit of {@code verb} on this id's transport. */
    private void checkPrivateData(String verb, int length, int infinibandLimit) {
        boolean iwarp = context().device().transport() == Transport.IWARP;
        int limit = iwarp ? IWARP_PRIVATE_DATA : infinibandLimit;
        if (length > limit) {
            throw new IllegalArgumentException(verb + ": " + length + " bytes of private data exceed the "
                    + (iwarp ? "iWARP (MPA v2)" : "InfiniBand/RoCE" + (portSpace == PortSpace.UDP ? " UD" : ""))
                    + " limit of " + limit + " bytes");
        }
    }

    /** A librdmacm verb on the id; returns 0 or -1 with errno set. */
    @FunctionalInterface
    private interface IdCall {
        int call(MemorySegment errno, MemorySegment id);
    }

    @FunctionalInterface
    private interface ParameterCall {
        int call(MemorySegment errno, MemorySegment id, MemorySegment param);
    }

    /**
     * Runs {@code verb} on the id, pinned (a close on another thread refuses meanwhile).
     *
     * @throws VerbException naming {@code name}, the errno and {@code detail}, if it fails
     */
    private void verb(String name, String detail, IdCall verb) {
        MemorySegment errno = Errno.state();
        if (resource.withPinned(id -> verb.call(errno, id)) != 0) {
            throw VerbException.of(name, Errno.get(errno), detail);
        }
    }

    private void withParameters(ConnectionParameters parameters, String name, ParameterCall verb) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment param = arena.allocate(rdma_conn_param.layout());
            parameters.writeTo(param, arena);
            verb(name, parameters.toString(), (errno, id) -> verb.call(errno, id, param));
        }
    }

    private void setOption(String name, int level, int option, long size,
                           java.util.function.Consumer<MemorySegment> value) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment optval = call.allocate(size);
            value.accept(optval);
            verb("rdma_set_option", name,
                    (errno, id) -> ExportedConnectionManager.rdma_set_option(errno, id, level, option, optval, size));
        }
    }

    private static int millis(Duration timeout) {
        long ms = timeout.toMillis();
        if (ms < 1 || ms > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("timeout must be 1 ms..24 days, not " + timeout);
        }
        return (int) ms;
    }
}
