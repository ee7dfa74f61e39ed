package io.rdma4j.cm;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedConnectionManager;
import io.rdma4j.bindings.shim.FileDescriptors;
import io.rdma4j.bindings.shim.NativeLibraries;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.rdma_cm_event;
import io.rdma4j.bindings.verbs.rdma_event_channel;
import io.rdma4j.verbs.RdmaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A connection-manager event channel ({@code struct rdma_event_channel}, from {@code rdma_create_event_channel};
 * closed by {@code rdma_destroy_event_channel}): where the events of its {@link CmId}s arrive.
 *
 * <p>Its file descriptor is non-blocking, and {@link #next} waits with {@code poll(2)} in bounded slices, so waits
 * honour their timeout and interrupts and suit virtual threads. Every event is acknowledged
 * ({@code rdma_ack_cm_event}) before it is returned.
 *
 * <p>Lifetime: closing it closes the ids created on it first. Thread-safety: any thread may wait; each event goes
 * to one of them.
 */
public final class EventChannel implements AutoCloseable {

    private final Arena arena = Arena.ofShared();
    private final MemorySegment channel;
    private final int fd;
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();
    private boolean closed;

    private EventChannel(MemorySegment channel) {
        this.channel = channel.reinterpret(rdma_event_channel.layout().byteSize(), arena, null);
        this.fd = rdma_event_channel.fd(this.channel);
    }

    /**
     * Creates an event channel ({@code rdma_create_event_channel}).
     *
     * @throws RdmaException if it fails (ENODEV/ENOENT: no {@code /dev/infiniband/rdma_cm}, load {@code rdma_ucm})
     */
    public static EventChannel create() {
        NativeLibraries.require();
        MemorySegment state = Errno.state();
        MemorySegment channel = ExportedConnectionManager.rdma_create_event_channel(state);
        if (channel.address() == 0) {
            int errno = Errno.get(state);
            throw RdmaException.of("rdma_create_event_channel", errno,
                    "is the rdma_ucm kernel module loaded (/dev/infiniband/rdma_cm)?");
        }
        EventChannel created = new EventChannel(channel);
        int rc = FileDescriptors.makeNonBlocking(created.fd);
        if (rc != 0) {
            created.close();
            throw RdmaException.of("fcntl", rc, "O_NONBLOCK on the event channel");
        }
        return created;
    }

    /**
     * Creates an id on this channel ({@code rdma_create_id}).
     *
     * @throws RdmaException if the verb fails
     */
    public CmId createId(PortSpace portSpace) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment out = call.allocate(ValueLayout.ADDRESS);
            MemorySegment state = Errno.state();
            if (ExportedConnectionManager.rdma_create_id(state, handle(), out, MemorySegment.NULL, portSpace.value()) != 0) {
                throw RdmaException.of("rdma_create_id", Errno.get(state), portSpace.toString());
            }
            return register(out.get(ValueLayout.ADDRESS, 0));
        }
    }

    /**
     * Waits for the next event ({@code rdma_get_cm_event}), at most {@code timeout}.
     *
     * @return the event, or empty after {@code timeout}
     * @throws InterruptedException if the thread is interrupted while waiting
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
            throw new IllegalStateException("expected " + type + ", got " + event.type() + " (status " + event.status()
                    + ")");
        }
        return event;
    }

    private CmEvent takeEvent() {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment out = call.allocate(ValueLayout.ADDRESS);
            MemorySegment state = Errno.state();
            if (ExportedConnectionManager.rdma_get_cm_event(state, handle(), out) != 0) {
                int errno = Errno.get(state);
                if (errno == RdmaCore.EAGAIN()) {
                    return null;
                }
                throw RdmaException.of("rdma_get_cm_event", errno);
            }
            MemorySegment event = out.get(ValueLayout.ADDRESS, 0).reinterpret(rdma_cm_event.layout().byteSize());
            try {
                CmEventType type = CmEventType.of(rdma_cm_event.event(event));
                MemorySegment id = rdma_cm_event.id(event);
                CmId listenId = ids.get(rdma_cm_event.listen_id(event).address());
                CmId subject = type == CmEventType.CONNECT_REQUEST ? register(id) : ids.get(id.address());
                return new CmEvent(type, rdma_cm_event.status(event), subject, listenId);
            } finally {
                RdmaCore.rdma_ack_cm_event(event);
            }
        }
    }

    private CmId register(MemorySegment id) {
        CmId wrapped = new CmId(this, id);
        ids.put(id.address(), wrapped);
        return wrapped;
    }

    void unregister(long id) {
        ids.remove(id);
    }

    private MemorySegment handle() {
        if (!channel.scope().isAlive()) {
            throw new IllegalStateException("the event channel is closed");
        }
        return channel;
    }

    /** Closes every id of this channel, then the channel. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (CmId id : List.copyOf(ids.values())) {
            id.close();
        }
        MemorySegment pointer = MemorySegment.ofAddress(channel.address());
        arena.close();
        RdmaCore.rdma_destroy_event_channel(pointer);
    }
}
