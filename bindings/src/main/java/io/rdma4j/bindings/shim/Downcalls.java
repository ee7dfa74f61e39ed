package io.rdma4j.bindings.shim;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Builds the shim's method handles from jextract's descriptors, so that no signature is written by hand twice.
 * All handles are created once, into {@code static final} fields, which lets the JIT inline them.
 */
final class Downcalls {

    private static final Linker LINKER = Linker.nativeLinker();

    private Downcalls() {
    }

    /** A call through a function pointer: {@code (MemorySegment target, args...)}. */
    static MethodHandle pointer(FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(descriptor);
    }

    /**
     * A short data-path call through a function pointer, without the thread-state transition
     * ({@code critical(false)}): only for calls that never block for long and never call back into Java.
     */
    static MethodHandle criticalPointer(FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(descriptor, Linker.Option.critical(false));
    }

    /** A call through a function pointer that reports failure in errno: {@code (target, errnoState, args...)}. */
    static MethodHandle pointerCapturingErrno(FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(descriptor, Errno.CAPTURE);
    }

    /** A call of an exported function that reports failure in errno: {@code (errnoState, args...)}. */
    static MethodHandle exportedCapturingErrno(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor, Errno.CAPTURE);
    }

    /** Rethrows what {@code invokeExact} threw: only unchecked throwables can come out of a downcall. */
    static RuntimeException rethrow(Throwable thrown) {
        if (thrown instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (thrown instanceof Error error) {
            throw error;
        }
        throw new IllegalStateException("unexpected checked exception from a downcall", thrown);
    }
}
