package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** What kind of node a device is (C: {@code enum ibv_node_type}). */
public enum NodeType implements CValue {
    /** {@code IBV_NODE_UNKNOWN}. */
    UNKNOWN(RdmaCore.IBV_NODE_UNKNOWN()),
    /** {@code IBV_NODE_CA}. */
    CHANNEL_ADAPTER(RdmaCore.IBV_NODE_CA()),
    /** {@code IBV_NODE_SWITCH}. */
    SWITCH(RdmaCore.IBV_NODE_SWITCH()),
    /** {@code IBV_NODE_ROUTER}. */
    ROUTER(RdmaCore.IBV_NODE_ROUTER()),
    /** {@code IBV_NODE_RNIC}. */
    RNIC(RdmaCore.IBV_NODE_RNIC()),
    /** {@code IBV_NODE_USNIC}. */
    USNIC(RdmaCore.IBV_NODE_USNIC()),
    /** {@code IBV_NODE_USNIC_UDP}. */
    USNIC_UDP(RdmaCore.IBV_NODE_USNIC_UDP()),
    /** {@code IBV_NODE_UNSPECIFIED}. */
    UNSPECIFIED(RdmaCore.IBV_NODE_UNSPECIFIED());

    private final int value;

    NodeType(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
