package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** A port's logical state (C: {@code enum ibv_port_state}). */
public enum PortState implements CValue {
    /** {@code IBV_PORT_NOP}. */
    NOP(RdmaCore.IBV_PORT_NOP()),
    /** {@code IBV_PORT_DOWN}. */
    DOWN(RdmaCore.IBV_PORT_DOWN()),
    /** {@code IBV_PORT_INIT}. */
    INIT(RdmaCore.IBV_PORT_INIT()),
    /** {@code IBV_PORT_ARMED}. */
    ARMED(RdmaCore.IBV_PORT_ARMED()),
    /** {@code IBV_PORT_ACTIVE}. */
    ACTIVE(RdmaCore.IBV_PORT_ACTIVE()),
    /** {@code IBV_PORT_ACTIVE_DEFER}. */
    ACTIVE_DEFER(RdmaCore.IBV_PORT_ACTIVE_DEFER());

    private final int value;

    PortState(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
