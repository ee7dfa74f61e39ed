package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** The state of a queue pair (C: {@code enum ibv_qp_state}). */
public enum QueuePairState implements CValue {
    /** {@code IBV_QPS_RESET}. */
    RESET(RdmaCore.IBV_QPS_RESET()),
    /** {@code IBV_QPS_INIT}. */
    INIT(RdmaCore.IBV_QPS_INIT()),
    /** {@code IBV_QPS_RTR}. */
    READY_TO_RECEIVE(RdmaCore.IBV_QPS_RTR()),
    /** {@code IBV_QPS_RTS}. */
    READY_TO_SEND(RdmaCore.IBV_QPS_RTS()),
    /** {@code IBV_QPS_SQD}. */
    SEND_QUEUE_DRAINED(RdmaCore.IBV_QPS_SQD()),
    /** {@code IBV_QPS_SQE}. */
    SEND_QUEUE_ERROR(RdmaCore.IBV_QPS_SQE()),
    /** {@code IBV_QPS_ERR}. */
    ERROR(RdmaCore.IBV_QPS_ERR()),
    /** {@code IBV_QPS_UNKNOWN}. */
    UNKNOWN(RdmaCore.IBV_QPS_UNKNOWN());

    private final int value;

    QueuePairState(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
