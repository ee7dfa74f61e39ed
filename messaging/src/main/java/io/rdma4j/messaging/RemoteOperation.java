package io.rdma4j.messaging;

import io.rdma4j.verbs.WorkCompletionOpcode;

/** A one-sided operation of a {@link MessageChannel} on a peer's {@link io.rdma4j.cm.RemoteBuffer}. */
public enum RemoteOperation {
    /** RDMA READ ({@code IBV_WR_RDMA_READ}): the peer's bytes into a local region. */
    READ(WorkCompletionOpcode.RDMA_READ),
    /** RDMA WRITE ({@code IBV_WR_RDMA_WRITE}): a local region's bytes into the peer's. */
    WRITE(WorkCompletionOpcode.RDMA_WRITE),
    /** RDMA WRITE with immediate ({@code IBV_WR_RDMA_WRITE_WITH_IMM}): a WRITE the peer is told of. */
    WRITE_WITH_IMMEDIATE(WorkCompletionOpcode.RDMA_WRITE),
    /** Compare-and-swap on 8 bytes ({@code IBV_WR_ATOMIC_CMP_AND_SWP}). */
    COMPARE_AND_SWAP(WorkCompletionOpcode.COMPARE_AND_SWAP),
    /** Fetch-and-add on 8 bytes ({@code IBV_WR_ATOMIC_FETCH_AND_ADD}). */
    FETCH_AND_ADD(WorkCompletionOpcode.FETCH_AND_ADD);

    private final WorkCompletionOpcode opcode;

    RemoteOperation(WorkCompletionOpcode opcode) {
        this.opcode = opcode;
    }

    /** The opcode of its completion. */
    WorkCompletionOpcode opcode() {
        return opcode;
    }

    /** Whether it is an atomic: 8 bytes, 8-byte aligned, the old value returned. */
    boolean isAtomic() {
        return this == COMPARE_AND_SWAP || this == FETCH_AND_ADD;
    }
}
