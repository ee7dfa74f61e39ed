package io.rdma4j.messaging;

import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.RdmaException;
import io.rdma4j.verbs.WorkCompletionException;
import io.rdma4j.verbs.WorkCompletionStatus;

/**
 * A one-sided operation of a {@link MessageChannel} completed with an error: the message and the accessors name the
 * operation, the remote range and key, the completion's status and the channel; the cause is the
 * {@link WorkCompletionException}. On a reliable connection such an error breaks the queue pair, so the channel
 * ends with it: later calls fail with a {@link ChannelException} ({@link ChannelException.Reason#TRANSPORT_FAILED})
 * whose cause is this exception.
 */
public final class RemoteOperationException extends RdmaException {

    private static final long serialVersionUID = 1L;

    private final RemoteOperation operation;
    private final long remoteAddress;
    private final int rkey;
    private final long length;
    private final WorkCompletionStatus status;

    RemoteOperationException(RemoteOperation operation, RemoteBuffer remote, WorkCompletionException cause,
                             String channel) {
        super(operation + " of " + remote.length() + " bytes at 0x" + Long.toHexString(remote.address())
                + " (rkey 0x" + Integer.toHexString(remote.rkey()) + ") failed with " + cause.status() + " ("
                + cause.statusText() + ", vendor error 0x" + Integer.toHexString(cause.vendorError()) + ") on "
                + channel, cause);
        this.operation = operation;
        this.remoteAddress = remote.address();
        this.rkey = remote.rkey();
        this.length = remote.length();
        this.status = cause.status();
    }

    /** The operation that failed. */
    public RemoteOperation operation() {
        return operation;
    }

    /** The first remote byte it addressed. */
    public long remoteAddress() {
        return remoteAddress;
    }

    /** The remote key it used. */
    public int rkey() {
        return rkey;
    }

    /** The bytes it moved (8 for an atomic). */
    public long length() {
        return length;
    }

    /** Its completion's status. */
    public WorkCompletionStatus status() {
        return status;
    }
}
