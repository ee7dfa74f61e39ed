package io.rdma4j.verbs.internal;

/**
 * The one close order of rdma4j's native objects, in every module: closing an object closes its live descendants
 * lowest rank first, in the order libibverbs and librdmacm require. A new kind of object takes its place here.
 */
public enum Rank {
    /** A queue pair: before its CQs, SRQ and PD, and before the connection-manager id that made it. */
    QUEUE_PAIR,
    /** A shared receive queue: after its queue pairs. */
    SHARED_RECEIVE_QUEUE,
    /** A completion queue: after the queue pairs that use it. */
    COMPLETION_QUEUE,
    /** A completion channel: after its CQs. */
    COMPLETION_CHANNEL,
    /** A memory window or address handle. */
    WINDOW_OR_ADDRESS_HANDLE,
    /** A memory region: after a window bound to it. */
    MEMORY_REGION,
    /** A protection domain: after everything in it. */
    PROTECTION_DOMAIN,
    /** A device context: last of the verbs objects. */
    CONTEXT,
    /** A connection-manager id: after its queue pair. */
    CM_ID,
    /** A connection-manager event channel: after its ids. */
    EVENT_CHANNEL
}
