package io.rdma4j.cm;

import io.rdma4j.bindings.verbs.RdmaCore;

/** The port space of an id (C: {@code enum rdma_port_space}): which transport service its connections use. */
public enum PortSpace {
    /** {@code RDMA_PS_TCP}: reliable connected (RC) queue pairs. */
    TCP(RdmaCore.RDMA_PS_TCP()),
    /** {@code RDMA_PS_UDP}: unreliable datagram (UD) queue pairs. */
    UDP(RdmaCore.RDMA_PS_UDP());

    private final int value;

    PortSpace(int value) {
        this.value = value;
    }

    int value() {
        return value;
    }
}
