package io.rdma4j.cm;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedConnectionManager;
import io.rdma4j.bindings.shim.FileDescriptors;
import io.rdma4j.bindings.shim.NativeLibraries;
import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.bindings.shim.Poller;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.rdma_cm_event;
import io.rdma4j.bindings.verbs.rdma_cm_id;
import io.rdma4j.bindings.verbs.rdma_event_channel;
import io.rdma4j.bindings.verbs.rdma_ud_param;
import io.rdma4j.verbs.NativeObject;
import io.rdma4j.verbs.VerbException;
import io.rdma4j.verbs.internal.NativeResource;
import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.verbs.internal.VerbsInternals;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Optional;

/**
 * A connection-manager event channel ({@code struct rdma_event_channel}, from {@code rdma_create_event_channel};
 * closed by {@code rdma_destroy_event_channel}): where the events of its {@link CmId}s arrive.
 *
 * <p>Its file descriptor ({@link #fileDescriptor()}) is non-blocking, and {@link #next} parks the waiting thread on
 * rdma4j's epoll {@link Poller} until an event is there: waits honour their timeout and interrupts, and a waiting
 * virtual thread holds no carrier, so thousands of channels can be waited on at once. Every event is copied
 * out and acknowledged ({@code rdma_ack_cm_event}) before it is returned, and the id it is about has already moved
 * to its new {@link CmIdState}.
 *
 * <p>Lifetime: the root of its ids, with {@link NativeObject}'s rules: closing it ({@code rdma_destroy_event_channel})
 * closes its ids (and the queue pairs librdmacm made for them) first, and wakes every thread waiting in {@link #next}
 * with {@link IllegalStateException}; close is idempotent, thread-safe and refused while a call on the channel runs;
 * a channel or id dropped without being closed is closed by a Cleaner, with a warning. Thread-safety: any thread may
 * wait; each event goes to one of them.
 */
public final class EventChannel extends NativeObject {

    private final NativeResource resource;
    private final int fd;

    private EventChannel(MemorySegment channel) {
        super(null, channel, rdma_event_channel.layout().byteSize(), Rank.EVENT_CHANNEL, "rdma_destroy_event_channel",
                pointer -> {
                    RdmaCore.rdma_destroy_event_channel(pointer);
                    return 0;
                });
        this.resource = nativeResource();
        this.fd = resource.withPinned(rdma_event_channel::fd);
        int watched = fd;
        // Threads waiting in next() look again once the channel is gone (closed by anyone), and find it closed.
        resource.afterClose(() -> Poller.instance().wakeAll(watched));
    }

    /**
     * Creates an event channel ({@code rdma_create_event_channel}).
     *
     * @throws VerbException if it fails (ENODEV/ENOENT: no {@code /dev/infiniband/rdma_cm}, load {@code rdma_ucm})
     */
    public static EventChannel create() {
        NativeLibraries.require();
        MemorySegment state = Errno.state();
        MemorySegment channel = ExportedConnectionManager.rdma_create_event_channel(state);
        if (channel.address() == 0) {
            int errno = Errno.get(state);
            throw VerbException.of("rdma_create_event_channel", errno,
                    "is the rdma_ucm kernel module loaded (/dev/infiniband/rdma_cm)?");
        }
        EventChannel created = new EventChannel(channel);
        int rc = FileDescriptors.makeNonBlocking(created.fd);
        if (rc != 0) {
            created.close();
            throw VerbException.of("fcntl", rc, "O_NONBLOCK on the event channel");
        }
        return created;
    }

    /**
     * The channel's file descriptor, non-blocking, readable when an event is waiting: for programs with an event
     * loop of their own (then call {@link #next} with {@link Duration#ZERO} when it is readable). Valid until the
     * channel is closed.
     */
    public int fileDescriptor() {
        resource.openAddress();
        return fd;
    }

