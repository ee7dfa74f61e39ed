package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.shim.FileDescriptors;
import io.rdma4j.bindings.shim.Poller;
import io.rdma4j.bindings.shim.VerbsContext;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_async_event;
import io.rdma4j.bindings.verbs.ibv_context;
import io.rdma4j.bindings.verbs.ibv_cq_init_attr_ex;
import io.rdma4j.bindings.verbs.ibv_device_attr;
import io.rdma4j.bindings.verbs.ibv_device_attr_ex;
import io.rdma4j.bindings.verbs.ibv_gid_entry;
import io.rdma4j.bindings.verbs.ibv_odp_caps;
import io.rdma4j.bindings.verbs.ibv_port_attr;
import io.rdma4j.verbs.internal.FieldRange;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An open device ({@code struct ibv_context}, from {@code ibv_open_device}; closed by {@code ibv_close_device}).
 * Queries the device, its ports and GID tables, and creates protection domains and completion queues.
 *
 * <p>Lifetime: the root of its object tree. Closing it first closes every object created from it that is still
 * open (queue pairs first, protection domains last). The context of a connection-manager id
 * ({@code io.rdma4j.cm.CmId#context()}) belongs to librdmacm, which keeps it open until the process ends: it cannot
 * be closed, and the objects created on it are closed one by one. Thread-safety: all methods may be called from any
 * thread.
 */
public final class Context extends NativeObject {

    private static final Logger LOG = LoggerFactory.getLogger(Context.class);
    /** librdmacm's contexts by address; weakly, so that a forgotten tree of objects on one can be reclaimed. */
    private static final Map<Long, WeakReference<Context>> BORROWED = new HashMap<>();

    private final Device device;
    private boolean asyncNonBlocking;
    /** The first {@link #queryDevice()}'s answer, for the limits queue pair transitions read (they never change). */
    private volatile DeviceAttributes limits;

    Context(Device device, MemorySegment context) {
        super(null, context, ibv_context.layout().byteSize(), Rank.CONTEXT, "ibv_close_device",
                RdmaCore::ibv_close_device);
        this.device = device;
        int asyncFd = withPinned(ibv_context::async_fd);
        // Threads waiting in nextAsyncEvent() look again once the context is gone, and find it closed.
        afterClose(() -> Poller.instance().wakeAll(asyncFd));
        LOG.debug("opened {}", device.name());
    }

    /** A context that librdmacm opened and keeps open (an id's device): never closed through rdma4j. */
    private Context(MemorySegment context) {
        super(context, ibv_context.layout().byteSize(), Rank.CONTEXT);
        this.device = Device.of(withPinned(ibv_context::device));
    }

    /**
     * The one {@link Context} object of a device context that librdmacm opened (a new one only once the last was
     * collected). librdmacm opens each device once and keeps it open until the process ends (it closes only the
     * contexts of removed devices), so the object stays valid for good.
     */
    static Context borrowed(MemorySegment context) {
        synchronized (BORROWED) {
            WeakReference<Context> known = BORROWED.get(context.address());
            Context borrowed = known == null ? null : known.get();
            if (borrowed == null) {
                borrowed = new Context(context);
                BORROWED.put(context.address(), new WeakReference<>(borrowed));
            }
            return borrowed;
        }
    }

    /** The device this context was opened on. */
    public Device device() {
        return device;
    }

    /**
     * The device's attributes as first queried, for the fixed limits (read-atomic depths) that every queue pair's
     * RTR and RTS transitions need: one verb per context instead of one per transition.
     */
    DeviceAttributes limits() {
        DeviceAttributes known = limits;
        if (known == null) {
            known = queryDevice();
            limits = known;
        }
        return known;
    }

    /**
     * Queries the device's attributes ({@code ibv_query_device_ex}).
     *
     * @throws VerbException if the verb fails
     */
    public DeviceAttributes queryDevice() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attrEx = arena.allocate(ibv_device_attr_ex.layout());
            int rc = withPinned(context -> VerbsContext.ibv_query_device_ex(context, MemorySegment.NULL, attrEx));
            if (rc != 0) {
                throw VerbException.of("ibv_query_device_ex", rc);
            }
            MemorySegment a = ibv_device_attr_ex.orig_attr(attrEx);
            return new DeviceAttributes(ibv_device_attr.fw_ver(a).getString(0),
                    Long.reverseBytes(ibv_device_attr.node_guid(a)), ibv_device_attr.vendor_id(a),
                    ibv_device_attr.vendor_part_id(a), ibv_device_attr.hw_ver(a),
                    Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(a)), ibv_device_attr.max_mr_size(a),
                    ibv_device_attr.max_qp(a), ibv_device_attr.max_qp_wr(a), ibv_device_attr.max_sge(a),
                    ibv_device_attr.max_sge_rd(a), ibv_device_attr.max_cq(a), ibv_device_attr.max_cqe(a),
                    ibv_device_attr.max_mr(a), ibv_device_attr.max_pd(a), ibv_device_attr.max_qp_rd_atom(a),
                    ibv_device_attr.max_qp_init_rd_atom(a), ibv_device_attr.max_mw(a), ibv_device_attr.max_ah(a),
                    ibv_device_attr.max_srq(a), ibv_device_attr.max_srq_wr(a),
                    CValue.of(AtomicCapability.class, ibv_device_attr.atomic_cap(a)),
                    ibv_device_attr.device_cap_flags(a),
                    ibv_odp_caps.general_caps(ibv_device_attr_ex.odp_caps(attrEx)));
        }
    }

    /**
     * Queries a port (the full {@code ibv_query_port}).
     *
     * @param port the port number, from 1
     * @throws IllegalArgumentException if {@code port} is not 1..255
     * @throws VerbException            if the verb fails (EINVAL for a port the device does not have)
     */
    public PortAttributes queryPort(int port) {
        checkPort(port);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ibv_port_attr.layout());
            int rc = withPinned(context -> VerbsContext.ibv_query_port(context, (byte) port, p));
            if (rc != 0) {
                throw VerbException.of("ibv_query_port", rc, "port " + port);
            }
            return new PortAttributes(CValue.of(PortState.class, ibv_port_attr.state(p)),
                    CValue.of(Mtu.class, ibv_port_attr.max_mtu(p)), CValue.of(Mtu.class, ibv_port_attr.active_mtu(p)),
                    ibv_port_attr.gid_tbl_len(p), ibv_port_attr.port_cap_flags(p),
                    Integer.toUnsignedLong(ibv_port_attr.max_msg_sz(p)), Short.toUnsignedInt(ibv_port_attr.lid(p)),
                    Short.toUnsignedInt(ibv_port_attr.sm_lid(p)), Byte.toUnsignedInt(ibv_port_attr.lmc(p)),
                    Byte.toUnsignedInt(ibv_port_attr.active_width(p)), Byte.toUnsignedInt(ibv_port_attr.active_speed(p)),
                    Byte.toUnsignedInt(ibv_port_attr.phys_state(p)),
                    CValue.of(LinkLayer.class, Byte.toUnsignedInt(ibv_port_attr.link_layer(p))));
        }
    }

    /**
     * The valid entries of every port's GID table ({@code ibv_query_gid_table}).
     *
     * @throws VerbException if the verb fails
     */
    public List<GidEntry> gidTable() {
        int capacity = 0;
        int ports = queryDevice().physicalPortCount();
        for (int port = 1; port <= ports; port++) {
            capacity += queryPort(port).gidTableLength();
        }
        try (Arena arena = Arena.ofConfined()) {
            long entrySize = ibv_gid_entry.layout().byteSize();
            MemorySegment entries = arena.allocate(ibv_gid_entry.layout(), Math.max(capacity, 1));
            int entryCount = capacity;
            long n = withPinned(context -> RdmaCore._ibv_query_gid_table(context, entries, entryCount, 0, entrySize));
            if (n < 0) {
                throw VerbException.of("ibv_query_gid_table", (int) -n);
            }
            List<GidEntry> table = new ArrayList<>((int) n);
            for (long i = 0; i < n; i++) {
                MemorySegment e = entries.asSlice(i * entrySize, entrySize);
                table.add(new GidEntry(ibv_gid_entry.gid_index(e), ibv_gid_entry.port_num(e),
                        ibv_gid_entry.gid(e).toArray(ValueLayout.JAVA_BYTE),
                        CValue.of(GidType.class, ibv_gid_entry.gid_type(e)), ibv_gid_entry.ndev_ifindex(e)));
            }
            return List.copyOf(table);
        }
    }

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd}).
     *
     * @throws VerbException if the verb fails
     */
    public ProtectionDomain allocateProtectionDomain() {
        MemorySegment state = Errno.state();
        MemorySegment pd = withPinned(context -> ExportedVerbs.ibv_alloc_pd(state, context));
        if (pd.address() == 0) {
            throw VerbException.of("ibv_alloc_pd", Errno.get(state));
        }
        return new ProtectionDomain(this, pd);
    }

    /**
     * Creates a completion queue without a completion channel ({@code ibv_create_cq}); poll it.
     *
     * @param minimumEntries how many completions it must hold at least (the provider may round up)
     * @throws IllegalArgumentException if {@code minimumEntries < 1}
     * @throws VerbException            if the verb fails (e.g. EINVAL above the device's {@code max_cqe})
     */
    public CompletionQueue createCompletionQueue(int minimumEntries) {
        return createCompletionQueue(minimumEntries, null, 0);
    }

    /**
     * Creates a completion queue whose events go to {@code channel} ({@code ibv_create_cq}).
     *
     * @param minimumEntries how many completions it must hold at least
     * @param channel        where {@link CompletionQueue#requestNotification} events go, or {@code null}
     * @param vector         the completion vector (interrupt), {@code 0..numCompletionVectors()-1}
     */
    public CompletionQueue createCompletionQueue(int minimumEntries, CompletionChannel channel, int vector) {
        if (minimumEntries < 1) {
            throw new IllegalArgumentException("a completion queue needs at least 1 entry, not " + minimumEntries);
        }
        MemorySegment state = Errno.state();
        MemorySegment[] pointers = pinAll(this, channel);
        MemorySegment cq;
        try {
            cq = ExportedVerbs.ibv_create_cq(state, pointers[0], minimumEntries, MemorySegment.NULL,
                    channel == null ? MemorySegment.NULL : pointers[1], vector);
        } finally {
            unpinAll(this, channel);
        }
        if (cq.address() == 0) {
            throw VerbException.of("ibv_create_cq", Errno.get(state), minimumEntries + " entries");
        }
        return new CompletionQueue(this, cq, channel, null);
    }

    /**
     * Creates an extended completion queue ({@code ibv_create_cq_ex}), polled field by field through
     * {@link CompletionQueue#extendedPoll()}; {@link CompletionQueue#poll} works on it too.
     *
     * @param fields the fields its completions carry besides work request id and status
     * @throws UnsupportedVerbException if the provider has no extended CQs
     */
    public CompletionQueue createExtendedCompletionQueue(int minimumEntries, CompletionChannel channel,
                                                         Set<CompletionField> fields) {
        if (minimumEntries < 1) {
            throw new IllegalArgumentException("a completion queue needs at least 1 entry, not " + minimumEntries);
        }
        MemorySegment[] pointers = pinAll(this, channel);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_cq_init_attr_ex.layout());
            ibv_cq_init_attr_ex.cqe(attr, minimumEntries);
            ibv_cq_init_attr_ex.channel(attr, channel == null ? MemorySegment.NULL : pointers[1]);
            ibv_cq_init_attr_ex.wc_flags(attr, CValue.mask(fields));
            MemorySegment state = Errno.state();
            // ibv_cq_ex starts with the members of ibv_cq, so its pointer is also the ibv_cq pointer
            // (ibv_cq_ex_to_cq is a cast).
            MemorySegment cq = VerbsContext.ibv_create_cq_ex(state, pointers[0], attr);
            if (cq.address() == 0) {
                throw VerbException.of("ibv_create_cq_ex", Errno.get(state), minimumEntries + " entries with " + fields);
            }
            return new CompletionQueue(this, cq, channel, Set.copyOf(fields));
        } finally {
            unpinAll(this, channel);
        }
    }

    /**
     * Creates a completion channel ({@code ibv_create_comp_channel}).
     *
     * @throws VerbException if the verb fails
     */
    public CompletionChannel createCompletionChannel() {
        MemorySegment state = Errno.state();
        MemorySegment channel = withPinned(context -> ExportedVerbs.ibv_create_comp_channel(state, context));
        if (channel.address() == 0) {
            throw VerbException.of("ibv_create_comp_channel", Errno.get(state));
        }
        return new CompletionChannel(this, channel);
    }

    /** How many completion vectors (interrupts) the device offers ({@code num_comp_vectors}). */
    public int numCompletionVectors() {
        return withPinned(ibv_context::num_comp_vectors);
    }

    /**
     * Waits for the next asynchronous event ({@code ibv_get_async_event}, then {@code ibv_ack_async_event}), at
     * most {@code timeout}: QP and CQ errors, SRQ limits, port changes. Usable from virtual threads.
     *
     * @return the event, or empty after {@code timeout}
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public Optional<AsyncEvent> nextAsyncEvent(Duration timeout) throws InterruptedException {
        int fd = withPinned(ibv_context::async_fd);
        synchronized (this) {
            if (!asyncNonBlocking) {
                int rc = FileDescriptors.makeNonBlocking(fd);
                if (rc != 0) {
                    throw VerbException.of("fcntl", rc, "O_NONBLOCK on the async event descriptor");
                }
                asyncNonBlocking = true;
            }
        }
        return Optional.ofNullable(FileDescriptors.awaitEvent(fd, timeout, this::takeAsyncEvent));
    }

    private AsyncEvent takeAsyncEvent() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(ibv_async_event.layout());
            MemorySegment state = Errno.state();
            if (withPinned(context -> ExportedVerbs.ibv_get_async_event(state, context, event)) != 0) {
                int errno = Errno.get(state);
                if (errno == RdmaCore.EAGAIN()) {
                    return null;
                }
                throw VerbException.of("ibv_get_async_event", errno);
            }
            try {
                int code = ibv_async_event.event_type(event);
                AsyncEventType type = CValue.of(AsyncEventType.class, code, AsyncEventType.UNKNOWN);
                MemorySegment element = ibv_async_event.element(event);
                AsyncEventType.Subject subject = type.subject();
                QueuePair qp = subject == AsyncEventType.Subject.QUEUE_PAIR
                        ? findDescendant(ibv_async_event.element.qp(element).address(), QueuePair.class) : null;
                CompletionQueue cq = subject == AsyncEventType.Subject.COMPLETION_QUEUE
                        ? findDescendant(ibv_async_event.element.cq(element).address(), CompletionQueue.class) : null;
                SharedReceiveQueue srq = subject == AsyncEventType.Subject.SHARED_RECEIVE_QUEUE
                        ? findDescendant(ibv_async_event.element.srq(element).address(), SharedReceiveQueue.class)
                        : null;
                int port = subject == AsyncEventType.Subject.PORT ? ibv_async_event.element.port_num(element) : 0;
                return new AsyncEvent(type, qp, cq, srq, port, RdmaCore.ibv_event_type_str(code).getString(0));
            } finally {
                RdmaCore.ibv_ack_async_event(event);
            }
        }
    }

    private static void checkPort(int port) {
        FieldRange.check("port_num", port, 1, 0xFF);
    }

    @Override
    protected String describe() {
        return "Context(" + device.name() + ")";
    }
}
