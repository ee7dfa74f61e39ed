package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** The type of a GID table entry (C: {@code enum ibv_gid_type}). */
public enum GidType implements CValue {
    /** {@code IBV_GID_TYPE_IB}. */
    INFINIBAND(RdmaCore.IBV_GID_TYPE_IB()),
    /** {@code IBV_GID_TYPE_ROCE_V1}. */
    ROCE_V1(RdmaCore.IBV_GID_TYPE_ROCE_V1()),
    /** {@code IBV_GID_TYPE_ROCE_V2}. */
    ROCE_V2(RdmaCore.IBV_GID_TYPE_ROCE_V2());

    private final int value;

    GidType(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