    /**
     * Creates an id on this channel ({@code rdma_create_id}).
     *
     * @throws VerbException if the verb fails
     */
    public CmId createId(PortSpace portSpace) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment out = call.allocate(ValueLayout.ADDRESS);
            MemorySegment state = Errno.state();
            if (resource.withPinned(channel -> ExportedConnectionManager.rdma_create_id(state, channel, out,
                    MemorySegment.NULL, portSpace.value())) != 0) {
                throw VerbException.of("rdma_create_id", Errno.get(state), portSpace.toString());
            }
            return adopt(out.get(ValueLayout.ADDRESS, 0), portSpace, CmIdState.IDLE);
        }
    }

    /**
     * Waits for the next event ({@code rdma_get_cm_event}), at most {@code timeout}.
     *
     * @return the event, or empty after {@code timeout}
     * @throws InterruptedException  if the thread is interrupted while waiting
     * @throws IllegalStateException if the channel is closed (also when closed while waiting)
     */
    public Optional<CmEvent> next(Duration timeout) throws InterruptedException {
        return Optional.ofNullable(FileDescriptors.awaitEvent(fd, timeout, this::takeEvent));
    }

    /**
     * Waits for the next event, which must be of {@code type} (what simple, sequential programs expect).
     *
     * @throws IllegalStateException if another event arrives (named with its status) or none within {@code timeout}
     */
    public CmEvent expect(CmEventType type, Duration timeout) throws InterruptedException {
        CmEvent event = next(timeout).orElseThrow(
                () -> new IllegalStateException("no " + type + " event within " + timeout));
        if (event.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + event);
        }
        return event;
    }

    private CmEvent takeEvent() {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment out = call.allocate(ValueLayout.ADDRESS);
            MemorySegment state = Errno.state();
            if (resource.withPinned(channel -> ExportedConnectionManager.rdma_get_cm_event(state, channel, out)) != 0) {
                int errno = Errno.get(state);
                if (errno == RdmaCore.EAGAIN()) {
                    return null;
                }
                throw VerbException.of("rdma_get_cm_event", errno);
            }
            MemorySegment event = Pointers.sized(out.get(ValueLayout.ADDRESS, 0), rdma_cm_event.layout().byteSize());
            try {
                return copy(event);
            } finally {
                RdmaCore.rdma_ack_cm_event(event);
            }
        }
    }

    /** Copies everything out of a C event and moves its id to its new state. */
    private CmEvent copy(MemorySegment event) {
        int raw = rdma_cm_event.event(event);
        CmEventType type = CmEventType.of(raw);
        int status = rdma_cm_event.status(event);
        MemorySegment idPointer = Pointers.sized(rdma_cm_event.id(event), rdma_cm_id.layout().byteSize());
        CmId listenId = findDescendant(rdma_cm_event.listen_id(event).address(), CmId.class);
        CmId subject = type == CmEventType.CONNECT_REQUEST
                ? adopt(idPointer, listenId == null ? PortSpace.TCP : listenId.portSpace(), CmIdState.CONNECT_REQUEST)
                : findDescendant(idPointer.address(), CmId.class);
        MemorySegment param = rdma_cm_event.param(event);
        boolean datagram = type == CmEventType.MULTICAST_JOIN || type == CmEventType.MULTICAST_ERROR
                || rdma_cm_id.qp_type(idPointer) == RdmaCore.IBV_QPT_UD();
        byte[] privateData = new byte[0];
        ConnectionParameters peer = null;
        UdParameters ud = null;
        boolean carriesParameters = type == CmEventType.CONNECT_REQUEST || type == CmEventType.CONNECT_RESPONSE
                || type == CmEventType.ESTABLISHED || type == CmEventType.REJECTED
                || type == CmEventType.MULTICAST_JOIN;
        if (carriesParameters && datagram) {
            MemorySegment u = rdma_cm_event.param.ud(param);
            privateData = ConnectionParameters.bytes(rdma_ud_param.private_data(u), rdma_ud_param.private_data_len(u));
            if (type != CmEventType.CONNECT_REQUEST && type != CmEventType.REJECTED) {
                ud = new UdParameters(VerbsInternals.access().addressVector(rdma_ud_param.ah_attr(u)),
                        rdma_ud_param.qp_num(u) & 0xFFFFFF, rdma_ud_param.qkey(u));
            }
        } else if (carriesParameters) {
            peer = ConnectionParameters.readFrom(rdma_cm_event.param.conn(param));
            privateData = peer.privateData();
        }
        if (subject != null) {
            subject.onEvent(type);
        }
        return new CmEvent(type, raw, status, subject, listenId, privateData,
                type == CmEventType.REJECTED ? null : peer, ud);
    }

    /** Wraps an id that librdmacm created on this channel. */
    private CmId adopt(MemorySegment id, PortSpace portSpace, CmIdState state) {
        return new CmId(this, id, portSpace, state);
    }

    @Override
    protected String describe() {
        return "EventChannel(fd " + fd + ")";
    }
}
