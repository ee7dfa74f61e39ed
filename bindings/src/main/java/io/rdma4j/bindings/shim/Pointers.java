package io.rdma4j.bindings.shim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Sizes and scopes C pointers ({@link MemorySegment#reinterpret}, a restricted method), so that rdma4j's API
 * modules make no restricted call themselves: an application grants native access to {@code io.rdma4j.bindings}
 * alone (which makes every downcall) instead of to each rdma4j module. Internal, like the rest of this package.
 */
public final class Pointers {

    /**
     * All of memory, for reads and writes at absolute addresses that the caller has checked itself: they skip a
     * segment's own checks on each access (its type, bounds and arena). The caller must keep the memory alive.
     */
    public static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private Pointers() {
    }

    /** {@code pointer} as {@code size} bytes, in its own scope. */
    public static MemorySegment sized(MemorySegment pointer, long size) {
        return pointer.reinterpret(size);
    }

    /** {@code pointer} as {@code size} bytes in {@code arena}'s scope: dead once the arena is closed. */
    public static MemorySegment sized(MemorySegment pointer, long size, Arena arena) {
        return pointer.reinterpret(size, arena, null);
    }

    /** The {@code size} bytes at {@code address}, in the global scope. */
    public static MemorySegment at(long address, long size) {
        return MemorySegment.ofAddress(address).reinterpret(size);
    }
}
