package io.rdma4j.verbs;

import java.lang.ref.Reference;

/**
 * Polls one completion queue from one thread ({@code ibv_poll_cq}) at less cost than
 * {@link CompletionQueue#poll(WorkCompletions)}, which pins the queue for each call (two atomic additions): this
 * holds one pin from {@link CompletionQueue#confinedPoller()} to {@link #close()} and checks only its thread.
 *
 * <p>Lifetime: while it is open the queue and its context refuse to close ({@link IllegalStateException}); close
 * it first. Dropped unclosed, the {@link java.lang.ref.Cleaner} releases the pin with a warning. Thread-safety:
 * confined to the thread that created it ({@link WrongThreadException} on any other); once that thread has ended,
 * any thread may close it.
 */
public final class CompletionQueuePoller extends ConfinedAccess {

    private final CompletionQueue queue;

    CompletionQueuePoller(CompletionQueue queue) {
        super(queue);
        this.queue = queue;
    }

    /** The completion queue it polls. */
    public CompletionQueue queue() {
        return queue;
    }

    /**
     * As {@link CompletionQueue#poll(WorkCompletions)}: never blocks, allocates nothing.
     *
     * @return how many were polled (also {@link WorkCompletions#count()}); 0 if none was waiting
     * @throws WrongThreadException  on a thread other than the one that created this poller
     * @throws IllegalStateException once this poller or the batch is closed
     * @throws VerbException         if the provider reports an error
     */
    public int poll(WorkCompletions completions) {
        checkUse();
        try {
            return queue.poll(address, completions);
        } finally {
            // The pin lives as long as this poller: it must stay reachable until the call returns.
            Reference.reachabilityFence(this);
        }
    }
}
