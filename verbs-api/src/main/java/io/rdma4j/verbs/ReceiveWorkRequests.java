package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.ibv_recv_wr;

/**
 * A reusable batch of receive work requests ({@code struct ibv_recv_wr[]} with their {@code ibv_sge}s) for
 * {@link QueuePair#postReceive} ({@code ibv_post_recv}) and {@link SharedReceiveQueue#postReceive}
 * ({@code ibv_post_srq_recv}). Fill, post, {@link #clear()}, fill again: nothing is allocated per post.
 *
 * <pre>{@code
 * receives.clear().add(7).scatter(region, 0, 4096);
 * qp.postReceive(receives);
 * }</pre>
 *
 * <p>Lifetime: owns its native memory; {@link #close()} frees it (a Cleaner frees a dropped batch's). A post
 * refuses a batch that names a closed region with {@link IllegalStateException}. The provider only hands the
 * regions' keys and addresses to the device, which checks them: a region closed by another thread during the post
 * ends its requests in error completions. Thread-safety: none — fill and post a batch from
 * one thread at a time. The device reads the requests during the post only, so a batch may be refilled as soon
 * as the post returns.
 */
public final class ReceiveWorkRequests extends WorkRequestBatch {

    /**
     * @param capacity         the most requests one post carries
     * @param maxScatterGather the most scatter entries per request (at most the QP's receive SGE limit)
     */
    public ReceiveWorkRequests(int capacity, int maxScatterGather) {
        super(ibv_recv_wr.layout(), ibv_recv_wr.wr_id$offset(), ibv_recv_wr.next$offset(),
                ibv_recv_wr.sg_list$offset(), ibv_recv_wr.num_sge$offset(), capacity, maxScatterGather);
    }

    /** Empties the batch. */
    public ReceiveWorkRequests clear() {
        reset();
        return this;
    }

    /**
     * Adds a receive request; its completion will carry {@code workRequestId}.
     *
     * @throws IllegalStateException if the batch is full
     */
    public ReceiveWorkRequests add(long workRequestId) {
        begin(workRequestId);
        return this;
    }

    /**
     * Adds a scatter entry to the last request: received bytes land in {@code region} at {@code offset}.
     *
     * @throws IndexOutOfBoundsException if the range is not inside the region
     * @throws IllegalArgumentException  if {@code length} does not fit {@code ibv_sge.length} (32 bits, unsigned)
     * @throws IllegalStateException     if the request has no room for another entry
     */
    public ReceiveWorkRequests scatter(MemoryRegion region, long offset, long length) {
        addEntry(region, offset, length);
        return this;
    }

    /**
     * Adds a scatter entry without checking it against a region: the device checks it, and a bad one completes
     * with {@link WorkCompletionStatus#LOCAL_PROTECTION_ERROR} or similar rather than failing here.
     */
    public ReceiveWorkRequests scatterUnchecked(long address, long length, int lkey) {
        addEntry(address, length, lkey);
        return this;
    }
}
