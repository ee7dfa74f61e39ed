package io.rdma4j.verbs;

import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_wc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A reusable batch of work completions: a view over a native {@code struct ibv_wc[]} that
 * {@link CompletionQueue#poll(WorkCompletions)} fills ({@code ibv_poll_cq}). Reading a field reads the native
 * struct in place: nothing is allocated per poll or per completion.
 *
 * <p>Lifetime: owns its native array, in an automatic arena: a poll acquires nothing for it (a shared arena costs
 * two atomic operations per poll), and no close can free it under a poll. {@link #close()} ends its use (every later
 * call throws); the memory returns once the batch is unreachable. Thread-safety: none — one thread polls into and
 * reads a batch at a time (use one batch per polling thread).
 */
public final class WorkCompletions implements AutoCloseable {

    private static final long SIZE = ibv_wc.layout().byteSize();
    /**
     * All of memory, for reads at the array's absolute address: they skip the checks of the array's own segment (its
     * arena's liveness and its bounds, which {@link #at} covers). Measured on the host: a post and poll of 16 that
     * reads three fields of each completion 4-6 ns faster. The reads use the unaligned layouts: the array is aligned
     * to {@code ibv_wc}'s 8 bytes and each field lies at its natural offset, so the aligned layouts' check could not
     * fail, but the JIT cannot prove that of an address held in a field, and the check kept it from hoisting the other
     * checks out of a loop over the completions (seen in the compiled code; see benchmarks/results/README.md).
     */
    private static final MemorySegment MEMORY = Pointers.ALL;
    private static final long WR_ID = ibv_wc.wr_id$offset();
    private static final long STATUS = ibv_wc.status$offset();
    private static final long OPCODE = ibv_wc.opcode$offset();
    private static final long VENDOR_ERR = ibv_wc.vendor_err$offset();
    private static final long BYTE_LEN = ibv_wc.byte_len$offset();
    private static final long IMM_DATA = ibv_wc.imm_data$offset();
    private static final long QP_NUM = ibv_wc.qp_num$offset();
    private static final long SRC_QP = ibv_wc.src_qp$offset();
    private static final long WC_FLAGS = ibv_wc.wc_flags$offset();
    private static final long PKEY_INDEX = ibv_wc.pkey_index$offset();
    private static final long SLID = ibv_wc.slid$offset();
    private static final long SL = ibv_wc.sl$offset();

    private boolean closed;
    /** Holds the array's memory (an automatic arena's) for as long as the batch is reachable; read by UD's fields. */
    private final MemorySegment array;
    private final long arrayAddress;
    private final int capacity;
    private int count;

    /**
     * @param capacity how many completions one poll may return
     * @throws IllegalArgumentException if {@code capacity < 1}
     */
    public WorkCompletions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, not " + capacity);
        }
        this.capacity = capacity;
        this.array = Arena.ofAuto().allocate(ibv_wc.layout(), capacity);
        this.arrayAddress = array.address();
    }

    /** How many completions a poll may return. */
    public int capacity() {
        return capacity;
    }

    /** How many completions the last poll returned. */
    public int count() {
        return count;
    }

    /** {@code wr_id}: what the work request carried. */
    public long workRequestId(int index) {
        return longAt(index, WR_ID);
    }

    /** {@code status}. */
    public WorkCompletionStatus status(int index) {
        return WorkCompletionStatus.fromC(intAt(index, STATUS));
    }

    /** Whether {@link #status(int)} is {@link WorkCompletionStatus#SUCCESS}. */
    public boolean isSuccess(int index) {
        return intAt(index, STATUS) == 0;
    }

    /** The library's description of the status ({@code ibv_wc_status_str}). */
    public String statusText(int index) {
        return RdmaCore.ibv_wc_status_str(intAt(index, STATUS)).getString(0);
    }

    /**
     * Completion {@code index}'s failure as an exception, for the caller to throw or hand on: its status with
     * libibverbs' text, vendor error, work request id and queue pair, and {@code posted}, the operation the caller
     * posted (a failed completion's own opcode is undefined). Allocates: for the error path only.
     *
     * @param posted  what the request was, or {@link WorkCompletionOpcode#UNKNOWN}
     * @param context what the request was for, put before the message (e.g. the connection), or {@code null}
     * @throws IllegalStateException if the completion succeeded
     */
    public WorkCompletionException failure(int index, WorkCompletionOpcode posted, String context) {
        int status = intAt(index, STATUS);
        if (status == 0) {
            throw new IllegalStateException("completion " + index + " succeeded: it is no failure");
        }
        return new WorkCompletionException(posted, workRequestId(index), queuePairNumber(index), status,
                statusText(index), vendorError(index), context);
    }

    /** {@code opcode}: valid only for successful completions (libibverbs leaves it undefined on errors). */
    public WorkCompletionOpcode opcode(int index) {
        return WorkCompletionOpcode.fromC(intAt(index, OPCODE));
    }

    /** {@code vendor_err}: the provider's own error code for failed completions. */
    public int vendorError(int index) {
        return intAt(index, VENDOR_ERR);
    }

    /** {@code byte_len}: bytes received (receives) or transferred (RDMA READ, atomics). */
    public int byteLength(int index) {
        return intAt(index, BYTE_LEN);
    }

    /** Whether the completion carries immediate data ({@code IBV_WC_WITH_IMM}). */
    public boolean hasImmediateData(int index) {
        return (flags(index) & RdmaCore.IBV_WC_WITH_IMM()) != 0;
    }

    /**
     * {@code imm_data} in host byte order (the wire and the C struct carry it big-endian); see
     * {@link SendWorkRequests#sendWithImmediate(long, int)}.
     */
    public int immediateData(int index) {
        return Integer.reverseBytes(intAt(index, IMM_DATA));
    }

    /** {@code invalidated_rkey} shares {@code imm_data}'s place; valid with {@code IBV_WC_WITH_INV}. */
    public int invalidatedRkey(int index) {
        return intAt(index, IMM_DATA);
    }

    /** {@code qp_num}: the local QP the completion belongs to. */
    public int queuePairNumber(int index) {
        return intAt(index, QP_NUM);
    }

    /** {@code src_qp}: the sender's QP number (UD receives). */
    public int sourceQueuePair(int index) {
        return intAt(index, SRC_QP);
    }

    /** {@code wc_flags} ({@code IBV_WC_GRH}, {@code IBV_WC_WITH_IMM}, {@code IBV_WC_WITH_INV}, …). */
    public int flags(int index) {
        return intAt(index, WC_FLAGS);
    }

    /** Whether a UD receive buffer starts with a 40-byte GRH ({@code IBV_WC_GRH}). */
    public boolean hasGlobalRouteHeader(int index) {
        return (flags(index) & RdmaCore.IBV_WC_GRH()) != 0;
    }

    /** {@code pkey_index} (UD receives on GSI QPs). */
    public int pkeyIndex(int index) {
        return Short.toUnsignedInt(array.get(ValueLayout.JAVA_SHORT, at(index) + PKEY_INDEX));
    }

    /** {@code slid}: the sender's LID (UD receives on InfiniBand). */
    public int sourceLid(int index) {
        return Short.toUnsignedInt(array.get(ValueLayout.JAVA_SHORT, at(index) + SLID));
    }

    /** {@code sl}: the service level (UD receives). */
    public int serviceLevel(int index) {
        return Byte.toUnsignedInt(array.get(ValueLayout.JAVA_BYTE, at(index) + SL));
    }

    /** Ends the batch's use: every later call throws. Idempotent; the memory returns once it is unreachable. */
    @Override
    public void close() {
        closed = true;
        count = 0;
    }

    /** The native array's address, for the poll verb (the batch must stay reachable until it returns). */
    long arrayAddress() {
        requireOpen();
        return arrayAddress;
    }

    /** Records how many completions the last poll wrote. */
    void count(int polled) {
        this.count = polled;
    }

    // The fences keep this batch, and so its array, reachable until the read is done (its memory is the array's
    // automatic arena's, freed once the batch is unreachable). UD's short fields are read through the array's segment.
    private long longAt(int index, long field) {
        long value = MEMORY.get(ValueLayout.JAVA_LONG_UNALIGNED, arrayAddress + at(index) + field);
        Reference.reachabilityFence(this);
        return value;
    }

    private int intAt(int index, long field) {
        int value = MEMORY.get(ValueLayout.JAVA_INT_UNALIGNED, arrayAddress + at(index) + field);
        Reference.reachabilityFence(this);
        return value;
    }

    private long at(int index) {
        requireOpen();
        Objects.checkIndex(index, count);
        return index * SIZE;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the completions batch is closed");
        }
    }
}
