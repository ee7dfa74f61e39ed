package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.NativeResource;
import java.lang.ref.Cleaner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the confined posters and poller share: one pin of their object ({@link NativeResource#pin}), taken at
 * creation and held until {@link #close()}, for the calls of one thread. A call through {@link QueuePair#postSend}
 * pins the queue pair for its length: two atomic additions, ~10 ns of a ~20 ns post on the host benchmark's
 * machine. A confined poster checks its thread and its own flag instead, and stays as safe: while the pin is held,
 * the object and everything above it refuse to close ({@link IllegalStateException}), as they refuse while a call
 * runs.
 *
 * <p>Only the creating thread may use or close it ({@link WrongThreadException}), as with
 * {@link java.lang.foreign.Arena#ofConfined()}: a close from another thread could release the pin while a post
 * still runs. Once that thread has ended, any thread may close it. Dropped without a close, it releases the pin
 * from the {@link Cleaner}, with a warning.
 */
abstract sealed class ConfinedAccess implements AutoCloseable
        permits QueuePairPoster, SharedReceiveQueuePoster, CompletionQueuePoller {

    private static final Logger LOG = LoggerFactory.getLogger(ConfinedAccess.class);

    private final Thread owner;
    private final Release release;
    private final Cleaner.Cleanable cleanable;
    private boolean closed;
    /** The target's C address, valid while the pin is held. */
    final long address;

    /** @throws IllegalStateException if {@code target} is closed or being closed */
    ConfinedAccess(NativeObject target) {
        this.address = target.pinned().address();
        this.owner = Thread.currentThread();
        this.release = new Release(target.nativeResource(), getClass().getSimpleName() + " of " + target.describe());
        this.cleanable = NativeObject.CLEANER.register(this, release);
    }

    /**
     * Throws unless called on the owner thread before {@link #close()}: one field compare and one plain read.
     *
     * @throws WrongThreadException  on any other thread
     * @throws IllegalStateException once closed
     */
    final void checkUse() {
        if (Thread.currentThread() != owner) {
            throw wrongThread("used");
        }
        if (closed) {
            throw new IllegalStateException(describe() + " is closed");
        }
    }

    /** The thread that created it and alone may use it. */
    public final Thread owner() {
        return owner;
    }

    /**
     * Releases the pin: the object can close again. Idempotent.
     *
     * @throws WrongThreadException on a thread other than the owner while the owner is alive
     */
    @Override
    public final void close() {
        if (Thread.currentThread() != owner && owner.isAlive()) {
            throw wrongThread("closed");
        }
        if (!closed) {
            closed = true;
            release.closed = true;
            cleanable.clean();
        }
    }

    private WrongThreadException wrongThread(String what) {
        return new WrongThreadException(describe() + " belongs to thread \"" + owner.getName() + "\" and cannot be "
                + what + " on \"" + Thread.currentThread().getName() + "\"");
    }

    /** E.g. {@code "QueuePairPoster of QueuePair@0x55d0c1a0"}, for messages. */
    final String describe() {
        return release.name;
    }

    @Override
    public final String toString() {
        return describe();
    }

    /** The Cleaner's action (and the close's): releases the pin; warns unless {@link #close()} ran it. */
    private static final class Release implements Runnable {

        private final NativeResource resource;
        private final String name;
        private volatile boolean closed;

        Release(NativeResource resource, String name) {
            this.resource = resource;
            this.name = name;
        }

        @Override
        public void run() {
            if (!closed) {
                LOG.warn("{} was never closed; releasing its pin now", name);
            }
            resource.unpin();
        }
    }
}
