package io.rdma4j.verbs;

import io.rdma4j.bindings.shim.ContextOps;
import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.bindings.verbs.ibv_sge;
import io.rdma4j.verbs.internal.FieldRange;
import io.rdma4j.verbs.internal.NativeResource;
import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Reference;

/**
 * The native memory behind {@link SendWorkRequests} and {@link ReceiveWorkRequests}: an array of work requests,
 * each with its own run of scatter/gather entries, linked through {@code next} as each is added (the post then
 * takes no path that a batch's first post alone would take: such a branch, never taken while the JIT compiled the
 * caller's loop, deoptimizes it). Filling a batch writes the native structs in place; posting passes the first one
 * to the verb. Nothing is allocated after construction: addresses are written as 64-bit values, never as new
 * segments.
 *
 * <p>The batch also remembers the objects its requests name (regions, address handles, windows). A post checks
 * that each is still open, so an object closed after it was added is an {@link IllegalStateException}. The objects
 * the provider reads during the post are also pinned for the length of the call ({@link NativeResource#pin}), so
 * that another thread cannot close them under it: address handles and windows always, regions when a request is
 * inline (the provider copies their bytes) or binds a window (it reads the region's struct). Other requests hand
 * a region's key and addresses to the device only, which checks them: a region closed by another thread during
 * such a post ends the request in an error completion, never in a read of freed memory, and the post saves two
 * atomic operations per region. Runs of one object are remembered once.
 *
 * <p>The memory is in an automatic arena: a post passes its addresses (no segment to check and unwrap; a shared arena
 * would cost two atomic operations per post, measured as part of the host benchmark's gap) and keeps the batch
 * reachable until the verb returns, so a batch closed or dropped by another thread during a post can never free
 * memory under it. {@link #close()} ends the batch's use (every later call throws); the memory returns
 * when the batch is unreachable.
 */
abstract class WorkRequestBatch implements AutoCloseable {

    /**
     * The layouts of the requests' and entries' fields, unaligned: the arrays are aligned to their structs and each
     * field lies at its natural offset, so the aligned layouts' per-write alignment check could never fail, and it cost
     * a refill of 16 requests 45-60 ns on the host (measured back to back; benchmarks/results/README.md).
     */
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    /** See {@link #LONG}. */
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    /**
     * All of memory: the fields are written at the arrays' absolute addresses, which skips the arrays' own segments'
     * checks (their type, bounds and arena) on each write. The offsets are checked instead: a request's against the
     * batch's count, an entry's against the request's, so every write lands inside the arrays; the fences keep the
     * batch, and so its arena, reachable until each write is done. Measured on the host with {@link #reset}'s
     * zeroing: a refill and post of 16 requests at C's cost (benchmarks/results/README.md).
     */
    private static final MemorySegment MEMORY = Pointers.ALL;

    private static final long SGE_SIZE = ibv_sge.layout().byteSize();
    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final long SGE_LKEY = ibv_sge.lkey$offset();

    private boolean closed;
    /** Holds the arrays' memory (an automatic arena's) for as long as the batch is reachable; tests read it. */
    final MemorySegment requests;
    private final MemorySegment badRequest;
    private final long requestsAddress;
    private final long sgesAddress;
    private final long badRequestAddress;
    private final long requestSize;
    private final long wrIdOffset;
    private final long nextOffset;
    private final long sgListOffset;
    private final long numSgeOffset;
    private final int capacity;
    private final int maxScatterGather;
    private int count;
    private int currentSges;
    /** The objects the filled requests name, each run of one object once. */
    private final NativeObject[] named;
    private int namedCount;
    /** Whether a request is inline: the provider then reads the regions' bytes during the post. */
    private boolean readsRegions;

