package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.ContextOps;
import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_ah_attr;
import io.rdma4j.bindings.verbs.ibv_pd;
import io.rdma4j.bindings.verbs.ibv_srq_attr;
import io.rdma4j.bindings.verbs.ibv_srq_init_attr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Set;

/**
 * A protection domain ({@code struct ibv_pd}, from {@code ibv_alloc_pd}; closed by {@code ibv_dealloc_pd}): the
 * scope within which memory regions, queue pairs and address handles may be used together.
 *
 * <p>Lifetime: keeps its {@link Context} alive; closing it first closes the queue pairs, shared receive queues, memory
 * regions and windows and address handles created from it. Thread-safety: all methods may be called from any thread.
 */
public final class ProtectionDomain extends NativeObject {

    private final Context context;

    ProtectionDomain(Context context, MemorySegment pd) {
        super(context, pd, ibv_pd.layout().byteSize(), Rank.PROTECTION_DOMAIN, "ibv_dealloc_pd",
                RdmaCore::ibv_dealloc_pd);
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
     * @throws VerbException            if the verb fails; ENOMEM usually means the locked-memory limit is too low
     */
    public MemoryRegion registerMemory(MemorySegment segment, Set<Access> access) {
        return register(segment, access, null);
    }

    private MemoryRegion register(MemorySegment segment, Set<Access> access, Runnable free) {
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
        int mask = Access.mask(access);
        MemorySegment mr = withPinned(pd -> ExportedVerbs.ibv_reg_mr_iova2(state, pd, segment, segment.byteSize(),
                segment.address(), mask));
        if (mr.address() == 0) {
            int errno = Errno.get(state);
            String hint = errno == RdmaCore.ENOMEM()
                    ? "registered memory is locked: raise the locked-memory limit (ulimit -l, or LimitMEMLOCK= for a"
                    + " systemd service) above " + segment.byteSize() + " bytes"
                    : segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address());
            throw VerbException.of("ibv_reg_mr_iova2", errno, hint);
        }
        return new MemoryRegion(this, mr, segment, mask, free);
    }

    /**
     * Allocates {@code size} bytes of page-aligned, zeroed native memory and registers it; the region owns the
     * memory and frees it when closed. Once freed, the memory belongs to no other region: its segment refuses access
     * ({@link IllegalStateException}) from every thread, or, for regions of up to 64 KiB (which share 1 MiB slabs,
     * freed together to save a handshake with every JVM thread per region), stays readable and writable until its
     * slab is freed: once all regions of the slab are closed.
     *
     * @throws IllegalArgumentException if {@code size < 1}
     * @throws VerbException            as {@link #registerMemory}; {@code malloc} ENOMEM if the memory is exhausted
     */
    public MemoryRegion allocateMemory(long size, Set<Access> access) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be at least 1 byte, not " + size);
        }
        RegionMemory.Allocation memory = RegionMemory.SHARED.allocate(size);
        try {
            return register(memory.segment(), access, memory.free());
        } catch (RuntimeException e) {
            memory.free().run();
            throw e;
        }
    }

    /** Starts a queue pair of {@code type} in this domain; see {@link QueuePair.Builder}. */
    public QueuePair.Builder queuePair(QueuePairType type) {
        checkOpen();
        return new QueuePair.Builder(this, type);
    }

    /**
     * Creates a shared receive queue ({@code ibv_create_srq}).
     *
     * @param maxWorkRequests  receive requests it must hold
     * @param maxScatterGather scatter entries per request
     * @throws VerbException if the verb fails
     */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWorkRequests, int maxScatterGather) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment init = arena.allocate(ibv_srq_init_attr.layout());
            MemorySegment attr = ibv_srq_init_attr.attr(init);
            ibv_srq_attr.max_wr(attr, maxWorkRequests);
            ibv_srq_attr.max_sge(attr, maxScatterGather);
            MemorySegment state = Errno.state();
            MemorySegment srq = withPinned(pd -> ExportedVerbs.ibv_create_srq(state, pd, init));
            if (srq.address() == 0) {
                throw VerbException.of("ibv_create_srq", Errno.get(state),
                        maxWorkRequests + " requests of " + maxScatterGather + " entries");
            }
            return new SharedReceiveQueue(this, srq);
        }
    }

    /**
     * Creates an address handle for UD sends to {@code address} ({@code ibv_create_ah}).
     *
     * @throws VerbException if the verb fails (e.g. EINVAL for a GID index that does not exist)
     */
    public AddressHandle createAddressHandle(AddressVector address) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_ah_attr.layout());
            address.writeTo(attr);
            MemorySegment state = Errno.state();
            MemorySegment ah = withPinned(pd -> ExportedVerbs.ibv_create_ah(state, pd, attr));
            if (ah.address() == 0) {
                throw VerbException.of("ibv_create_ah", Errno.get(state), address.toString());
            }
            return new AddressHandle(this, ah, address);
        }
    }

    /**
     * Allocates a memory window ({@code ibv_alloc_mw}).
     *
     * @throws UnsupportedVerbException if the provider has no memory windows of that type
     */
    public MemoryWindow allocateMemoryWindow(MemoryWindow.Type type) {
        MemorySegment state = Errno.state();
        MemorySegment mw = withPinned(pd -> ContextOps.ibv_alloc_mw(state, pd, type.value()));
        if (mw.address() == 0) {
            throw VerbException.of("ibv_alloc_mw", Errno.get(state), type.toString());
        }
        return new MemoryWindow(this, mw, type);
    }
}
