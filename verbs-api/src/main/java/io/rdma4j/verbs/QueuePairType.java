package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** The transport service of a queue pair (C: {@code enum ibv_qp_type}). */
public enum QueuePairType implements CValue {
    /** {@code IBV_QPT_RC}. */
    RELIABLE_CONNECTED(RdmaCore.IBV_QPT_RC()),
    /** {@code IBV_QPT_UC}. */
    UNRELIABLE_CONNECTED(RdmaCore.IBV_QPT_UC()),
    /** {@code IBV_QPT_UD}. */
    UNRELIABLE_DATAGRAM(RdmaCore.IBV_QPT_UD());

    private final int value;

    QueuePairType(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
