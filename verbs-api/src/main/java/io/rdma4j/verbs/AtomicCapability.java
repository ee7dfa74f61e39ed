package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** How a device supports atomic operations (C: {@code enum ibv_atomic_cap}). */
public enum AtomicCapability implements CValue {
    /** {@code IBV_ATOMIC_NONE}. */
    NONE(RdmaCore.IBV_ATOMIC_NONE()),
    /** {@code IBV_ATOMIC_HCA}. */
    HCA(RdmaCore.IBV_ATOMIC_HCA()),
    /** {@code IBV_ATOMIC_GLOB}. */
    GLOBAL(RdmaCore.IBV_ATOMIC_GLOB());

    private final int value;

    AtomicCapability(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
