package io.rdma4j.verbs;

import io.rdma4j.bindings.shim.FileDescriptors;
import io.rdma4j.bindings.verbs.RdmaCore;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The bounded wait behind {@link CompletionChannel#await} and {@link Context#nextAsyncEvent}: try to take an event
 * from a non-blocking verbs file descriptor; if there is none, {@code poll(2)} it in slices of at most 100 ms until
 * the deadline. The slices keep a virtual thread's carrier from being pinned for longer than that, and let an
 * interrupt end the wait.
 */
final class EventWait {

    private static final int SLICE_MILLIS = 100;

    private EventWait() {
    }

    /**
     * @param take returns the event, or {@code null} when the descriptor has none (EAGAIN)
     * @return the event, or {@code null} once {@code timeout} has passed
     */
    static <T> T await(int fd, Duration timeout, Supplier<T> take) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            T event = take.get();
            if (event != null) {
                return event;
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return null;
            }
            int millis = (int) Math.min(SLICE_MILLIS, Math.max(1, remaining / 1_000_000));
            int rc = FileDescriptors.awaitReadable(fd, millis);
            if (rc < 0 && rc != -RdmaCore.EINTR()) {
                throw RdmaException.of("poll", -rc);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for an RDMA event");
            }
            if (rc == 0) {
                Thread.yield();
            }
        }
    }
}
