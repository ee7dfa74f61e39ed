package io.rdma4j.cm;

import java.util.Optional;

/**
 * Connecting or accepting through {@link Connector} or {@link Acceptor} failed: the connection manager reported a
 * failure event (REJECTED with the peer's reason and private data, UNREACHABLE, ADDRESS_ERROR, ROUTE_ERROR,
 * CONNECT_ERROR, DISCONNECTED, DEVICE_REMOVAL), a librdmacm call of a step failed at once (its
 * {@link io.rdma4j.verbs.RdmaException} with verb and errno is the {@link #getCause() cause}: e.g.
 * {@code rdma_resolve_addr} with ENETUNREACH, {@code rdma_connect} with ECONNREFUSED on iWARP), or a step did not
 * complete within its timeout. Everything that was created for the connection has been closed when this is thrown.
 */
public final class ConnectionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Not serializable: the event holds native ids. */
    private final transient CmEvent event;
    private final String step;

    private ConnectionException(String step, CmEvent event, String message) {
        super(message);
        this.step = step;
        this.event = event;
    }

    /** {@code step} ended with the failure event {@code event}. */
    static ConnectionException failed(String step, CmEvent event) {
        return new ConnectionException(step, event, step + " failed: " + event.type() + " (status " + event.status()
                + (event.type() == CmEventType.REJECTED ? ", the peer's reject reason" : "")
                + (event.privateData().length == 0 ? "" : ", " + event.privateData().length + " bytes of private data")
                + ")");
    }

    /** A librdmacm call of {@code step} failed at once. */
    static ConnectionException failed(String step, io.rdma4j.verbs.RdmaException cause) {
        ConnectionException e = new ConnectionException(step, null, step + " failed: " + cause.getMessage());
        e.initCause(cause);
        return e;
    }

    /** {@code step} did not complete within {@code timeout}. */
    static ConnectionException timedOut(String step, CmEventType awaited, java.time.Duration timeout) {
        return new ConnectionException(step, null, step + ": no " + awaited + " within " + timeout);
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

    /** The peer's private data of a REJECTED event (empty otherwise). */
    public byte[] rejectPrivateData() {
        return event == null ? new byte[0] : event.privateData();
    }
}