    WorkRequestBatch(GroupLayout layout, long wrIdOffset, long nextOffset, long sgListOffset, long numSgeOffset,
                     int capacity, int maxScatterGather) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a batch holds at least 1 work request, not " + capacity);
        }
        if (maxScatterGather < 0) {
            throw new IllegalArgumentException("scatter/gather entries per request must be >= 0, not " + maxScatterGather);
        }
        this.requestSize = layout.byteSize();
        this.nextOffset = nextOffset;
        this.sgListOffset = sgListOffset;
        this.numSgeOffset = numSgeOffset;
        this.wrIdOffset = wrIdOffset;
        this.capacity = capacity;
        this.maxScatterGather = maxScatterGather;
        // The segments keep their automatic arena alive: no field needs to.
        Arena arena = Arena.ofAuto();
        this.requests = arena.allocate(layout, capacity);
        MemorySegment sges = arena.allocate(ibv_sge.layout(), Math.max(1L, (long) capacity * maxScatterGather));
        this.badRequest = arena.allocate(ValueLayout.ADDRESS);
        this.requestsAddress = requests.address();
        // The entries share the requests' arena, which the requests' segment holds.
        this.sgesAddress = sges.address();
        this.badRequestAddress = badRequest.address();
        // Per request: its entries' regions plus at most two more objects (an address handle; a window and region).
        this.named = new NativeObject[Math.toIntExact(Math.min(Integer.MAX_VALUE - 8,
                (long) capacity * (maxScatterGather + 2)))];
    }

    /** How many work requests the batch holds at most. */
    public final int capacity() {
        return capacity;
    }

    /** How many work requests have been added since the batch was last cleared. */
    public final int count() {
        return count;
    }

    /** The most scatter/gather entries one work request may have. */
    public final int maxScatterGather() {
        return maxScatterGather;
    }

    /**
     * Empties the batch so that it can be filled again. It zeroes the requests it held, so that every request past
     * {@link #count()} is zero (as the arena allocated them) and {@link #begin} writes only its own fields: one loop
     * over the used part here, where a copy of a zeroed struct per request cost a call of the JVM's copy stub each (a
     * slice's {@code fill} would allocate the slice until the caller is compiled with escape analysis).
     */
    void reset() {
        // A long at a time: the structs hold pointers, so their sizes are multiples of 8.
        long end = requestsAddress + count * requestSize;
        for (long at = requestsAddress; at < end; at += Long.BYTES) {
            MEMORY.set(LONG, at, 0L);
        }
        Reference.reachabilityFence(this);
        count = 0;
        currentSges = 0;
        java.util.Arrays.fill(named, 0, namedCount, null);
        namedCount = 0;
        readsRegions = false;
    }

    /** The current request is inline: regions must stay open until the post returns. */
    final void readsRegionsDuringPost() {
        readsRegions = true;
    }

    /** Remembers that the current request names {@code object}, to be checked and pinned at post. */
    final void name(NativeObject object) {
        object.checkOpen();
        if (namedCount == 0 || named[namedCount - 1] != object) {
            named[namedCount++] = object;
        }
    }

    /**
     * Pins every object the requests name, for a post; call {@link #unpinNamed()} when the post returns.
     *
     * @throws IllegalStateException naming the first object that is closed (nothing stays pinned)
     */
    final void pinNamed() {
        for (int i = 0; i < namedCount; i++) {
            NativeObject object = named[i];
            if (!(pins(object) ? object.nativeResource().pin() : object.nativeResource().isUsable())) {
                unpin(i);
                throw new IllegalStateException("a request names " + object.describe() + ", which is closed");
            }
            // An inline copy reads a caller's registered segment: refused once its arena is closed (its pages may be
            // unmapped), where a region only hands its key to the device, which holds the pages itself.
            if (readsRegions && object instanceof MemoryRegion region && !region.segment().scope().isAlive()) {
                unpin(i + 1);
                throw new IllegalStateException("an inline request reads " + object.describe() + ", whose memory's"
                        + " arena is closed: close a region before the arena of the segment it registers");
            }
        }
    }

    /** Whether the provider reads {@code object} during the post (see the class comment). */
    private boolean pins(NativeObject object) {
        return readsRegions || !(object instanceof MemoryRegion);
    }

    /** Ends {@link #pinNamed()}. */
    final void unpinNamed() {
        unpin(namedCount);
    }

    private void unpin(int n) {
        for (int i = 0; i < n; i++) {
            if (pins(named[i])) {
                named[i].nativeResource().unpin();
            }
        }
    }

    /** Starts the next work request (zero: see {@link #reset}), linked after the previous one; returns its offset. */
    final long begin(long workRequestId) {
        requireOpen();
        if (count == capacity) {
            throw new IllegalStateException("the batch is full: " + capacity + " work requests");
        }
        long base = count * requestSize;
        if (count > 0) {
            putLong(base - requestSize + nextOffset, requestsAddress + base);
        }
        putLong(base + wrIdOffset, workRequestId);
        putLong(base + sgListOffset, sgesAddress + (long) count * maxScatterGather * SGE_SIZE);
        count++;
        currentSges = 0;
        return base;
    }

    /** Writes the field at {@code offset} of the requests' array (an offset inside it, see {@link #MEMORY}). */
    final void putLong(long offset, long value) {
        MEMORY.set(LONG, requestsAddress + offset, value);
        Reference.reachabilityFence(this);
    }

    /** See {@link #putLong}. */
    final void putInt(long offset, int value) {
        MEMORY.set(INT, requestsAddress + offset, value);
        Reference.reachabilityFence(this);
    }

    /** Reads the field at {@code offset} of the requests' array (see {@link #putLong}). */
    final int getInt(long offset) {
        int value = MEMORY.get(INT, requestsAddress + offset);
        Reference.reachabilityFence(this);
        return value;
    }

    /** The byte offset of the request being filled. */
    final long current() {
        requireOpen();
        if (count == 0) {
            throw new IllegalStateException("add a work request first");
        }
        return (count - 1) * requestSize;
    }

    /** Appends a scatter/gather entry inside {@code region} to the current request. */
    final void addEntry(MemoryRegion region, long offset, long length) {
        long address = region.addressOf("ibv_sge", offset, length);
        // Checks that the region is open, so its key may be read unchecked.
        name(region);
        addEntry(address, length, region.localKey());
    }

    /** Appends a scatter/gather entry to the current request, unchecked: the device judges it. */
    final void addEntry(long address, long length, int lkey) {
        int sgeLength = FieldRange.unsigned32("ibv_sge.length", length);
        long request = current();
        if (currentSges == maxScatterGather) {
            throw new IllegalStateException("this batch allows " + maxScatterGather + " scatter/gather entries per request");
        }
        long sge = sgesAddress + ((long) (count - 1) * maxScatterGather + currentSges) * SGE_SIZE;
        MEMORY.set(LONG, sge + SGE_ADDR, address);
        MEMORY.set(INT, sge + SGE_LENGTH, sgeLength);
        MEMORY.set(INT, sge + SGE_LKEY, lkey);
        currentSges++;
        putInt(request + numSgeOffset, currentSges);
    }

    /**
     * Posts the requests to {@code queue} through {@code function} ({@code post_send}, {@code post_recv} or
     * {@code post_srq_recv} of the queue's context: one C signature), the objects they name pinned for the call. Its
     * requests are linked as they were added, and {@code bad_wr} is NULL (the arena zeroed it, and
     * {@link #takeBadIndex()} clears it after each failed post, so a post stores nothing). Allocates nothing.
     *
     * @param verb the C verb, for the exception
     * @throws PostException         if the provider rejected a request
     * @throws IllegalStateException if the batch is closed or empty, or a request names a closed object
     */
    final void post(MemorySegment function, long queue, String verb) {
        requireOpen();
        if (count == 0) {
            throw new IllegalStateException("the batch is empty");
        }
        int rc;
        pinNamed();
        try {
            rc = ContextOps.post(function, queue, requestsAddress, badRequestAddress);
        } finally {
            unpinNamed();
            // The verb reads the batch's memory by address: the batch must outlive the call.
            Reference.reachabilityFence(this);
        }
        if (rc != 0) {
            throw new PostException(verb, rc, takeBadIndex());
        }
    }

    /** The {@code bad_wr} out-parameter of the post verbs. */
    final MemorySegment badRequest() {
        return badRequest;
    }

    /** After a failed post: which request the verb reported through {@code bad_wr} (-1: none); clears it. */
    final int takeBadIndex() {
        long bad = badRequest.get(LONG, 0);
        badRequest.set(LONG, 0, 0L);
        return bad == 0 ? -1 : (int) ((bad - requestsAddress) / requestSize);
    }

    /** Ends the batch's use: every later call throws. Idempotent; the memory returns once it is unreachable. */
    @Override
    public final void close() {
        closed = true;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the batch is closed");
        }
    }
}
