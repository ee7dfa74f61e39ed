package io.rdma4j.bindings.shim;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * The {@code errno} a verb left behind, captured by the downcall itself
 * ({@link Linker.Option#captureCallState(String...)}): reading errno after the call returns would see whatever
 * the JVM did in between.
 *
 * <p>Every capturing handle takes a capture-state segment right after its target (see {@link Downcalls}). Use
 * {@link #state()} for the calling thread's segment; it is allocated once per thread, so control-path calls do not
 * allocate. Thread-safe: each thread has its own segment.
 */
public final class Errno {

    /** The option that makes a downcall store errno into its state segment. */
    public static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");

    private static final StructLayout STATE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = STATE_LAYOUT.varHandle(PathElement.groupElement("errno"));
    private static final ThreadLocal<MemorySegment> STATE =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(STATE_LAYOUT));

    private Errno() {
    }

    /** Returns this thread's capture-state segment, to pass to a capturing handle. */
    public static MemorySegment state() {
        return STATE.get();
    }

    /** Returns the errno stored in {@code state} by the last capturing call that used it. */
    public static int get(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /** Stores {@code errno} into {@code state}, as the inline verbs do ({@code errno = EOPNOTSUPP}) before they fail. */
    public static void set(MemorySegment state, int errno) {
        ERRNO.set(state, 0L, errno);
    }

    /** Returns the errno that this thread's last capturing call left in {@link #state()}. */
    public static int last() {
        return get(state());
    }
}
