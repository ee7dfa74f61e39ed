package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** What a completed work request did (C: {@code enum ibv_wc_opcode}). */
public enum WorkCompletionOpcode implements CValue {
    /** {@code IBV_WC_SEND}. */
    SEND(RdmaCore.IBV_WC_SEND()),
    /** {@code IBV_WC_RDMA_WRITE}. */
    RDMA_WRITE(RdmaCore.IBV_WC_RDMA_WRITE()),
    /** {@code IBV_WC_RDMA_READ}. */
    RDMA_READ(RdmaCore.IBV_WC_RDMA_READ()),
    /** {@code IBV_WC_COMP_SWAP}. */
    COMPARE_AND_SWAP(RdmaCore.IBV_WC_COMP_SWAP()),
    /** {@code IBV_WC_FETCH_ADD}. */
    FETCH_AND_ADD(RdmaCore.IBV_WC_FETCH_ADD()),
    /** {@code IBV_WC_BIND_MW}. */
    BIND_MEMORY_WINDOW(RdmaCore.IBV_WC_BIND_MW()),
    /** {@code IBV_WC_LOCAL_INV}. */
    LOCAL_INVALIDATE(RdmaCore.IBV_WC_LOCAL_INV()),
    /** {@code IBV_WC_TSO}. */
    TCP_SEGMENTATION(RdmaCore.IBV_WC_TSO()),
    /** {@code IBV_WC_ATOMIC_WRITE}. */
    ATOMIC_WRITE(RdmaCore.IBV_WC_ATOMIC_WRITE()),
    /** {@code IBV_WC_RECV}. */
    RECEIVE(RdmaCore.IBV_WC_RECV()),
    /** {@code IBV_WC_RECV_RDMA_WITH_IMM}. */
    RECEIVE_RDMA_WRITE_WITH_IMMEDIATE(RdmaCore.IBV_WC_RECV_RDMA_WITH_IMM()),
    /**
     * An opcode that this version of rdma4j does not know (from a newer rdma-core or provider); polling never fails on
     * one.
     */
    UNKNOWN(-1);

    /** C value to constant, dense: mapping must not allocate on the data path (getEnumConstants copies). */
    private static final WorkCompletionOpcode[] BY_VALUE = CValue.table(values(), WorkCompletionOpcode[]::new);

    private final int value;

    WorkCompletionOpcode(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }

    /** The constant for a C value from a work completion. */
    static WorkCompletionOpcode fromC(int value) {
        return CValue.lookUp(BY_VALUE, value, UNKNOWN);
    }
}
