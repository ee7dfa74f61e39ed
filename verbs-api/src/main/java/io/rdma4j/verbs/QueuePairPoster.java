package io.rdma4j.verbs;

import java.lang.ref.Reference;

/**
 * Posts to one queue pair from one thread ({@code ibv_post_send}, {@code ibv_post_recv}) at less cost than
 * {@link QueuePair#postSend} and {@link QueuePair#postReceive}: those pin the queue pair for each call (two atomic
 * additions), this holds one pin from {@link QueuePair#confinedPoster()} to {@link #close()} and checks only its
 * thread. The posts themselves are the queue pair's: the same checks, the same exceptions, nothing allocated.
 *
 * <p>Lifetime: while it is open the queue pair, its protection domain and context refuse to close
 * ({@link IllegalStateException}); close it first. Dropped unclosed, the {@link java.lang.ref.Cleaner} releases the
 * pin with a warning. Thread-safety: confined to the thread that created it, as
 * {@link java.lang.foreign.Arena#ofConfined()} is ({@link WrongThreadException} on any other); once that thread
 * has ended, any thread may close it. Other threads keep posting through the queue pair's own methods.
 */
public final class QueuePairPoster extends ConfinedAccess {

    private final QueuePair queuePair;

    QueuePairPoster(QueuePair queuePair) {
        super(queuePair);
        this.queuePair = queuePair;
    }

    /** The queue pair it posts to. */
    public QueuePair queuePair() {
        return queuePair;
    }

    /**
     * As {@link QueuePair#postSend(SendWorkRequests)}.
     *
     * @throws WrongThreadException  on a thread other than the one that created this poster
     * @throws IllegalStateException once this poster is closed, and as {@link QueuePair#postSend}
     * @throws PostException         if the provider rejected a request
     */
    public void postSend(SendWorkRequests requests) {
        checkUse();
        try {
            queuePair.postSend(address, requests);
        } finally {
            // The pin lives as long as this poster: it must stay reachable until the call returns.
            Reference.reachabilityFence(this);
        }
    }

    /**
     * As {@link QueuePair#postReceive(ReceiveWorkRequests)}.
     *
     * @throws WrongThreadException  on a thread other than the one that created this poster
     * @throws IllegalStateException once this poster is closed, and as {@link QueuePair#postReceive}
     * @throws PostException         if the provider rejected a request
     */
    public void postReceive(ReceiveWorkRequests requests) {
        checkUse();
        try {
            queuePair.postReceive(address, requests);
        } finally {
            Reference.reachabilityFence(this);
        }
    }
}
