package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_mw_bind_info;
import io.rdma4j.bindings.verbs.ibv_send_wr;
import io.rdma4j.verbs.internal.FieldRange;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * A reusable batch of send work requests ({@code struct ibv_send_wr[]} with their {@code ibv_sge}s) for
 * {@link QueuePair#postSend} ({@code ibv_post_send}). Each opcode has its own method that starts a request; the
 * methods after it (gather entries, flags, UD destination) apply to that request. Nothing is allocated per post.
 *
 * <pre>{@code
 * sends.clear()
 *      .rdmaWrite(1, remoteAddress, remoteKey).gather(region, 0, 4096)
 *      .sendWithImmediate(2, 42).signaled();
 * qp.postSend(sends);
 * }</pre>
 *
 * <p>{@link #inline()} asks the provider to copy the gathered bytes into the work queue during the post: the
 * memory may then be reused at once, up to the QP's inline limit. Without it, the memory must stay untouched until
 * the request's completion. Unregistered memory goes inline through {@link #inline(MemorySegment)}, which copies it
 * into the batch at once: the provider copies inline bytes from raw addresses, so an inline request takes its bytes
 * only from memory that the JVM vouches for (a region, or the batch itself), never from
 * {@link #gatherUnchecked}.
 *
 * <p>Lifetime: owns its native memory; {@link #close()} frees it (a Cleaner frees a dropped batch's). A post
 * refuses a batch that names a closed region (or handle, or window) with {@link IllegalStateException}, and the
 * objects the provider reads during the post (address handles, windows, and the regions of inline and bind
 * requests) refuse to close while it runs; the region of any other request, closed by another thread during the
 * post, ends that request in an error completion (the device checks the key). Thread-safety: none — fill and post a
 * batch from one thread at a time; it may be refilled as soon as the post returns.
 */
public final class SendWorkRequests extends WorkRequestBatch {

    private static final long OPCODE = ibv_send_wr.opcode$offset();
    private static final long FLAGS = ibv_send_wr.send_flags$offset();
    private static final long IMM = ibv_send_wr.imm_data$offset();
    private static final long INVALIDATE_RKEY = ibv_send_wr.invalidate_rkey$offset();
    private static final long UNION = ibv_send_wr.wr$offset();
    private static final long RDMA_ADDR = UNION + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.remote_addr$offset();
    private static final long RDMA_RKEY = UNION + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.rkey$offset();
    private static final long ATOMIC = UNION + ibv_send_wr.wr.atomic$offset();
    private static final long ATOMIC_ADDR = ATOMIC + ibv_send_wr.wr.atomic.remote_addr$offset();
    private static final long ATOMIC_COMPARE_ADD = ATOMIC + ibv_send_wr.wr.atomic.compare_add$offset();
    private static final long ATOMIC_SWAP = ATOMIC + ibv_send_wr.wr.atomic.swap$offset();
    private static final long ATOMIC_RKEY = ATOMIC + ibv_send_wr.wr.atomic.rkey$offset();
    private static final long UD = UNION + ibv_send_wr.wr.ud$offset();
    private static final long UD_AH = UD + ibv_send_wr.wr.ud.ah$offset();
    private static final long UD_QPN = UD + ibv_send_wr.wr.ud.remote_qpn$offset();
    private static final long UD_QKEY = UD + ibv_send_wr.wr.ud.remote_qkey$offset();
    private static final long BIND = ibv_send_wr.bind_mw$offset();
    private static final long BIND_MW = BIND + ibv_send_wr.bind_mw.mw$offset();
    private static final long BIND_RKEY = BIND + ibv_send_wr.bind_mw.rkey$offset();
    private static final long BIND_INFO = BIND + ibv_send_wr.bind_mw.bind_info$offset();
    private static final long BIND_MR = BIND_INFO + ibv_mw_bind_info.mr$offset();
    private static final long BIND_ADDR = BIND_INFO + ibv_mw_bind_info.addr$offset();
    private static final long BIND_LENGTH = BIND_INFO + ibv_mw_bind_info.length$offset();
    private static final long BIND_ACCESS = BIND_INFO + ibv_mw_bind_info.mw_access_flags$offset();

    private static final int WR_SEND = RdmaCore.IBV_WR_SEND();
    private static final int WR_SEND_WITH_IMM = RdmaCore.IBV_WR_SEND_WITH_IMM();
    private static final int WR_SEND_WITH_INV = RdmaCore.IBV_WR_SEND_WITH_INV();
    private static final int WR_RDMA_WRITE = RdmaCore.IBV_WR_RDMA_WRITE();
    private static final int WR_RDMA_WRITE_WITH_IMM = RdmaCore.IBV_WR_RDMA_WRITE_WITH_IMM();
    private static final int WR_RDMA_READ = RdmaCore.IBV_WR_RDMA_READ();
    private static final int WR_CMP_AND_SWP = RdmaCore.IBV_WR_ATOMIC_CMP_AND_SWP();
    private static final int WR_FETCH_AND_ADD = RdmaCore.IBV_WR_ATOMIC_FETCH_AND_ADD();
    private static final int WR_LOCAL_INV = RdmaCore.IBV_WR_LOCAL_INV();
    private static final int WR_BIND_MW = RdmaCore.IBV_WR_BIND_MW();
    private static final int SEND_SIGNALED = RdmaCore.IBV_SEND_SIGNALED();
    private static final int SEND_SOLICITED = RdmaCore.IBV_SEND_SOLICITED();
    private static final int SEND_INLINE = RdmaCore.IBV_SEND_INLINE();
    private static final int SEND_FENCE = RdmaCore.IBV_SEND_FENCE();

    /**
     * @param capacity         the most requests one post carries
     * @param maxScatterGather the most gather entries per request (at most the QP's send SGE limit)
     */
    public SendWorkRequests(int capacity, int maxScatterGather) {
        super(ibv_send_wr.layout(), ibv_send_wr.wr_id$offset(), ibv_send_wr.next$offset(),
                ibv_send_wr.sg_list$offset(), ibv_send_wr.num_sge$offset(), capacity, maxScatterGather);
    }

    /** How many requests have a {@link #destination}; the request being filled has one if {@link #addressedNow}. */
    private int addressed;
    private boolean addressedNow;
    /** How many requests are atomics, which a device without atomics must never be given. */
    private int atomics;
    /** Whether the request being filled is an atomic, whose one gather entry receives the 8-byte old value. */
    private boolean atomicNow;
    /** Whether the request being filled is inline, and whether it has an entry from {@link #gatherUnchecked}. */
    private boolean inlineNow;
    private boolean uncheckedNow;
    /**
     * Where {@link #inline(MemorySegment)} copies its bytes (the first {@link #staged} are in use), in an automatic
     * arena like the requests: the batch's own memory, which the provider then copies during the post.
     */
    private MemorySegment staging = MemorySegment.NULL;
    private long staged;
    /** Staging areas outgrown since the last clear: entries still point into them. Grows only with the staging. */
    private final java.util.List<MemorySegment> outgrown = new java.util.ArrayList<>(2);

    /** Empties the batch. */
    public SendWorkRequests clear() {
        reset();
        addressed = 0;
        addressedNow = false;
        atomics = 0;
        atomicNow = false;
        inlineNow = false;
        uncheckedNow = false;
        staged = 0;
        if (!outgrown.isEmpty()) {
            outgrown.clear();
        }
        return this;
    }

    /** Whether a request is an atomic (compare-and-swap, fetch-and-add). */
    boolean hasAtomics() {
        return atomics > 0;
    }

    /** Whether every request has a destination, as a UD queue pair needs (providers dereference its handle). */
    boolean everyRequestAddressed() {
        return addressed == count();
    }

    /** Adds a SEND ({@code IBV_WR_SEND}): the gathered bytes go to the peer's next receive. */
    public SendWorkRequests send(long workRequestId) {
        start(workRequestId, WR_SEND);
        return this;
    }

    /**
     * Adds a SEND with 32 bits of immediate data ({@code IBV_WR_SEND_WITH_IMM}), delivered in the receiver's
     * completion ({@link WorkCompletions#immediateData(int)}). Given in host order; sent big-endian, as the wire
     * format requires.
     */
    public SendWorkRequests sendWithImmediate(long workRequestId, int immediate) {
        long at = start(workRequestId, WR_SEND_WITH_IMM);
        putInt(at + IMM, Integer.reverseBytes(immediate));
        return this;
    }

    /** Adds a SEND that also invalidates the peer's {@code rkey} ({@code IBV_WR_SEND_WITH_INV}). */
    public SendWorkRequests sendWithInvalidate(long workRequestId, int rkeyToInvalidate) {
        long at = start(workRequestId, WR_SEND_WITH_INV);
        putInt(at + INVALIDATE_RKEY, rkeyToInvalidate);
        return this;
    }

    /** Adds an RDMA WRITE ({@code IBV_WR_RDMA_WRITE}) of the gathered bytes to the peer's memory. */
    public SendWorkRequests rdmaWrite(long workRequestId, long remoteAddress, int rkey) {
        rdma(start(workRequestId, WR_RDMA_WRITE), remoteAddress, rkey);
        return this;
    }

    /** Adds an RDMA WRITE that also consumes a receive and delivers {@code immediate} ({@code IBV_WR_RDMA_WRITE_WITH_IMM}). */
    public SendWorkRequests rdmaWriteWithImmediate(long workRequestId, long remoteAddress, int rkey, int immediate) {
        long at = start(workRequestId, WR_RDMA_WRITE_WITH_IMM);
        rdma(at, remoteAddress, rkey);
        putInt(at + IMM, Integer.reverseBytes(immediate));
        return this;
    }

    /** Adds an RDMA READ ({@code IBV_WR_RDMA_READ}) of the peer's memory into the scattered local entries. */
    public SendWorkRequests rdmaRead(long workRequestId, long remoteAddress, int rkey) {
        rdma(start(workRequestId, WR_RDMA_READ), remoteAddress, rkey);
        return this;
    }

    /**
     * Adds an atomic compare-and-swap on 8 aligned bytes of the peer ({@code IBV_WR_ATOMIC_CMP_AND_SWP}); the
     * old value lands in the one 8-byte gather entry.
     *
     * @throws IllegalArgumentException if {@code remoteAddress} is not 8-byte aligned
     */
    public SendWorkRequests compareAndSwap(long workRequestId, long remoteAddress, int rkey, long compare, long swap) {
        requireAligned(remoteAddress);
        long at = start(workRequestId, WR_CMP_AND_SWP);
        atomic(at, remoteAddress, rkey, compare);
        putLong(at + ATOMIC_SWAP, swap);
        return this;
    }

    /** Adds an atomic fetch-and-add ({@code IBV_WR_ATOMIC_FETCH_AND_ADD}); the old value lands in the gather entry. */
    public SendWorkRequests fetchAndAdd(long workRequestId, long remoteAddress, int rkey, long add) {
        requireAligned(remoteAddress);
        atomic(start(workRequestId, WR_FETCH_AND_ADD), remoteAddress, rkey, add);
        return this;
    }

    /** Adds a local invalidation of {@code rkey} ({@code IBV_WR_LOCAL_INV}), e.g. of a type 2 memory window. */
    public SendWorkRequests localInvalidate(long workRequestId, int rkeyToInvalidate) {
        long at = start(workRequestId, WR_LOCAL_INV);
        putInt(at + INVALIDATE_RKEY, rkeyToInvalidate);
        return this;
    }

    /**
     * Adds a bind of a type 2 memory window ({@code IBV_WR_BIND_MW}) to a range of {@code region}.
     *
     * @param newRkey the window's next key: {@link MemoryWindow#nextRkey()}
     */
    public SendWorkRequests bindMemoryWindow(long workRequestId, MemoryWindow window, int newRkey, MemoryRegion region,
                                             long offset, long length, Set<Access> access) {
        long address = region.addressOf("bind_info", offset, length);
        long at = start(workRequestId, WR_BIND_MW);
        name(window);
        name(region);
        // The provider reads the region's struct (its key) during the post: the post pins it.
        readsRegionsDuringPost();
        putLong(at + BIND_MW, window.openAddress());
        putInt(at + BIND_RKEY, newRkey);
        putLong(at + BIND_MR, region.openAddress());
        putLong(at + BIND_ADDR, address);
        putLong(at + BIND_LENGTH, length);
        putInt(at + BIND_ACCESS, Access.mask(access));
        return this;
    }

    /**
     * Adds a gather entry to the last request: {@code length} bytes of {@code region} from {@code offset}.
     *
     * @throws IndexOutOfBoundsException if the range is not inside the region
     * @throws IllegalArgumentException  if {@code length} does not fit {@code ibv_sge.length} (32 bits, unsigned)
     */
    public SendWorkRequests gather(MemoryRegion region, long offset, long length) {
        if (atomicNow && length != Long.BYTES) {
            throw new IllegalArgumentException("ibv_sge.length of an atomic's result buffer is 8, not " + length);
        }
        addEntry(region, offset, length);
        return this;
    }

    /**
     * Adds a gather entry without checking it against a region: the device checks it against {@code lkey}, and a bad
     * one completes with an error status rather than failing here. Never inline: the provider would copy from the
     * raw address itself, where a bad one crashes the process (use {@link #inline(MemorySegment)}).
     *
     * @throws IllegalStateException if the request is {@linkplain #inline() inline}
     */
    public SendWorkRequests gatherUnchecked(long address, long length, int lkey) {
        if (inlineNow) {
            throw uncheckedInline();
        }
        addEntry(address, length, lkey);
        uncheckedNow = true;
        return this;
    }

    /**
     * Adds {@code data} to the last request as inline data and makes it {@linkplain #inline() inline}: the bytes
     * are copied into the batch now (a heap or native segment, registered or not), so {@code data} may change or be
     * freed at once; the provider copies them into the work queue at post. Reuses the batch's memory from one fill
     * to the next (it grows, rarely, to the most bytes one fill has staged).
     *
     * @throws IllegalStateException     if {@code data}'s arena is closed, or the request has an unchecked entry
     * @throws IllegalArgumentException  if {@code data} is longer than {@code ibv_sge.length} allows
     */
    public SendWorkRequests inline(MemorySegment data) {
        long length = data.byteSize();
        FieldRange.unsigned32("ibv_sge.length", length);
        current();
        if (uncheckedNow) {
            throw uncheckedInline();
        }
        if (staging.byteSize() - staged < length) {
            growStaging(length);
        }
        MemorySegment.copy(data, 0, staging, staged, length);
        addEntry(staging.address() + staged, length, 0);
        staged += length;
        return inline();
    }

    /** Makes room for {@code length} more staged bytes; the entries already staged keep their area alive. */
    private void growStaging(long length) {
        if (staged > 0) {
            outgrown.add(staging);
        }
        long size = Math.max(Math.max(256, 2 * staging.byteSize()), staged + length);
        staging = java.lang.foreign.Arena.ofAuto().allocate(size, 8);
    }

    private static IllegalStateException uncheckedInline() {
        return new IllegalStateException("ibv_send_wr: an inline request cannot have an entry from gatherUnchecked"
                + " (the provider would copy from its raw address): gather from a region, or use inline(MemorySegment)");
    }

    /** Asks for a completion of the last request ({@code IBV_SEND_SIGNALED}; implied when the QP signals all). */
    public SendWorkRequests signaled() {
        return flag(SEND_SIGNALED);
    }

    /** Sets the solicited-event bit ({@code IBV_SEND_SOLICITED}): wakes a receiver armed for solicited events. */
    public SendWorkRequests solicited() {
        return flag(SEND_SOLICITED);
    }

    /**
     * Sends the last request's data inline ({@code IBV_SEND_INLINE}): copied at post, see the class comment.
     *
     * @throws IllegalStateException if the request has an entry from {@link #gatherUnchecked}
     */
    public SendWorkRequests inline() {
        current();
        if (uncheckedNow) {
            throw uncheckedInline();
        }
        readsRegionsDuringPost();
        inlineNow = true;
        return flag(SEND_INLINE);
    }

    /** Waits for earlier RDMA READs and atomics before the last request starts ({@code IBV_SEND_FENCE}). */
    public SendWorkRequests fence() {
        return flag(SEND_FENCE);
    }

    /**
     * Addresses the last request, on a UD queue pair, to QP {@code remoteQueuePair} behind {@code address}.
     */
    public SendWorkRequests destination(AddressHandle address, int remoteQueuePair, int remoteQkey) {
        FieldRange.bits("remote_qpn", remoteQueuePair, 24);
        long at = current();
        putLong(at + UD_AH, address.openAddress());
        name(address);
        if (!addressedNow) {
            addressedNow = true;
            addressed++;
        }
        putInt(at + UD_QPN, remoteQueuePair);
        putInt(at + UD_QKEY, remoteQkey);
        return this;
    }

    private long start(long workRequestId, int opcode) {
        long at = begin(workRequestId);
        addressedNow = false;
        atomicNow = false;
        inlineNow = false;
        uncheckedNow = false;
        putInt(at + OPCODE, opcode);
        return at;
    }

    private void rdma(long at, long remoteAddress, int rkey) {
        putLong(at + RDMA_ADDR, remoteAddress);
        putInt(at + RDMA_RKEY, rkey);
    }

    /** Refuses a misaligned atomic before its request is started (the device would fail it). */
    private static void requireAligned(long remoteAddress) {
        if ((remoteAddress & (Long.BYTES - 1)) != 0) {
            throw new IllegalArgumentException("wr.atomic.remote_addr must be 8-byte aligned, not 0x"
                    + Long.toHexString(remoteAddress));
        }
    }

    private void atomic(long at, long remoteAddress, int rkey, long compareOrAdd) {
        atomics++;
        atomicNow = true;
        putLong(at + ATOMIC_ADDR, remoteAddress);
        putInt(at + ATOMIC_RKEY, rkey);
        putLong(at + ATOMIC_COMPARE_ADD, compareOrAdd);
    }

    private SendWorkRequests flag(int flag) {
        long at = current();
        putInt(at + FLAGS, getInt(at + FLAGS) | flag);
        return this;
    }
}
