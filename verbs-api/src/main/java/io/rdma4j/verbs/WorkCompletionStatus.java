package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** The outcome of a work request (C: {@code enum ibv_wc_status}). */
public enum WorkCompletionStatus implements CValue {
    /** {@code IBV_WC_SUCCESS}. */
    SUCCESS(RdmaCore.IBV_WC_SUCCESS()),
    /** {@code IBV_WC_LOC_LEN_ERR}. */
    LOCAL_LENGTH_ERROR(RdmaCore.IBV_WC_LOC_LEN_ERR()),
    /** {@code IBV_WC_LOC_QP_OP_ERR}. */
    LOCAL_QP_OPERATION_ERROR(RdmaCore.IBV_WC_LOC_QP_OP_ERR()),
    /** {@code IBV_WC_LOC_EEC_OP_ERR}. */
    LOCAL_EEC_OPERATION_ERROR(RdmaCore.IBV_WC_LOC_EEC_OP_ERR()),
    /** {@code IBV_WC_LOC_PROT_ERR}. */
    LOCAL_PROTECTION_ERROR(RdmaCore.IBV_WC_LOC_PROT_ERR()),
    /** {@code IBV_WC_WR_FLUSH_ERR}. */
    WORK_REQUEST_FLUSH_ERROR(RdmaCore.IBV_WC_WR_FLUSH_ERR()),
    /** {@code IBV_WC_MW_BIND_ERR}. */
    MEMORY_WINDOW_BIND_ERROR(RdmaCore.IBV_WC_MW_BIND_ERR()),
    /** {@code IBV_WC_BAD_RESP_ERR}. */
    BAD_RESPONSE_ERROR(RdmaCore.IBV_WC_BAD_RESP_ERR()),
    /** {@code IBV_WC_LOC_ACCESS_ERR}. */
    LOCAL_ACCESS_ERROR(RdmaCore.IBV_WC_LOC_ACCESS_ERR()),
    /** {@code IBV_WC_REM_INV_REQ_ERR}. */
    REMOTE_INVALID_REQUEST_ERROR(RdmaCore.IBV_WC_REM_INV_REQ_ERR()),
    /** {@code IBV_WC_REM_ACCESS_ERR}. */
    REMOTE_ACCESS_ERROR(RdmaCore.IBV_WC_REM_ACCESS_ERR()),
    /** {@code IBV_WC_REM_OP_ERR}. */
    REMOTE_OPERATION_ERROR(RdmaCore.IBV_WC_REM_OP_ERR()),
    /** {@code IBV_WC_RETRY_EXC_ERR}. */
    RETRY_EXCEEDED_ERROR(RdmaCore.IBV_WC_RETRY_EXC_ERR()),
    /** {@code IBV_WC_RNR_RETRY_EXC_ERR}. */
    RNR_RETRY_EXCEEDED_ERROR(RdmaCore.IBV_WC_RNR_RETRY_EXC_ERR()),
    /** {@code IBV_WC_LOC_RDD_VIOL_ERR}. */
    LOCAL_RDD_VIOLATION_ERROR(RdmaCore.IBV_WC_LOC_RDD_VIOL_ERR()),
    /** {@code IBV_WC_REM_INV_RD_REQ_ERR}. */
    REMOTE_INVALID_RD_REQUEST_ERROR(RdmaCore.IBV_WC_REM_INV_RD_REQ_ERR()),
    /** {@code IBV_WC_REM_ABORT_ERR}. */
    REMOTE_ABORT_ERROR(RdmaCore.IBV_WC_REM_ABORT_ERR()),
    /** {@code IBV_WC_INV_EECN_ERR}. */
    INVALID_EECN_ERROR(RdmaCore.IBV_WC_INV_EECN_ERR()),
    /** {@code IBV_WC_INV_EEC_STATE_ERR}. */
    INVALID_EEC_STATE_ERROR(RdmaCore.IBV_WC_INV_EEC_STATE_ERR()),
    /** {@code IBV_WC_FATAL_ERR}. */
    FATAL_ERROR(RdmaCore.IBV_WC_FATAL_ERR()),
    /** {@code IBV_WC_RESP_TIMEOUT_ERR}. */
    RESPONSE_TIMEOUT_ERROR(RdmaCore.IBV_WC_RESP_TIMEOUT_ERR()),
    /** {@code IBV_WC_GENERAL_ERR}. */
    GENERAL_ERROR(RdmaCore.IBV_WC_GENERAL_ERR()),
    /** {@code IBV_WC_TM_ERR}. */
    TAG_MATCHING_ERROR(RdmaCore.IBV_WC_TM_ERR()),
    /** {@code IBV_WC_TM_RNDV_INCOMPLETE}. */
    TAG_MATCHING_RENDEZVOUS_INCOMPLETE(RdmaCore.IBV_WC_TM_RNDV_INCOMPLETE()),
    /**
     * A status that this version of rdma4j does not know (from a newer rdma-core or provider); polling never fails on
     * one.
     */
    UNKNOWN(-1);

    /** C value to constant, dense: mapping must not allocate on the data path (getEnumConstants copies). */
    private static final WorkCompletionStatus[] BY_VALUE = CValue.table(values(), WorkCompletionStatus[]::new);

    private final int value;

    WorkCompletionStatus(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }

    /** The constant for a C value from a work completion. */
    static WorkCompletionStatus fromC(int value) {
        return CValue.lookUp(BY_VALUE, value, UNKNOWN);
    }
}
