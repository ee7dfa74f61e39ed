package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_qp_ex;
import io.rdma4j.verbs.internal.FieldRange;
import java.lang.foreign.MemorySegment;

/**
 * The extended work request API of a queue pair created with
 * {@link QueuePair.Builder#extendedOperations}: work requests are built straight into the send queue
 * ({@code ibv_wr_start}, one opcode call and its data per request, {@code ibv_wr_complete}) instead of through a
 * linked list of {@code ibv_send_wr}.
 *
 * <pre>{@code
 * ExtendedSend send = qp.extendedSend();
 * send.start();
 * send.next(1, true).rdmaWrite(rkey, remoteAddress).gather(region, 0, 4096);
 * send.next(2, true).send().gather(region, 4096, 64);
 * send.complete();                      // posts both, or throws and posts none
 * }</pre>
 *
 * <p>Calls through the provider's function pointers, read once when the queue pair was created; allocates
 * nothing. From {@code start} to {@code complete} or {@code abort} the queue pair is pinned: its close refuses (end
 * a batch that failed half-way with {@code abort}); {@code start} on a closed queue pair, and any other call outside
 * a batch, throws {@link IllegalStateException}. Thread-safety: none — from {@code start} to {@code complete} one
 * thread owns the send queue.
 */
public final class ExtendedSend {

    private final QueuePair queuePair;
    /** The queue pair as {@code ibv_qp_ex}; used only between start and complete/abort, while it is pinned. */
    private final MemorySegment qpx;
    /** Between {@link #start()} and {@link #complete()} or {@link #abort()}. */
    private boolean inBatch;
    private final MemorySegment start;
    private final MemorySegment complete;
    private final MemorySegment abort;
    private final MemorySegment send;
    private final MemorySegment sendWithImmediate;
    private final MemorySegment rdmaWrite;
    private final MemorySegment rdmaWriteWithImmediate;
    private final MemorySegment rdmaRead;
    private final MemorySegment compareAndSwap;
    private final MemorySegment fetchAndAdd;
    private final MemorySegment setSge;
    private final MemorySegment setInlineData;
    private final MemorySegment setUdAddress;
    private final int signaled = RdmaCore.IBV_SEND_SIGNALED();

    /**
     * @param q   the queue pair's pointer, pinned by the caller, sized to {@code ibv_qp_ex}
     * @param qpx {@code ibv_qp_to_qp_ex} of the queue pair: the same address (libibverbs' {@code struct verbs_qp}
     *            puts {@code ibv_qp_ex} over {@code ibv_qp}), so the queue pair's own pointer serves every call
     */
    ExtendedSend(QueuePair queuePair, MemorySegment q, MemorySegment qpx) {
        this.queuePair = queuePair;
        this.qpx = q;
        if (qpx.address() != q.address()) {
            throw new IllegalStateException("ibv_qp_to_qp_ex returned another address than the queue pair's");
        }
        this.start = ibv_qp_ex.wr_start(q);
        this.complete = ibv_qp_ex.wr_complete(q);
        this.abort = ibv_qp_ex.wr_abort(q);
        this.send = ibv_qp_ex.wr_send(q);
        this.sendWithImmediate = ibv_qp_ex.wr_send_imm(q);
        this.rdmaWrite = ibv_qp_ex.wr_rdma_write(q);
        this.rdmaWriteWithImmediate = ibv_qp_ex.wr_rdma_write_imm(q);
        this.rdmaRead = ibv_qp_ex.wr_rdma_read(q);
        this.compareAndSwap = ibv_qp_ex.wr_atomic_cmp_swp(q);
        this.fetchAndAdd = ibv_qp_ex.wr_atomic_fetch_add(q);
        this.setSge = ibv_qp_ex.wr_set_sge(q);
        this.setInlineData = ibv_qp_ex.wr_set_inline_data(q);
        this.setUdAddress = ibv_qp_ex.wr_set_ud_addr(q);
    }

    /**
     * {@code function}, the provider's entry for {@code operation}: providers leave the entries of operations the
     * queue pair was not created with NULL (rxe), and a call through NULL would be an obscure failure.
     */
    private MemorySegment enabled(MemorySegment function, String verb, ExtendedOperation operation) {
        if (function.address() == 0) {
            throw new IllegalStateException(verb + ": " + queuePair.describe() + " was created without "
                    + "ExtendedOperation." + operation + " (QueuePair.Builder#extendedOperations)");
        }
        return function;
    }

    /** The queue pair as {@code ibv_qp_ex}, inside a batch (when it is pinned). */
    private MemorySegment qpx() {
        if (!inBatch) {
            throw new IllegalStateException("no batch of " + queuePair.describe() + " is under way: start() first");
        }
        return qpx;
    }

    /**
     * Begins a batch ({@code ibv_wr_start}) and pins the queue pair until {@link #complete()} or {@link #abort()}.
     *
     * @throws IllegalStateException if the queue pair is closed or a batch is under way
     */
    public ExtendedSend start() {
        if (inBatch) {
            throw new IllegalStateException("a batch of " + queuePair.describe() + " is under way: complete() or"
                    + " abort() it first");
        }
        ibv_qp_ex.wr_start.invoke(start, queuePair.pinned());
        inBatch = true;
        return this;
    }

    /** Sets the id and signaling of the next request ({@code qpx->wr_id}, {@code qpx->wr_flags}). */
    public ExtendedSend next(long workRequestId, boolean signal) {
        ibv_qp_ex.wr_id(qpx(), workRequestId);
        ibv_qp_ex.wr_flags(qpx(), signal ? signaled : 0);
        return this;
    }

