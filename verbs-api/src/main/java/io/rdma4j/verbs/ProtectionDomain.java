package io.rdma4j.verbs;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_pd;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Set;

/**
 * A protection domain ({@code struct ibv_pd}, from {@code ibv_alloc_pd}; closed by {@code ibv_dealloc_pd}): the
 * scope within which memory regions, queue pairs and address handles may be used together.
 *
 * <p>Lifetime: keeps its {@link Context} alive; closing it first closes the memory regions (and, later, queue pairs
 * and address handles) created from it. Thread-safety: all methods may be called from any thread.
 */
public final class ProtectionDomain extends VerbsObject {

    private final Context context;

    ProtectionDomain(Context context, MemorySegment pd) {
        super(context, pd, ibv_pd.layout().byteSize());
        this.context = context;
    }

    /** The context this domain belongs to. */
    public Context context() {
        return context;
    }

    /**
     * Registers native memory with the device ({@code ibv_reg_mr_iova2}, with the segment's address as IOVA), so
     * that work requests can name it by {@link MemoryRegion#lkey()} and remote peers by {@link MemoryRegion#rkey()}.
     * Zero-copy: the device reads and writes {@code segment} itself, which must stay alive (its arena open) until the
     * region is closed.
     *
     * @param segment a native segment (a heap segment can move and cannot be registered)
     * @param access  what the device and remote peers may do with it; empty means local read only
     * @throws IllegalArgumentException if {@code segment} is a heap segment or empty
     * @throws RdmaException            if the verb fails; ENOMEM usually means the locked-memory limit is too low
     */
    public MemoryRegion registerMemory(MemorySegment segment, Set<Access> access) {
        Objects.requireNonNull(segment, "segment");
        Objects.requireNonNull(access, "access");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("registerMemory needs a native segment (e.g. Arena.allocate); "
                    + "a heap segment can be moved by the garbage collector and cannot be registered");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("registerMemory needs a segment of at least 1 byte");
        }
        MemorySegment state = Errno.state();
        MemorySegment mr = ExportedVerbs.ibv_reg_mr_iova2(state, handle(), segment, segment.byteSize(),
                segment.address(), Access.mask(access));
        if (mr.address() == 0) {
            int errno = Errno.get(state);
            String hint = errno == RdmaCore.ENOMEM()
                    ? "registered memory is locked: raise the locked-memory limit (ulimit -l, or LimitMEMLOCK= for a"
                    + " systemd service) above " + segment.byteSize() + " bytes"
                    : segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address());
            throw RdmaException.of("ibv_reg_mr_iova2", errno, hint);
        }
        return new MemoryRegion(this, mr, segment);
    }

    @Override
    int closeRank() {
        return 5;
    }

    @Override
    String destroyVerb() {
        return "ibv_dealloc_pd";
    }

    @Override
    int destroy(MemorySegment pointer) {
        return RdmaCore.ibv_dealloc_pd(pointer);
    }
}
