package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_cq_ex;
import io.rdma4j.bindings.verbs.ibv_poll_cq_attr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * The extended poll of a completion queue created with {@link Context#createExtendedCompletionQueue}: a cursor
 * over its completions ({@code ibv_start_poll}, {@code ibv_next_poll}, {@code ibv_end_poll}) whose fields are read
 * in place ({@code ibv_wc_read_*}); only the fields chosen at creation exist.
 *
 * <pre>{@code
 * if (poll.start()) {
 *     do {
 *         handle(poll.workRequestId(), poll.status(), poll.byteLength());
 *     } while (poll.next());
 *     poll.end();
 * }
 * }</pre>
 *
 * <p>Calls through the provider's function pointers, read once at creation; allocates nothing. Thread-safety: a
 * poll (start to end) belongs to one thread; the provider holds the CQ's lock between start and end, and the
 * queue refuses to close in between ({@link IllegalStateException}), as it does once closed.
 */
public final class ExtendedPoll {

    private final CompletionQueue queue;
    private final MemorySegment attributes;
    private final int fields;
    private final MemorySegment startPoll;
    private final MemorySegment nextPoll;
    private final MemorySegment endPoll;
    /** The queue as {@code ibv_cq_ex}; used only while it is pinned. */
    private final MemorySegment cq;
    private final MemorySegment readOpcode;
    private final MemorySegment readVendorError;
    private final MemorySegment readByteLength;
    private final MemorySegment readImmediate;
    private final MemorySegment readQueuePairNumber;
    private final MemorySegment readSourceQueuePair;
    private final MemorySegment readFlags;
    private final MemorySegment readCompletionTimestamp;
    /** Between a {@link #start()} that found a completion and {@link #end()}; the queue is pinned meanwhile. */
    private boolean polling;

    ExtendedPoll(CompletionQueue queue, Set<CompletionField> fields, Arena arena) {
        this.queue = queue;
        this.fields = CValue.mask(fields);
        this.attributes = arena.allocate(ibv_poll_cq_attr.layout());
        MemorySegment cq = queue.pinned();
        this.cq = cq;
        try {
            this.startPoll = ibv_cq_ex.start_poll(cq);
            this.nextPoll = ibv_cq_ex.next_poll(cq);
            this.endPoll = ibv_cq_ex.end_poll(cq);
            this.readOpcode = ibv_cq_ex.read_opcode(cq);
            this.readVendorError = ibv_cq_ex.read_vendor_err(cq);
            this.readByteLength = ibv_cq_ex.read_byte_len(cq);
            this.readImmediate = ibv_cq_ex.read_imm_data(cq);
            this.readQueuePairNumber = ibv_cq_ex.read_qp_num(cq);
            this.readSourceQueuePair = ibv_cq_ex.read_src_qp(cq);
            this.readFlags = ibv_cq_ex.read_wc_flags(cq);
            this.readCompletionTimestamp = ibv_cq_ex.read_completion_ts(cq);
        } finally {
            queue.unpin();
        }
    }

    /**
     * Starts a poll ({@code ibv_start_poll}). If it returns {@code true} a completion is current and
     * {@link #end()} must follow; if {@code false} the queue was empty and the poll is over.
     */
    public boolean start() {
        if (polling) {
            throw new IllegalStateException("a poll of " + queue.describe() + " is under way: end() it first");
        }
        // The provider holds the queue's lock until end(): the queue must not be destroyed in between.
        queue.pinned();
        boolean found = false;
        try {
            found = found("ibv_start_poll", ibv_cq_ex.start_poll.invoke(startPoll, cq, attributes));
        } finally {
            if (found) {
                polling = true;
            } else {
                queue.unpin();
            }
        }
        return found;
    }

    /** Moves to the next completion ({@code ibv_next_poll}); {@code false} when there is none. */
    public boolean next() {
        return found("ibv_next_poll", ibv_cq_ex.next_poll.invoke(nextPoll, cq()));
    }

    /** Ends the poll ({@code ibv_end_poll}), releasing the CQ. */
    public void end() {
        requirePolling();
        try {
            ibv_cq_ex.end_poll.invoke(endPoll, cq);
        } finally {
            polling = false;
            queue.unpin();
        }
    }

    private void requirePolling() {
        if (!polling) {
            throw new IllegalStateException("no poll of " + queue.describe() + " is under way: start() found none");
        }
    }

    /** The current completion's work request id ({@code cq_ex->wr_id}). */
    public long workRequestId() {
        return ibv_cq_ex.wr_id(cq());
    }

    /** The current completion's status ({@code cq_ex->status}). */
    public WorkCompletionStatus status() {
        return WorkCompletionStatus.fromC(ibv_cq_ex.status(cq()));
    }

    /**
     * The current completion's failure as an exception, as {@link WorkCompletions#failure}: its queue pair is -1
     * unless {@link CompletionField#QUEUE_PAIR_NUMBER} was chosen. Allocates: for the error path only.
     *
     * @throws IllegalStateException if the completion succeeded, or no poll is under way
     */
    public WorkCompletionException failure(WorkCompletionOpcode posted, String context) {
        int status = ibv_cq_ex.status(cq());
        if (status == 0) {
            throw new IllegalStateException("the current completion succeeded: it is no failure");
        }
        int queuePair = (fields & CompletionField.QUEUE_PAIR_NUMBER.value()) == 0 ? -1 : queuePairNumber();
        return new WorkCompletionException(posted, workRequestId(), queuePair, status,
                RdmaCore.ibv_wc_status_str(status).getString(0), vendorError(), context);
    }

    /** {@code ibv_wc_read_opcode}. */
    public WorkCompletionOpcode opcode() {
        return WorkCompletionOpcode.fromC(ibv_cq_ex.read_opcode.invoke(readOpcode, cq()));
    }

    /** {@code ibv_wc_read_vendor_err}. */
    public int vendorError() {
        return ibv_cq_ex.read_vendor_err.invoke(readVendorError, cq());
    }

    /** {@code ibv_wc_read_wc_flags} ({@code IBV_WC_GRH}, {@code IBV_WC_WITH_IMM}, …). */
    public int flags() {
        return ibv_cq_ex.read_wc_flags.invoke(readFlags, cq());
    }

    /** {@code ibv_wc_read_byte_len}; needs {@link CompletionField#BYTE_LENGTH}. */
    public int byteLength() {
        require(CompletionField.BYTE_LENGTH);
        return ibv_cq_ex.read_byte_len.invoke(readByteLength, cq());
    }

    /** {@code ibv_wc_read_imm_data}, in host order; needs {@link CompletionField#IMMEDIATE_DATA}. */
    public int immediateData() {
        require(CompletionField.IMMEDIATE_DATA);
        return Integer.reverseBytes(ibv_cq_ex.read_imm_data.invoke(readImmediate, cq()));
    }

    /** {@code ibv_wc_read_qp_num}; needs {@link CompletionField#QUEUE_PAIR_NUMBER}. */
    public int queuePairNumber() {
        require(CompletionField.QUEUE_PAIR_NUMBER);
        return ibv_cq_ex.read_qp_num.invoke(readQueuePairNumber, cq());
    }

    /** {@code ibv_wc_read_src_qp}; needs {@link CompletionField#SOURCE_QUEUE_PAIR}. */
    public int sourceQueuePair() {
        require(CompletionField.SOURCE_QUEUE_PAIR);
        return ibv_cq_ex.read_src_qp.invoke(readSourceQueuePair, cq());
    }

    /** {@code ibv_wc_read_completion_ts} (device clock); needs {@link CompletionField#COMPLETION_TIMESTAMP}. */
    public long completionTimestamp() {
        require(CompletionField.COMPLETION_TIMESTAMP);
        return ibv_cq_ex.read_completion_ts.invoke(readCompletionTimestamp, cq());
    }

    /** The queue, inside a poll (when it is pinned). */
    private MemorySegment cq() {
        requirePolling();
        return cq;
    }

    private void require(CompletionField field) {
        if ((fields & field.value()) == 0) {
            throw new IllegalStateException(field + " was not chosen when the completion queue was created");
        }
    }

    private static boolean found(String verb, int rc) {
        if (rc == 0) {
            return true;
        }
        if (rc == RdmaCore.ENOENT()) {
            return false;
        }
        throw VerbException.of(verb, rc);
    }
}
