package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** A field an extended completion queue reports besides wr_id and status (C: {@code enum ibv_create_cq_wc_flags}). */
public enum CompletionField implements CValue {
    /** {@code IBV_WC_EX_WITH_BYTE_LEN}. */
    BYTE_LENGTH(RdmaCore.IBV_WC_EX_WITH_BYTE_LEN()),
    /** {@code IBV_WC_EX_WITH_IMM}. */
    IMMEDIATE_DATA(RdmaCore.IBV_WC_EX_WITH_IMM()),
    /** {@code IBV_WC_EX_WITH_QP_NUM}. */
    QUEUE_PAIR_NUMBER(RdmaCore.IBV_WC_EX_WITH_QP_NUM()),
    /** {@code IBV_WC_EX_WITH_SRC_QP}. */
    SOURCE_QUEUE_PAIR(RdmaCore.IBV_WC_EX_WITH_SRC_QP()),
    /** {@code IBV_WC_EX_WITH_SLID}. */
    SOURCE_LID(RdmaCore.IBV_WC_EX_WITH_SLID()),
    /** {@code IBV_WC_EX_WITH_SL}. */
    SERVICE_LEVEL(RdmaCore.IBV_WC_EX_WITH_SL()),
    /** {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP}. */
    COMPLETION_TIMESTAMP(RdmaCore.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP());

    private final int value;

    CompletionField(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
