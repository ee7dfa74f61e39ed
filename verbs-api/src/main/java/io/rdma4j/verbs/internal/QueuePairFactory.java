package io.rdma4j.verbs.internal;

import java.lang.foreign.MemorySegment;

/**
 * How a queue pair's C object is created and destroyed: by libibverbs ({@code ibv_create_qp}) or, for a
 * connection-manager id, by librdmacm ({@code rdma_create_qp}, which then moves it through its states itself).
 */
public interface QueuePairFactory {

    /**
     * Creates the queue pair.
     *
     * @param errnoState the capture-state segment for errno
     * @param pd         the {@code struct ibv_pd}
     * @param init       a filled {@code struct ibv_qp_init_attr_ex} (its {@code comp_mask} set when extended)
     * @param extended   whether the extended verb ({@code *_create_qp_ex}) is needed
     * @return the {@code struct ibv_qp}, or NULL with errno in {@code errnoState}
     */
    MemorySegment create(MemorySegment errnoState, MemorySegment pd, MemorySegment init, boolean extended);

    /** The C verb {@link #create} calls, for messages. */
    String verb(boolean extended);

    /** The C verb the destroyer calls, for messages. */
    String destroyVerb();

    /** Destroys the queue pair {@code qp} that {@link #create} returned; must not capture any Java object. */
    NativeResource.Destroyer destroyer(MemorySegment qp);
}