    /** {@code ibv_wr_send}. */
    public ExtendedSend send() {
        ibv_qp_ex.wr_send.invoke(enabled(send, "ibv_wr_send", ExtendedOperation.SEND), qpx());
        return this;
    }

    /** {@code ibv_wr_send_imm}, {@code immediate} in host order. */
    public ExtendedSend sendWithImmediate(int immediate) {
        ibv_qp_ex.wr_send_imm.invoke(enabled(sendWithImmediate, "ibv_wr_send_imm", ExtendedOperation.SEND_WITH_IMMEDIATE),
                qpx(), Integer.reverseBytes(immediate));
        return this;
    }

    /** {@code ibv_wr_rdma_write}. */
    public ExtendedSend rdmaWrite(int rkey, long remoteAddress) {
        ibv_qp_ex.wr_rdma_write.invoke(enabled(rdmaWrite, "ibv_wr_rdma_write", ExtendedOperation.RDMA_WRITE), qpx(), rkey,
                remoteAddress);
        return this;
    }

    /** {@code ibv_wr_rdma_write_imm}, {@code immediate} in host order. */
    public ExtendedSend rdmaWriteWithImmediate(int rkey, long remoteAddress, int immediate) {
        ibv_qp_ex.wr_rdma_write_imm.invoke(enabled(rdmaWriteWithImmediate, "ibv_wr_rdma_write_imm",
                ExtendedOperation.RDMA_WRITE_WITH_IMMEDIATE), qpx(), rkey, remoteAddress,
                Integer.reverseBytes(immediate));
        return this;
    }

    /** {@code ibv_wr_rdma_read}. */
    public ExtendedSend rdmaRead(int rkey, long remoteAddress) {
        ibv_qp_ex.wr_rdma_read.invoke(enabled(rdmaRead, "ibv_wr_rdma_read", ExtendedOperation.RDMA_READ), qpx(), rkey,
                remoteAddress);
        return this;
    }

    /** {@code ibv_wr_atomic_cmp_swp}. */
    public ExtendedSend compareAndSwap(int rkey, long remoteAddress, long compare, long swap) {
        ibv_qp_ex.wr_atomic_cmp_swp.invoke(enabled(compareAndSwap, "ibv_wr_atomic_cmp_swp",
                ExtendedOperation.COMPARE_AND_SWAP), qpx(), rkey, remoteAddress, compare, swap);
        return this;
    }

    /** {@code ibv_wr_atomic_fetch_add}. */
    public ExtendedSend fetchAndAdd(int rkey, long remoteAddress, long add) {
        ibv_qp_ex.wr_atomic_fetch_add.invoke(enabled(fetchAndAdd, "ibv_wr_atomic_fetch_add",
                ExtendedOperation.FETCH_AND_ADD), qpx(), rkey, remoteAddress, add);
        return this;
    }

    /** {@code ibv_wr_set_sge} with a range inside {@code region}. */
    public ExtendedSend gather(MemoryRegion region, long offset, long length) {
        long address = region.addressOf("ibv_sge", offset, length);
        ibv_qp_ex.wr_set_sge.invoke(setSge, qpx(), region.lkey(), address, FieldRange.unsigned32("ibv_sge.length",
                length));
        return this;
    }

    /**
     * {@code ibv_wr_set_inline_data}: copies {@code data} into the request now. The call holds {@code data}'s arena
     * open while the provider copies, so no other thread can free it under the copy.
     *
     * @throws IllegalArgumentException if {@code data} is a heap segment (the provider copies by address)
     * @throws IllegalStateException    if {@code data}'s arena is closed, or no batch is under way
     */
    public ExtendedSend inline(MemorySegment data) {
        MemorySegment q = qpx();
        if (!data.isNative()) {
            throw new IllegalArgumentException("ibv_wr_set_inline_data needs a native segment: the provider copies"
                    + " from its address (copy heap bytes into native memory first)");
        }
        if (!data.scope().isAlive()) {
            throw new IllegalStateException("ibv_wr_set_inline_data: the segment's arena is closed");
        }
        ibv_qp_ex.wr_set_inline_data.invoke(setInlineData, q, data, data.byteSize());
        return this;
    }

    /** {@code ibv_wr_set_ud_addr}: the destination of a UD request. */
    public ExtendedSend destination(AddressHandle address, int remoteQueuePair, int remoteQkey) {
        MemorySegment q = qpx();
        // The provider copies the address vector into the request now: the handle needs pinning for this call only.
        MemorySegment ah = address.pinned();
        try {
            ibv_qp_ex.wr_set_ud_addr.invoke(setUdAddress, q, ah, remoteQueuePair, remoteQkey);
        } finally {
            address.unpin();
        }
        return this;
    }

    /**
     * Posts the batch ({@code ibv_wr_complete}).
     *
     * @throws VerbException if the provider rejects it; then none of the batch was posted
     */
    public void complete() {
        MemorySegment q = qpx();
        int rc;
        try {
            rc = ibv_qp_ex.wr_complete.invoke(complete, q);
        } finally {
            endBatch();
        }
        if (rc != 0) {
            throw VerbException.of("ibv_wr_complete", rc, queuePair.describe());
        }
    }

    /** Discards the batch ({@code ibv_wr_abort}). */
    public void abort() {
        MemorySegment q = qpx();
        try {
            ibv_qp_ex.wr_abort.invoke(abort, q);
        } finally {
            endBatch();
        }
    }

    private void endBatch() {
        inBatch = false;
        queuePair.unpin();
    }
}
