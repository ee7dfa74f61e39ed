package io.rdma4j.cm;

import io.rdma4j.bindings.verbs.rdma_conn_param;
import java.lang.foreign.MemorySegment;

/**
 * What {@link CmId#connect} and {@link CmId#accept} announce ({@code struct rdma_conn_param}).
 *
 * @param queuePairNumber     the local QP's number (rdma4j's {@code QueuePair.number()})
 * @param responderResources  incoming RDMA READs/atomics this side accepts at once
 * @param initiatorDepth      outgoing RDMA READs/atomics this side issues at once
 * @param retryCount          transport retries (0..7)
 * @param rnrRetryCount       RNR retries (0..7, 7 = forever)
 */
public record ConnectionParameters(int queuePairNumber, int responderResources, int initiatorDepth, int retryCount,
                                   int rnrRetryCount) {

    /** For {@code queuePairNumber}, with one outstanding READ each way and 7 retries of each kind. */
    public static ConnectionParameters forQueuePair(int queuePairNumber) {
        return new ConnectionParameters(queuePairNumber, 1, 1, 7, 7);
    }

    void writeTo(MemorySegment param) {
        rdma_conn_param.qp_num(param, queuePairNumber);
        rdma_conn_param.responder_resources(param, (byte) responderResources);
        rdma_conn_param.initiator_depth(param, (byte) initiatorDepth);
        rdma_conn_param.retry_count(param, (byte) retryCount);
        rdma_conn_param.rnr_retry_count(param, (byte) rnrRetryCount);
    }
}
