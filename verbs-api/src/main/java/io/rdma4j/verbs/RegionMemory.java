package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The memory of {@link ProtectionDomain#allocateMemory}: page-aligned and zeroed, each allocation in a shared
 * {@link Arena}, so that once freed no thread can touch it again.
 *
 * <p>Closing a shared arena is a handshake with every JVM thread: 23–35 µs measured on the host, against 0.4 µs
 * for the rest of registering and closing 4 KiB (stub provider), and no cheaper way exists to revoke a segment
 * from every thread (an automatic arena defers the free to the collector: 1–43 µs per 4 KiB allocation under
 * churn, measured; closing on another thread serializes on the handshakes all the same). So allocations of up to
 * {@link #SLAB_LIMIT} share a {@link #SLAB_SIZE} slab, one arena, bump-allocated and never reused: a slab is freed
 * once it is full and all its allocations are freed, one handshake for up to 256 allocations. Until then the
 * segment of a freed allocation stays readable and writable (the device no longer uses it, and no other
 * allocation gets its pages); one live allocation keeps its slab. Larger allocations have an arena of their own,
 * freed at once.
 *
 * <p>Thread-safety: all methods may be called from any thread.
 */
final class RegionMemory {

    /** The largest allocation carved from a slab. */
    static final long SLAB_LIMIT = 64 << 10;
    static final long SLAB_SIZE = 1 << 20;
    private static final long PAGE_SIZE = 4096;

    /** The memory of every {@link ProtectionDomain#allocateMemory}. */
    static final RegionMemory SHARED = new RegionMemory();

    /** The slab allocations are carved from, guarded by this; null until the first. */
    private Slab current;
    /** Slabs not yet freed, guarded by this. */
    private int openSlabs;

    /**
     * Page-aligned, zeroed memory and what frees it: once, however often it runs (a region whose parent closed while
     * it was made frees its memory as it is destroyed, and its maker again as it fails).
     */
    record Allocation(MemorySegment segment, Runnable free) {

        Allocation {
            AtomicBoolean freed = new AtomicBoolean();
            Runnable action = free;
            free = () -> {
                if (freed.compareAndSet(false, true)) {
                    action.run();
                }
            };
        }
    }

    /**
     * Allocates {@code size} bytes.
     *
     * @throws VerbException {@code malloc} ENOMEM if the memory is exhausted
     */
    Allocation allocate(long size) {
        try {
            if (size > SLAB_LIMIT) {
                Arena arena = Arena.ofShared();
                return new Allocation(allocateIn(arena, size), arena::close);
            }
            synchronized (this) {
                long pages = (size + PAGE_SIZE - 1) & -PAGE_SIZE;
                if (current == null || current.next + pages > SLAB_SIZE) {
                    Slab full = current;
                    current = null;
                    if (full != null) {
                        full.retire();
                    }
                    current = new Slab();
                }
                return current.carve(size, pages);
            }
        } catch (OutOfMemoryError e) {
            throw VerbException.of("malloc", RdmaCore.ENOMEM(), size + " bytes for a region");
        }
    }

    /** Page-aligned, zeroed memory from the new {@code arena}, which is closed if it cannot have it. */
    private static MemorySegment allocateIn(Arena arena, long size) {
        try {
            return arena.allocate(size, PAGE_SIZE);
        } catch (OutOfMemoryError e) {
            arena.close();
            throw e;
        }
    }

    /** Slabs allocated and not yet freed. */
    synchronized int openSlabs() {
        return openSlabs;
    }

    /** One arena's memory, guarded by its {@link RegionMemory}. */
    private final class Slab {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment memory;
        private long next;
        private int live;
        private boolean retired;

        Slab() {
            memory = allocateIn(arena, SLAB_SIZE);
            openSlabs++;
        }

        Allocation carve(long size, long pages) {
            MemorySegment segment = memory.asSlice(next, size);
            next += pages;
            live++;
            return new Allocation(segment, this::release);
        }

        private void release() {
            synchronized (RegionMemory.this) {
                live--;
                closeIfDone();
            }
        }

        void retire() {
            retired = true;
            closeIfDone();
        }

        private void closeIfDone() {
            if (retired && live == 0) {
                arena.close();
                openSlabs--;
            }
        }
    }
}
