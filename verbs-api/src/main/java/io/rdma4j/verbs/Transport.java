package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** The transport a device speaks (C: {@code enum ibv_transport_type}). */
public enum Transport implements CValue {
    /** {@code IBV_TRANSPORT_UNKNOWN}. */
    UNKNOWN(RdmaCore.IBV_TRANSPORT_UNKNOWN()),
    /** {@code IBV_TRANSPORT_IB}. */
    INFINIBAND(RdmaCore.IBV_TRANSPORT_IB()),
    /** {@code IBV_TRANSPORT_IWARP}. */
    IWARP(RdmaCore.IBV_TRANSPORT_IWARP()),
    /** {@code IBV_TRANSPORT_USNIC}. */
    USNIC(RdmaCore.IBV_TRANSPORT_USNIC()),
    /** {@code IBV_TRANSPORT_USNIC_UDP}. */
    USNIC_UDP(RdmaCore.IBV_TRANSPORT_USNIC_UDP()),
    /** {@code IBV_TRANSPORT_UNSPECIFIED}. */
    UNSPECIFIED(RdmaCore.IBV_TRANSPORT_UNSPECIFIED());

    private final int value;

    Transport(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
