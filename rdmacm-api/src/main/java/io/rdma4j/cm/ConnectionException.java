package io.rdma4j.cm;

import io.rdma4j.verbs.RdmaException;
import io.rdma4j.verbs.VerbException;
import java.util.Optional;

/**
 * Connecting or accepting through {@link Connector} or {@link Acceptor} failed: the connection manager reported a
 * failure event (REJECTED with the peer's reason and private data, UNREACHABLE, ADDRESS_ERROR, ROUTE_ERROR,
 * CONNECT_ERROR, DISCONNECTED, DEVICE_REMOVAL), a call of a step failed at once (its {@link VerbException} with verb
 * and errno is the {@link #getCause() cause}: e.g. {@code rdma_resolve_addr} with ENETUNREACH, {@code rdma_connect}
 * with ECONNREFUSED on iWARP), or a step did not complete within the caller's timeout. {@link #step()} names the
 * step; everything that was created for the connection has been closed when this is thrown. Part of rdma4j's one
 * exception tree ({@link RdmaException}). Immutable; not serializable with its event (which holds native ids).
 */
public final class ConnectionException extends RdmaException {

    private static final long serialVersionUID = 1L;

    private final transient CmEvent event;
    private final String step;

    private ConnectionException(String step, CmEvent event, String message, Throwable cause) {
        super(message, cause);
        this.step = step;
        this.event = event;
    }

    /** {@code step} ended with the failure event {@code event}. */
    static ConnectionException failed(String step, CmEvent event) {
        String detail = event.type() == CmEventType.REJECTED
                ? RejectReason.describe(event.status())
                : "status " + event.status();
        return new ConnectionException(step, event, step + " failed: " + event.type() + " (" + detail
                + (event.privateData().length == 0 ? "" : ", " + event.privateData().length + " bytes of private data")
                + ")", null);
    }

    /**
     * A call of {@code step} failed at once: a {@link VerbException}, or what this connection's transport cannot carry
     * (an {@link IllegalArgumentException}, e.g. more private data than it allows).
     */
    static ConnectionException failed(String step, RuntimeException cause) {
        return new ConnectionException(step, null, step + " failed: " + cause.getMessage(), cause);
    }

    /** {@code step} did not see {@code awaited}; {@code bound} says within what (" within ...", ": ... ran out"). */
    static ConnectionException timedOut(String step, CmEventType awaited, String bound) {
        return new ConnectionException(step, null, step + ": no " + awaited + bound, null);
    }

    /** The step that failed, e.g. {@code "resolve address 192.0.2.1:7471"}. */
    public String step() {
        return step;
    }

    /** The failure event, or empty when the step timed out or a call failed. */
    public Optional<CmEvent> event() {
        return Optional.ofNullable(event);
    }

    /** Whether the step timed out (no event, no failed call). */
    public boolean isTimeout() {
        return event == null && getCause() == null;
    }

    /** The failure event's type, or empty when the step timed out. */
    public Optional<CmEventType> eventType() {
        return event().map(CmEvent::type);
    }

    /**
     * Why the connect was rejected, for a {@link CmEventType#REJECTED} event (empty otherwise): only
     * {@link RejectReason#CONSUMER} (and on iWARP possibly {@link RejectReason#REJECTED_OR_RESET}) is the peer
     * application's answer, with {@link #rejectPrivateData()}.
     */
    public Optional<RejectReason> rejectReason() {
        return eventType().filter(t -> t == CmEventType.REJECTED).map(t -> RejectReason.of(event.status()));
    }

    /** The peer's private data of a REJECTED event (empty otherwise). */
    public byte[] rejectPrivateData() {
        return event == null ? new byte[0] : event.privateData();
    }
}
