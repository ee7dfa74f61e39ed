package io.rdma4j.bindings.shim;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * One {@code epoll} instance and one platform thread that wake the threads waiting for rdma-core's file descriptors
 * (completion channels, CM event channels, async events), as the JDK's own NIO poller does for sockets: a waiting
 * thread registers, arms its descriptor (one-shot) and parks; a virtual thread parked here holds no carrier, so any
 * number of them wait on any number of descriptors with the JDK's few carriers. Thread-safe; started on first use.
 *
 * <p>{@code struct epoll_event} is laid out by hand (it is not part of the rdma-core bindings): packed on x86-64,
 * naturally aligned elsewhere, as in {@code <sys/epoll.h>}; {@code StructLayoutTest} checks it against gcc.
 */
public final class Poller {

    /** {@code struct epoll_event}: {@code uint32_t events; epoll_data_t data;}. */
    public static final StructLayout EVENT_LAYOUT = "amd64".equals(System.getProperty("os.arch"))
            ? MemoryLayout.structLayout(ValueLayout.JAVA_INT.withName("events"),
                    ValueLayout.JAVA_LONG_UNALIGNED.withName("data"))
            : MemoryLayout.structLayout(ValueLayout.JAVA_INT.withName("events"), MemoryLayout.paddingLayout(4),
                    ValueLayout.JAVA_LONG.withName("data"));

    private static final int EPOLLIN = 0x001;
    private static final int EPOLLONESHOT = 1 << 30;
    private static final int EPOLL_CLOEXEC = 0x80000;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_MOD = 3;
    private static final int ENOENT = 2;
    private static final int EINTR = 4;
    private static final int BATCH = 64;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle EPOLL_CREATE1 = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("epoll_create1"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), Errno.CAPTURE);
    private static final MethodHandle EPOLL_CTL = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("epoll_ctl"), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS),
            Errno.CAPTURE);
    private static final MethodHandle EPOLL_WAIT = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("epoll_wait"), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Errno.CAPTURE);

    private static final class Holder {
        static final Poller INSTANCE = new Poller();
    }

    private final int epollFd;
    /** The threads waiting per descriptor. */
    private final Map<Integer, Set<Thread>> waiters = new ConcurrentHashMap<>();

    private Poller() {
        MemorySegment state = Errno.state();
        try {
            epollFd = (int) EPOLL_CREATE1.invokeExact(state, EPOLL_CLOEXEC);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        if (epollFd < 0) {
            throw new IllegalStateException("epoll_create1 failed: errno " + Errno.get(state));
        }
        Thread.ofPlatform().daemon().name("rdma4j-poller").start(this::run);
    }

    /** The process's poller. */
    public static Poller instance() {
        return Holder.INSTANCE;
    }

    /**
     * Parks the calling thread until {@code fd} is readable (or in error), {@code nanos} pass, the thread is
     * interrupted, or {@link #wakeAll} is called for {@code fd}; may also return spuriously: callers re-check.
     *
     * @throws IllegalStateException if {@code epoll_ctl} fails (EBADF: the descriptor was closed)
     */
    public void await(int fd, long nanos) {
        Thread me = Thread.currentThread();
        Set<Thread> threads = waiters.computeIfAbsent(fd, k -> ConcurrentHashMap.newKeySet());
        threads.add(me);
        try {
            arm(fd);
            LockSupport.parkNanos(this, nanos);
        } finally {
            threads.remove(me);
        }
    }

    /** Wakes every thread waiting for {@code fd} (its owner was closed: they will see that). */
    public void wakeAll(int fd) {
        Set<Thread> threads = waiters.get(fd);
        if (threads != null) {
            threads.forEach(LockSupport::unpark);
        }
    }

    /** Registers {@code fd} for one readiness report (EPOLLONESHOT): re-armed by each wait. */
    private void arm(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(EVENT_LAYOUT);
            event.set(ValueLayout.JAVA_INT, 0, EPOLLIN | EPOLLONESHOT);
            event.set(ValueLayout.JAVA_LONG_UNALIGNED, EVENT_LAYOUT.byteOffset(
                    MemoryLayout.PathElement.groupElement("data")), fd);
            MemorySegment state = Errno.state();
            int rc = (int) EPOLL_CTL.invokeExact(state, epollFd, EPOLL_CTL_MOD, fd, event);
            if (rc != 0 && Errno.get(state) == ENOENT) {
                rc = (int) EPOLL_CTL.invokeExact(state, epollFd, EPOLL_CTL_ADD, fd, event);
            }
            if (rc != 0) {
                throw new IllegalStateException("epoll_ctl on fd " + fd + " failed: errno " + Errno.get(state));
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** The poller thread: waits for armed descriptors and unparks their waiters. */
    private void run() {
        long size = EVENT_LAYOUT.byteSize();
        long dataOffset = EVENT_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("data"));
        MemorySegment events = Arena.global().allocate(size * BATCH, 8);
        MemorySegment state = Arena.global().allocate(Linker.Option.captureStateLayout());
        while (true) {
            int n;
            try {
                n = (int) EPOLL_WAIT.invokeExact(state, epollFd, events, BATCH, -1);
            } catch (Throwable t) {
                throw Downcalls.rethrow(t);
            }
            if (n < 0 && Errno.get(state) != EINTR) {
                throw new IllegalStateException("epoll_wait failed: errno " + Errno.get(state));
            }
            for (int i = 0; i < n; i++) {
                wakeAll((int) events.get(ValueLayout.JAVA_LONG_UNALIGNED, i * size + dataOffset));
            }
        }
    }
}
