package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.ContextOps;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_cq;
import io.rdma4j.bindings.verbs.ibv_cq_ex;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A completion queue ({@code struct ibv_cq}, from {@code ibv_create_cq}; closed by {@code ibv_destroy_cq}):
 * where work requests report their outcome. {@link #poll(WorkCompletions)} reads completions without blocking;
 * to sleep until one arrives, create the queue with a {@link CompletionChannel}, call
 * {@link #requestNotification(boolean)}, and wait on the channel.
 *
 * <p>Lifetime: keeps its {@link Context} (and its channel, if any) alive; queue pairs that use it must be closed
 * first (closing it under a live QP fails with EBUSY). Thread-safety: polling from several threads is safe
 * (libibverbs locks per CQ), but each thread needs its own {@link WorkCompletions}. A loop that polls from one
 * thread can do so through a {@link #confinedPoller()}, which saves each poll the pin that guards it against a close
 * on another thread.
 */
public final class CompletionQueue extends NativeObject {

    private final Context context;
    private final CompletionChannel channel;
    private final MemorySegment pollFunction;
    private final MemorySegment notifyFunction;
    private volatile int capacity;
    /** Events taken from the channel but not yet acknowledged; all must be acked before ibv_destroy_cq. */
    private final AtomicInteger unacknowledgedEvents;

    private final ExtendedPoll extendedPoll;

    /**
     * @param extendedFields the fields of an extended CQ ({@code ibv_create_cq_ex}), or {@code null} for a plain one
     */
    CompletionQueue(Context context, MemorySegment cq, CompletionChannel channel, Set<CompletionField> extendedFields) {
        AtomicInteger unacknowledged = new AtomicInteger();
        // An extended CQ's pointer is sized to ibv_cq_ex, which begins with ibv_cq's members.
        long size = (extendedFields == null ? ibv_cq.layout() : ibv_cq_ex.layout()).byteSize();
        super(context, cq, size, Rank.COMPLETION_QUEUE, "ibv_destroy_cq",
                pointer -> destroy(pointer, unacknowledged, channel));
        findable(); // async events name it by address
        this.unacknowledgedEvents = unacknowledged;
        this.context = context;
        this.channel = channel;
        MemorySegment[] pointers = pinAll(this, context);
        try {
            this.capacity = ibv_cq.cqe(pointers[0]);
            this.pollFunction = ContextOps.pollCqFunction(pointers[1]);
            this.notifyFunction = ContextOps.reqNotifyCqFunction(pointers[1]);
        } finally {
            unpinAll(this, context);
        }
        if (channel != null) {
            channel.register(this);
            uses(channel);
        }
        this.extendedPoll = extendedFields == null ? null : new ExtendedPoll(this, extendedFields, Arena.ofAuto());
    }

    /**
     * The extended poll cursor ({@code ibv_start_poll} …) of a queue made by
     * {@link Context#createExtendedCompletionQueue}.
     *
     * @throws IllegalStateException for a queue made by {@code ibv_create_cq}
     */
    public ExtendedPoll extendedPoll() {
        if (extendedPoll == null) {
            throw new IllegalStateException(describe() + " was created by ibv_create_cq: no extended poll");
        }
        return extendedPoll;
    }

    /** The context it belongs to. */
    public Context context() {
        return context;
    }

    /** How many completions it holds: at least what was asked for, as the provider rounded it. */
    public int capacity() {
        return capacity;
    }

    /**
     * A poller for this thread: its polls skip the pin that {@link #poll} takes per call (two atomic additions), and
     * it keeps this queue from closing until it is closed itself; see {@link CompletionQueuePoller}.
     *
     * @throws IllegalStateException if this queue is closed
     */
    public CompletionQueuePoller confinedPoller() {
        return new CompletionQueuePoller(this);
    }

    /**
     * Moves up to {@code completions.capacity()} completions into {@code completions} ({@code ibv_poll_cq}).
     * Never blocks and allocates nothing.
     *
     * @return how many were polled (also {@link WorkCompletions#count()}); 0 if none was waiting
     * @throws VerbException         if the provider reports an error
     * @throws IllegalStateException if this queue or the batch is closed
     */
    public int poll(WorkCompletions completions) {
        long cq = pinned().address();
        try {
            return poll(cq, completions);
        } finally {
            unpin();
        }
    }

    /** {@link #poll(WorkCompletions)} on the address of a pin already held (by that call or a poller). */
    int poll(long cq, WorkCompletions completions) {
        int n;
        try {
            n = ContextOps.ibv_poll_cq(pollFunction, cq, completions.capacity(), completions.arrayAddress());
        } finally {
            // The verb writes the batch's memory by address: the batch must outlive the call.
            Reference.reachabilityFence(completions);
        }
        if (n < 0) {
            completions.count(0);
            throw VerbException.of("ibv_poll_cq", -n, describe());
        }
        completions.count(n);
        return n;
    }

    /**
     * Arms the queue ({@code ibv_req_notify_cq}): the next completion (or, with {@code solicitedOnly}, the next
     * solicited or error completion) raises one event on the channel. Poll again after arming, to catch
     * completions that arrived before it.
     *
     * @throws IllegalStateException if the queue has no completion channel
     */
    public void requestNotification(boolean solicitedOnly) {
        if (channel == null) {
            throw new IllegalStateException(describe() + " has no completion channel to notify");
        }
        MemorySegment cq = pinned();
        int rc;
        try {
            rc = ContextOps.ibv_req_notify_cq(notifyFunction, cq, solicitedOnly ? 1 : 0);
        } finally {
            unpin();
        }
        if (rc != 0) {
            throw VerbException.of("ibv_req_notify_cq", rc, describe());
        }
    }

    /**
     * Resizes the queue ({@code ibv_resize_cq}); it must still hold the completions waiting in it.
     *
     * @throws UnsupportedVerbException if the provider cannot resize
     */
    public void resize(int minimumEntries) {
        if (minimumEntries < 1) {
            throw new IllegalArgumentException("a completion queue needs at least 1 entry, not " + minimumEntries);
        }
        MemorySegment cq = pinned();
        try {
            int rc = RdmaCore.ibv_resize_cq(cq, minimumEntries);
            if (rc != 0) {
                throw VerbException.of("ibv_resize_cq", rc, describe() + " to " + minimumEntries);
            }
            capacity = ibv_cq.cqe(cq);
        } finally {
            unpin();
        }
    }

    /** The channel its events go to, or {@code null}. */
    public CompletionChannel channel() {
        return channel;
    }

    /** {@link #unacknowledgedEvents} once the queue's destroy has begun: later events are acknowledged at once. */
    private static final int DESTROYING = Integer.MIN_VALUE;

    /**
     * Counts an event the channel took for this queue ({@code cq}, its pointer from the event), acknowledging in
     * batches (an ack takes a mutex). Once a destroy has begun, acknowledges the event itself at once:
     * {@code ibv_destroy_cq} waits until every event the kernel handed out is acknowledged, and keeps the struct
     * alive until then, so the pointer is valid here, and an event counted after the destroy took the count would
     * never be acknowledged (a destroy blocked for good, found by racing close against a waiter).
     *
     * @return false if the queue is being destroyed (the event is acknowledged and belongs to no one)
     */
    boolean eventReceived(MemorySegment cq) {
        while (true) {
            int taken = unacknowledgedEvents.get();
            if (taken == DESTROYING) {
                RdmaCore.ibv_ack_cq_events(cq, 1);
                return false;
            }
            boolean batchFull = taken + 1 >= 64;
            if (unacknowledgedEvents.compareAndSet(taken, batchFull ? 0 : taken + 1)) {
                if (batchFull) {
                    RdmaCore.ibv_ack_cq_events(cq, taken + 1);
                }
                return true;
            }
        }
    }

    /** The destroyer: ibv_destroy_cq waits until every event taken from the channel has been acknowledged. */
    private static int destroy(MemorySegment cq, AtomicInteger unacknowledged, CompletionChannel channel) {
        int n = unacknowledged.getAndSet(DESTROYING);
        if (n > 0) {
            RdmaCore.ibv_ack_cq_events(cq, n);
        }
        int rc = RdmaCore.ibv_destroy_cq(cq);
        if (rc == 0 && channel != null) {
            channel.unregister(cq.address());
        }
        return rc;
    }
}
