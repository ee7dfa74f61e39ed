package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.ibv_qp_cap;
import java.lang.foreign.MemorySegment;

/**
 * The sizes of a queue pair's work queues ({@code struct ibv_qp_cap}): asked for when it is created, and what
 * the provider granted afterwards (often more).
 *
 * @param maxSendWorkRequests     outstanding send requests
 * @param maxReceiveWorkRequests  outstanding receive requests (0 with a shared receive queue)
 * @param maxSendScatterGather    gather entries per send request
 * @param maxReceiveScatterGather scatter entries per receive request
 * @param maxInlineData           bytes a send request may carry inline
 */
public record QueuePairCapabilities(int maxSendWorkRequests, int maxReceiveWorkRequests, int maxSendScatterGather,
                                    int maxReceiveScatterGather, int maxInlineData) {

    /** Checks for negative sizes. */
    public QueuePairCapabilities {
        if (maxSendWorkRequests < 0 || maxReceiveWorkRequests < 0 || maxSendScatterGather < 0
                || maxReceiveScatterGather < 0 || maxInlineData < 0) {
            throw new IllegalArgumentException("queue pair capabilities cannot be negative: " + maxSendWorkRequests
                    + "/" + maxReceiveWorkRequests + "/" + maxSendScatterGather + "/" + maxReceiveScatterGather + "/"
                    + maxInlineData);
        }
    }

    void writeTo(MemorySegment cap) {
        ibv_qp_cap.max_send_wr(cap, maxSendWorkRequests);
        ibv_qp_cap.max_recv_wr(cap, maxReceiveWorkRequests);
        ibv_qp_cap.max_send_sge(cap, maxSendScatterGather);
        ibv_qp_cap.max_recv_sge(cap, maxReceiveScatterGather);
        ibv_qp_cap.max_inline_data(cap, maxInlineData);
    }

    static QueuePairCapabilities readFrom(MemorySegment cap) {
        return new QueuePairCapabilities(ibv_qp_cap.max_send_wr(cap), ibv_qp_cap.max_recv_wr(cap),
                ibv_qp_cap.max_send_sge(cap), ibv_qp_cap.max_recv_sge(cap), ibv_qp_cap.max_inline_data(cap));
    }
}
