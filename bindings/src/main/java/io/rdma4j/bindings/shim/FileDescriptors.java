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
 * The two libc calls behind rdma4j's bounded waits on a completion channel or a context's async events: make the
 * verbs' file descriptor non-blocking ({@code fcntl}) and wait for it with a timeout ({@code poll}), both with
 * errno captured. Stateless and thread-safe.
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

    private static final int SLICE_MILLIS = 100;

    /**
     * Takes an event from a non-blocking verbs file descriptor, waiting for one up to {@code timeout}: if
     * {@code take} finds none, {@code poll(2)} the descriptor in slices of at most 100 ms until the deadline. The
     * slices keep a virtual thread's carrier from being pinned for longer than that, and let an interrupt end the
     * wait.
     *
     * @param take returns the event, or {@code null} when the descriptor has none (EAGAIN)
     * @return the event, or {@code null} once {@code timeout} has passed
     * @throws IllegalStateException if {@code poll} itself fails (e.g. EBADF)
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
            int rc = awaitReadable(fd, (int) Math.min(SLICE_MILLIS, Math.max(1, remaining / 1_000_000)));
            if (rc < 0 && rc != -RdmaCore.EINTR()) {
                throw new IllegalStateException("poll on fd " + fd + " failed: errno " + -rc + " ("
                        + RdmaCore.strerror(-rc).getString(0) + ")");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for an RDMA event");
            }
            if (rc == 0) {
                Thread.yield();
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
