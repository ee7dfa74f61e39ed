package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** A path MTU (C: {@code enum ibv_mtu}). */
public enum Mtu implements CValue {
    /** {@code IBV_MTU_256}. */
    MTU_256(RdmaCore.IBV_MTU_256()),
    /** {@code IBV_MTU_512}. */
    MTU_512(RdmaCore.IBV_MTU_512()),
    /** {@code IBV_MTU_1024}. */
    MTU_1024(RdmaCore.IBV_MTU_1024()),
    /** {@code IBV_MTU_2048}. */
    MTU_2048(RdmaCore.IBV_MTU_2048()),
    /** {@code IBV_MTU_4096}. */
    MTU_4096(RdmaCore.IBV_MTU_4096());

    private final int value;

    Mtu(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
