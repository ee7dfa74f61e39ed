package io.rdma4j.cm;

/**
 * A connection-manager event ({@code struct rdma_cm_event}, from {@code rdma_get_cm_event}; already acknowledged
 * with {@code rdma_ack_cm_event} when returned).
 *
 * @param type     what happened
 * @param status   the event's status: 0, a negative errno, or a transport's reject reason
 * @param id       the id it is about; for {@link CmEventType#CONNECT_REQUEST} a new id for the connection, which the
 *                 caller owns (accept, reject, close)
 * @param listenId for a connect request, the listening id it arrived on; else {@code null}
 */
public record CmEvent(CmEventType type, int status, CmId id, CmId listenId) {
}
