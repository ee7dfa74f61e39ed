package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_qp_ex;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

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
 * nothing. Thread-safety: none — from {@code start} to {@code complete} one thread owns the send queue.
 */
public final class ExtendedSend {

    private final QueuePair queuePair;
    private final MemorySegment qpx;
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

    ExtendedSend(QueuePair queuePair, MemorySegment qpx) {
        this.queuePair = queuePair;
        this.qpx = qpx.reinterpret(ibv_qp_ex.layout().byteSize());
        this.start = ibv_qp_ex.wr_start(this.qpx);
        this.complete = ibv_qp_ex.wr_complete(this.qpx);
        this.abort = ibv_qp_ex.wr_abort(this.qpx);
        this.send = ibv_qp_ex.wr_send(this.qpx);
        this.sendWithImmediate = ibv_qp_ex.wr_send_imm(this.qpx);
        this.rdmaWrite = ibv_qp_ex.wr_rdma_write(this.qpx);
        this.rdmaWriteWithImmediate = ibv_qp_ex.wr_rdma_write_imm(this.qpx);
        this.rdmaRead = ibv_qp_ex.wr_rdma_read(this.qpx);
        this.compareAndSwap = ibv_qp_ex.wr_atomic_cmp_swp(this.qpx);
        this.fetchAndAdd = ibv_qp_ex.wr_atomic_fetch_add(this.qpx);
        this.setSge = ibv_qp_ex.wr_set_sge(this.qpx);
        this.setInlineData = ibv_qp_ex.wr_set_inline_data(this.qpx);
        this.setUdAddress = ibv_qp_ex.wr_set_ud_addr(this.qpx);
    }

    /** Begins a batch ({@code ibv_wr_start}). */
    public ExtendedSend start() {
        queuePair.checkOpen();
        ibv_qp_ex.wr_start.invoke(start, qpx);
        return this;
    }

    /** Sets the id and signaling of the next request ({@code qpx->wr_id}, {@code qpx->wr_flags}). */
    public ExtendedSend next(long workRequestId, boolean signal) {
        ibv_qp_ex.wr_id(qpx, workRequestId);
        ibv_qp_ex.wr_flags(qpx, signal ? signaled : 0);
        return this;
    }

    /** {@code ibv_wr_send}. */
    public ExtendedSend send() {
        ibv_qp_ex.wr_send.invoke(send, qpx);
        return this;
    }

    /** {@code ibv_wr_send_imm}, {@code immediate} in host order. */
    public ExtendedSend sendWithImmediate(int immediate) {
        ibv_qp_ex.wr_send_imm.invoke(sendWithImmediate, qpx, Integer.reverseBytes(immediate));
        return this;
    }

    /** {@code ibv_wr_rdma_write}. */
    public ExtendedSend rdmaWrite(int rkey, long remoteAddress) {
        ibv_qp_ex.wr_rdma_write.invoke(rdmaWrite, qpx, rkey, remoteAddress);
        return this;
    }

    /** {@code ibv_wr_rdma_write_imm}, {@code immediate} in host order. */
    public ExtendedSend rdmaWriteWithImmediate(int rkey, long remoteAddress, int immediate) {
        ibv_qp_ex.wr_rdma_write_imm.invoke(rdmaWriteWithImmediate, qpx, rkey, remoteAddress,
                Integer.reverseBytes(immediate));
        return this;
    }

    /** {@code ibv_wr_rdma_read}. */
    public ExtendedSend rdmaRead(int rkey, long remoteAddress) {
        ibv_qp_ex.wr_rdma_read.invoke(rdmaRead, qpx, rkey, remoteAddress);
        return this;
    }

    /** {@code ibv_wr_atomic_cmp_swp}. */
    public ExtendedSend compareAndSwap(int rkey, long remoteAddress, long compare, long swap) {
        ibv_qp_ex.wr_atomic_cmp_swp.invoke(compareAndSwap, qpx, rkey, remoteAddress, compare, swap);
        return this;
    }

    /** {@code ibv_wr_atomic_fetch_add}. */
    public ExtendedSend fetchAndAdd(int rkey, long remoteAddress, long add) {
        ibv_qp_ex.wr_atomic_fetch_add.invoke(fetchAndAdd, qpx, rkey, remoteAddress, add);
        return this;
    }

    /** {@code ibv_wr_set_sge} with a range inside {@code region}. */
    public ExtendedSend gather(MemoryRegion region, long offset, int length) {
        Objects.checkFromIndexSize(offset, Integer.toUnsignedLong(length), region.length());
        ibv_qp_ex.wr_set_sge.invoke(setSge, qpx, region.lkey(), region.address() + offset, length);
        return this;
    }

    /** {@code ibv_wr_set_inline_data}: copies {@code data} into the request now. */
    public ExtendedSend inline(MemorySegment data) {
        ibv_qp_ex.wr_set_inline_data.invoke(setInlineData, qpx, data, data.byteSize());
        return this;
    }

    /** {@code ibv_wr_set_ud_addr}: the destination of a UD request. */
    public ExtendedSend destination(AddressHandle address, int remoteQueuePair, int remoteQkey) {
        ibv_qp_ex.wr_set_ud_addr.invoke(setUdAddress, qpx, address.handle(), remoteQueuePair, remoteQkey);
        return this;
    }

    /**
     * Posts the batch ({@code ibv_wr_complete}).
     *
     * @throws RdmaException if the provider rejects it; then none of the batch was posted
     */
    public void complete() {
        int rc = ibv_qp_ex.wr_complete.invoke(complete, qpx);
        if (rc != 0) {
            throw RdmaException.of("ibv_wr_complete", rc, queuePair.describe());
        }
    }

    /** Discards the batch ({@code ibv_wr_abort}). */
    public void abort() {
        ibv_qp_ex.wr_abort.invoke(abort, qpx);
    }
}
