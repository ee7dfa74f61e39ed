package io.rdma4j.cm;

/**
 * Where a {@link CmId} stands, as rdma4j tracks it from the calls made on the id and the events taken for it. Each
 * call is allowed in some states only and refused in the others with {@link IllegalStateException} before librdmacm
 * runs (librdmacm itself crashes on some of them, e.g. {@code rdma_accept} on an id that has no connect request).
 */
public enum CmIdState {
    /** Created, nothing done yet. */
    IDLE,
    /** Bound to a local address ({@code rdma_bind_addr}). */
    BOUND,
    /** Listening for connect requests ({@code rdma_listen}). */
    LISTENING,
    /** {@code rdma_resolve_addr} started; waiting for ADDRESS_RESOLVED or ADDRESS_ERROR. */
    RESOLVING_ADDRESS,
    /** The destination maps to a local device: the id has a {@link CmId#context()}. */
    ADDRESS_RESOLVED,
    /** {@code rdma_resolve_route} started. */
    RESOLVING_ROUTE,
    /** Ready to connect. */
    ROUTE_RESOLVED,
    /** {@code rdma_connect} sent; waiting for the peer. */
    CONNECTING,
    /** The peer accepted a connection to a queue pair of the application's own: move it, then {@link CmId#establish()}. */
    CONNECT_RESPONSE,
    /** A connect request that arrived on a listener: accept or reject it. */
    CONNECT_REQUEST,
    /** Accepted; waiting for ESTABLISHED. */
    ACCEPTING,
    /** Connected. */
    ESTABLISHED,
    /** The request was rejected (by this side or the peer). */
    REJECTED,
    /** Disconnected (by either side). */
    DISCONNECTED,
    /** Connecting failed (CONNECT_ERROR, UNREACHABLE) or the device went away. */
    FAILED,
    /** Destroyed. */
    CLOSED
}
