package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_mr;
import java.lang.foreign.MemorySegment;

/**
 * Registered memory ({@code struct ibv_mr}, from {@code ibv_reg_mr_iova2}; closed by {@code ibv_dereg_mr}).
 *
 * <p>Lifetime: keeps its {@link ProtectionDomain} alive. A segment given to
 * {@link ProtectionDomain#registerMemory} belongs to the caller and must stay alive until this region is closed;
 * memory from {@link ProtectionDomain#allocateMemory} belongs to the region and is freed when it is closed (see
 * there). Thread-safety: immutable after creation except for {@link #close()}; the keys may be read from any
 * thread.
 */
public final class MemoryRegion extends NativeObject {

    private final ProtectionDomain protectionDomain;
    private final MemorySegment segment;
    /** The segment's address and size, kept beside it: a request's entry reads them without loading the segment. */
    private final long address;
    private final long length;
    private final int lkey;
    private final int rkey;
    /** The access flags it was registered with ({@code ibv_access_flags}). */
    private final int accessMask;

    /**
     * @param accessMask the {@link Access} flags it was registered with
     * @param free frees the memory when the region owns it ({@link ProtectionDomain#allocateMemory}), run once the
     *             region is deregistered (never if deregistration is refused: the device may still write there);
     *             else {@code null}
     */
    MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment segment, int accessMask, Runnable free) {
        // The keys are read before the region joins its domain: from then on a close of the domain on another thread
        // could free the struct, and reading it would need a pin (two atomic additions per registration).
        long size = ibv_mr.layout().byteSize();
        MemorySegment struct = Pointers.sized(mr, size);
        this.lkey = ibv_mr.lkey(struct);
        this.rkey = ibv_mr.rkey(struct);
        this.protectionDomain = pd;
        this.accessMask = accessMask;
        this.segment = segment;
        this.address = segment.address();
        this.length = segment.byteSize();
        super(pd, mr, size, Rank.MEMORY_REGION, "ibv_dereg_mr", pointer -> {
            int rc = RdmaCore.ibv_dereg_mr(pointer);
            if (rc == 0 && free != null) {
                free.run();
            }
            return rc;
        });
    }

    /** The protection domain it was registered in. */
    public ProtectionDomain protectionDomain() {
        return protectionDomain;
    }

    /** Whether it was registered with {@code access} (e.g. {@link Access#REMOTE_READ} for peers' READs). */
    public boolean allows(Access access) {
        return (accessMask & access.value()) != 0;
    }

    /** The registered memory. */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * The local key, for scatter/gather entries of local work requests.
     *
     * @throws IllegalStateException once the region is closed: the key no longer names it
     */
    public int lkey() {
        checkOpen();
        return lkey;
    }

    /** {@link #lkey()} unchecked, for a caller that has just checked that the region is open. */
    int localKey() {
        return lkey;
    }

    /**
     * The remote key, for peers' RDMA READ/WRITE and atomics into this region.
     *
     * @throws IllegalStateException once the region is closed
     */
    public int rkey() {
        checkOpen();
        return rkey;
    }

    /** The virtual address of the region's first byte (also its IOVA: what remote peers address). */
    public long address() {
        return address;
    }

    /** The region's length in bytes. */
    public long length() {
        return length;
    }

    /**
     * The address of {@code length} bytes at {@code offset} in this region, for the C field {@code field}.
     *
     * @throws IndexOutOfBoundsException if the range is not inside the region, with the field and the region's size
     */
    long addressOf(String field, long offset, long length) {
        if (offset < 0 || length < 0 || offset > this.length - length) {
            throw new IndexOutOfBoundsException(field + ": bytes " + offset + " to " + offset + " + " + length
                    + " are not inside the region's " + this.length + " bytes");
        }
        return address + offset;
    }
}
