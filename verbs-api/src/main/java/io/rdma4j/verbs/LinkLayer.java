package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** The link layer under a port (C: {@code IBV_LINK_LAYER_*}). */
public enum LinkLayer implements CValue {
    /** {@code IBV_LINK_LAYER_UNSPECIFIED}. */
    UNSPECIFIED(RdmaCore.IBV_LINK_LAYER_UNSPECIFIED()),
    /** {@code IBV_LINK_LAYER_INFINIBAND}. */
    INFINIBAND(RdmaCore.IBV_LINK_LAYER_INFINIBAND()),
    /** {@code IBV_LINK_LAYER_ETHERNET}. */
    ETHERNET(RdmaCore.IBV_LINK_LAYER_ETHERNET());

    private final int value;

    LinkLayer(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
