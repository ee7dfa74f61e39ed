package io.rdma4j.cm;

import java.util.Optional;

/**
 * A connection-manager event ({@code struct rdma_cm_event}, from {@code rdma_get_cm_event}): everything the C event
 * carries, copied out before the event was acknowledged ({@code rdma_ack_cm_event}), so it stays valid for good.
 *
 * @param type        what happened ({@link CmEventType#UNKNOWN} for an event this version does not know)
 * @param rawType     the C event type
 * @param status      the event's status: 0, a negative errno (e.g. {@code -ETIMEDOUT} for ADDRESS_ERROR), or for
 *                    REJECTED the transport's reject reason (InfiniBand/RoCE: 28 = consumer reject, 8 = no listener;
 *                    iWARP: {@code -ECONNREFUSED})
 * @param id          the id it is about; for {@link CmEventType#CONNECT_REQUEST} a new id for the connection, which
 *                    the caller owns (accept or reject it, close it)
 * @param listenId    for a connect request, the listening id it arrived on; else {@code null}
 * @param privateData the peer's private data (connect request, response, established, rejected, UD events);
 *                    empty if none. On InfiniBand/RoCE the transport pads it to its full size with zeros
 * @param peer        for connection events, the peer's connection parameters (its QP number, READ depths, retry
 *                    counts, SRQ, flow control); else {@code null}
 * @param ud          for {@link PortSpace#UDP} and multicast events, how to reach the peer or group; else
 *                    {@code null}
 */
public record CmEvent(CmEventType type, int rawType, int status, CmId id, CmId listenId, byte[] privateData,
                      ConnectionParameters peer, UdParameters ud) {

    public CmEvent {
        privateData = privateData.clone();
    }

    /** A copy of the private data. */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** The peer's connection parameters, if the event carries them. */
    public Optional<ConnectionParameters> peerParameters() {
        return Optional.ofNullable(peer);
    }

    /** The UD parameters, if the event carries them. */
    public Optional<UdParameters> udParameters() {
        return Optional.ofNullable(ud);
    }

    @Override
    public String toString() {
        return type + (type == CmEventType.UNKNOWN ? "(" + rawType + ")" : "") + " status " + status
                + (privateData.length == 0 ? "" : ", " + privateData.length + " bytes of private data");
    }
}
