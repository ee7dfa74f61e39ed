package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.shim.FileDescriptors;
import io.rdma4j.bindings.shim.Poller;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_comp_channel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A completion channel ({@code struct ibv_comp_channel}, from {@code ibv_create_comp_channel}; closed by
 * {@code ibv_destroy_comp_channel}): how a thread sleeps until an armed {@link CompletionQueue} has a completion.
 *
 * <pre>{@code
 * cq.requestNotification(false);
 * if (cq.poll(wcs) == 0) {                       // nothing yet: sleep
 *     channel.await(Duration.ofSeconds(1));       // ibv_get_cq_event, bounded
 *     cq.requestNotification(false);              // re-arm, then poll
 * }
 * }</pre>
 *
 * <p>The channel's file descriptor is non-blocking and {@link #await} waits with {@code poll(2)} in bounded slices,
 * so it honours its timeout and interrupts and is usable from virtual threads. Events are acknowledged
 * ({@code ibv_ack_cq_events}) in batches, and all of them before their CQ is destroyed.
 *
 * <p>Lifetime: keeps its context alive; refuses to close while a CQ uses it ({@link IllegalStateException} naming
 * it); closing the context closes the CQs first. Thread-safety: any thread may
 * await; each event goes to one of them.
 */
public final class CompletionChannel extends NativeObject {

    private final int fd;
    /** CQ pointer to CQ, weakly: the channel must not keep a forgotten CQ from its Cleaner. */
    private final Map<Long, WeakReference<CompletionQueue>> queues = new ConcurrentHashMap<>();

    CompletionChannel(Context context, MemorySegment channel) {
        super(context, channel, ibv_comp_channel.layout().byteSize(), Rank.COMPLETION_CHANNEL,
                "ibv_destroy_comp_channel", RdmaCore::ibv_destroy_comp_channel);
        this.fd = withPinned(ibv_comp_channel::fd);
        int watched = fd;
        // Threads waiting in await() look again once the channel is gone, and find it closed.
        afterClose(() -> Poller.instance().wakeAll(watched));
        int rc = FileDescriptors.makeNonBlocking(fd);
        if (rc != 0) {
            close();
            throw VerbException.of("fcntl", rc, "O_NONBLOCK on the completion channel");
        }
    }

    /**
     * The channel's file descriptor, non-blocking, readable when an armed CQ has fired: for programs with an event
     * loop of their own (then call {@link #await} with {@link Duration#ZERO}). Valid until the channel is closed.
     */
    public int fileDescriptor() {
        checkOpen();
        return fd;
    }

    /**
     * Waits until an armed CQ of this channel gets a completion ({@code ibv_get_cq_event}), at most
     * {@code timeout}.
     *
     * @return the CQ that fired, or empty after {@code timeout}
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws VerbException        if the verb fails
     */
    public Optional<CompletionQueue> await(Duration timeout) throws InterruptedException {
        return Optional.ofNullable(FileDescriptors.awaitEvent(fd, timeout, this::takeEvent));
    }

    private CompletionQueue takeEvent() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cqOut = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment contextOut = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment state = Errno.state();
            if (withPinned(channel -> ExportedVerbs.ibv_get_cq_event(state, channel, cqOut, contextOut)) != 0) {
                int errno = Errno.get(state);
                if (errno == RdmaCore.EAGAIN()) {
                    return null;
                }
                throw VerbException.of("ibv_get_cq_event", errno);
            }
            MemorySegment cq = cqOut.get(ValueLayout.ADDRESS, 0);
            WeakReference<CompletionQueue> ref = queues.get(cq.address());
            CompletionQueue queue = ref == null ? null : ref.get();
            if (queue == null) {
                // Its CQ is being closed: acknowledge at once so that ibv_destroy_cq does not wait for it.
                RdmaCore.ibv_ack_cq_events(cq, 1);
                return null;
            }
            return queue.eventReceived(cq) ? queue : null;
        }
    }

    void register(CompletionQueue cq) {
        queues.put(cq.openAddress(), new WeakReference<>(cq));
    }

    void unregister(long cqAddress) {
        queues.remove(cqAddress);
    }
}
