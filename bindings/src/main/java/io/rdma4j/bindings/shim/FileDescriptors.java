package io.rdma4j.bindings.shim;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.pollfd;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * rdma4j's bounded waits on a completion channel, a CM event channel or a context's async events: make the
 * verbs' file descriptor non-blocking ({@code fcntl}), wait for it on the {@link Poller}, or {@code poll} it once
 * with a timeout, with errno captured. Stateless and thread-safe.
 */
public final class FileDescriptors {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = LINKER.downcallHandle(RdmaCore.poll$address(), RdmaCore.poll$descriptor(),
            Errno.CAPTURE);
    /** {@code int fcntl(int fd, int cmd, ...)} called with one int vararg: the variadic position must be declared. */
    private static final MethodHandle FCNTL = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("fcntl"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2), Errno.CAPTURE);

    private FileDescriptors() {
    }

    /**
     * Sets {@code O_NONBLOCK} on {@code fd}.
     *
     * @return 0, or the errno of the failed {@code fcntl}
     */
    public static int makeNonBlocking(int fd) {
        MemorySegment state = Errno.state();
        try {
            int flags = (int) FCNTL.invokeExact(state, fd, RdmaCore.F_GETFL(), 0);
            if (flags < 0) {
                return Errno.get(state);
            }
            int rc = (int) FCNTL.invokeExact(state, fd, RdmaCore.F_SETFL(), flags | RdmaCore.O_NONBLOCK());
            return rc < 0 ? Errno.get(state) : 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The longest a waiter parks before it looks again: only a safety net, since the owners of the descriptors wake
     * their waiters when they close ({@link Poller#wakeAll}). Long, so that thousands of parked waiters cost nothing.
     */
    private static final long SLICE_NANOS = 10_000_000_000L;

    /**
     * Takes an event from a non-blocking verbs file descriptor, waiting for one up to {@code timeout}: if
     * {@code take} finds none, the thread parks on the process's {@link Poller} until the descriptor is readable.
     * A virtual thread parked there holds no carrier, so any number of threads may wait at once; an interrupt
     * ends the wait.
     *
     * @param take returns the event, or {@code null} when the descriptor has none (EAGAIN)
     * @return the event, or {@code null} once {@code timeout} has passed
     * @throws InterruptedException  if the thread is interrupted while waiting
     * @throws IllegalStateException if the descriptor cannot be watched (e.g. EBADF: it was closed)
     */
    public static <T> T awaitEvent(int fd, java.time.Duration timeout, java.util.function.Supplier<T> take)
            throws InterruptedException {
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
            Poller.instance().await(fd, Math.min(SLICE_NANOS, remaining));
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for an RDMA event");
            }
        }
    }

    /**
     * Waits up to {@code timeoutMillis} for {@code fd} to become readable ({@code poll} with {@code POLLIN}).
     *
     * @return 1 if readable (or in error: the following read reports it), 0 on timeout, or {@code -errno}
     *         ({@code -EINTR} when a signal interrupted the wait)
     */
    public static int awaitReadable(int fd, int timeoutMillis) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(pollfd.layout());
            pollfd.fd(fds, fd);
            pollfd.events(fds, (short) RdmaCore.POLLIN());
            MemorySegment state = Errno.state();
            int rc = (int) POLL.invokeExact(state, fds, 1L, timeoutMillis);
            return rc < 0 ? -Errno.get(state) : rc;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
