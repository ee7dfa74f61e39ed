package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** An opcode a queue pair may post through the extended work request API (C: {@code IBV_QP_EX_WITH_*}). */
public enum ExtendedOperation implements CValue {
    /** {@code IBV_QP_EX_WITH_SEND}. */
    SEND(RdmaCore.IBV_QP_EX_WITH_SEND()),
    /** {@code IBV_QP_EX_WITH_SEND_WITH_IMM}. */
    SEND_WITH_IMMEDIATE(RdmaCore.IBV_QP_EX_WITH_SEND_WITH_IMM()),
    /** {@code IBV_QP_EX_WITH_RDMA_WRITE}. */
    RDMA_WRITE(RdmaCore.IBV_QP_EX_WITH_RDMA_WRITE()),
    /** {@code IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM}. */
    RDMA_WRITE_WITH_IMMEDIATE(RdmaCore.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM()),
    /** {@code IBV_QP_EX_WITH_RDMA_READ}. */
    RDMA_READ(RdmaCore.IBV_QP_EX_WITH_RDMA_READ()),
    /** {@code IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP}. */
    COMPARE_AND_SWAP(RdmaCore.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP()),
    /** {@code IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD}. */
    FETCH_AND_ADD(RdmaCore.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD());

    private final int value;

    ExtendedOperation(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
