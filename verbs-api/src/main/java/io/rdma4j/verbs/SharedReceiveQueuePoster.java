package io.rdma4j.verbs;

import java.lang.ref.Reference;

/**
 * Posts receives to one shared receive queue from one thread ({@code ibv_post_srq_recv}) at less cost than
 * {@link SharedReceiveQueue#postReceive}, which pins the queue for each call (two atomic additions): this holds one
 * pin from {@link SharedReceiveQueue#confinedPoster()} to {@link #close()} and checks only its thread.
 *
 * <p>Lifetime: while it is open the queue, its protection domain and context refuse to close
 * ({@link IllegalStateException}); close it first. Dropped unclosed, the {@link java.lang.ref.Cleaner} releases the
 * pin with a warning. Thread-safety: confined to the thread that created it ({@link WrongThreadException} on any
 * other); once that thread has ended, any thread may close it.
 */
public final class SharedReceiveQueuePoster extends ConfinedAccess {

    private final SharedReceiveQueue queue;

    SharedReceiveQueuePoster(SharedReceiveQueue queue) {
        super(queue);
        this.queue = queue;
    }

    /** The shared receive queue it posts to. */
    public SharedReceiveQueue queue() {
        return queue;
    }

    /**
     * As {@link SharedReceiveQueue#postReceive(ReceiveWorkRequests)}.
     *
     * @throws WrongThreadException  on a thread other than the one that created this poster
     * @throws IllegalStateException once this poster is closed, and as {@link SharedReceiveQueue#postReceive}
     * @throws PostException         if the provider rejected a request
     */
    public void postReceive(ReceiveWorkRequests requests) {
        checkUse();
        try {
            queue.postReceive(address, requests);
        } finally {
            // The pin lives as long as this poster: it must stay reachable until the call returns.
            Reference.reachabilityFence(this);
        }
    }
}
