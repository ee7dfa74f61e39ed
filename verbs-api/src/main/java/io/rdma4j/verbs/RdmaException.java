package io.rdma4j.verbs;

/**
 * RDMA failed: the one root of every exception that rdma4j throws for a failure of the hardware, the provider or
 * the peer, in every module, so that a caller can catch "RDMA failed" in one place. What the failure was about is
 * in the subclass:
 * <ul>
 *   <li>{@link VerbException}: a libibverbs or librdmacm call failed, with the call's name and its errno
 *       ({@link UnsupportedVerbException} when the provider lacks the feature, {@link PostException} for a post
 *       that the provider rejected, with the rejected request's index);</li>
 *   <li>{@link WorkCompletionException}: a work request completed with an error status, with its opcode, work
 *       request id, queue pair, status and vendor error;</li>
 *   <li>{@code io.rdma4j.cm.ConnectionException}: a connection step failed, with the step, the connection
 *       manager's event and the peer's reject reason, or the failed call as its cause.</li>
 * </ul>
 *
 * <p>Misuse that rdma4j detects before calling C (a closed object, a value out of a C field's range, a call in
 * the wrong state) is not an {@code RdmaException} but an {@link IllegalStateException} or
 * {@link IllegalArgumentException} that names the verb and the field: it is a bug of the caller, not a failure of
 * RDMA. Unchecked, like every exception of rdma4j.
 */
public abstract class RdmaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** For rdma4j's own subclasses, in every module. */
    protected RdmaException(String message) {
        super(message);
    }

    /** For rdma4j's own subclasses, in every module: {@code cause} is the failure this one reports. */
    protected RdmaException(String message, Throwable cause) {
        super(message, cause);
    }
}
