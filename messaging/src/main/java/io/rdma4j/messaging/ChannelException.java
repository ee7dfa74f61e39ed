package io.rdma4j.messaging;

import io.rdma4j.verbs.RdmaException;

/**
 * A {@link MessageChannel} ended while a call used it or before it: closed by this side, disconnected by the peer,
 * broken by a failed work request (the cause is its {@link io.rdma4j.verbs.WorkCompletionException}), or its peer
 * broke the messaging protocol. Every call waiting on the channel gets one, and so does every later call.
 */
public final class ChannelException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /** Why the channel ended. */
    public enum Reason {
        /** This side closed it. */
        CLOSED,
        /** The peer disconnected, or the connection manager reported the connection gone. */
        PEER_DISCONNECTED,
        /** A work request failed: the connection is broken (the cause says which request and why). */
        TRANSPORT_FAILED,
        /** The peer sent what the protocol does not allow, or is not an rdma4j messaging peer. */
        PROTOCOL
    }

    private final Reason reason;

    ChannelException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /** Why the channel ended. */
    public Reason reason() {
        return reason;
    }
}
