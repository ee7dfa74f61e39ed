package io.rdma4j.cm;

import java.util.Optional;

/**
 * A connection-manager event ({@code struct rdma_cm_event}, from {@code rdma_get_cm_event}): everything the C event
 * carries, copied out before the event was acknowledged ({@code rdma_ack_cm_event}), so it stays valid for good.
 * Immutable and thread-safe; made only by rdma4j.
 */
public final class CmEvent {

    private final CmEventType type;
    private final int rawType;
    private final int status;
    private final CmId id;
    private final CmId listenId;
    private final byte[] privateData;
    private final ConnectionParameters peer;
    private final UdParameters ud;

    CmEvent(CmEventType type, int rawType, int status, CmId id, CmId listenId, byte[] privateData,
            ConnectionParameters peer, UdParameters ud) {
        this.type = type;
        this.rawType = rawType;
        this.status = status;
        this.id = id;
        this.listenId = listenId;
        this.privateData = privateData.clone();
        this.peer = peer;
        this.ud = ud;
    }

    /** What happened ({@link CmEventType#UNKNOWN} for an event this version does not know). */
    public CmEventType type() {
        return type;
    }

    /** The C event type. */
    public int rawType() {
        return rawType;
    }

    /**
     * The event's status: 0, a negative errno (e.g. {@code -ETIMEDOUT} for ADDRESS_ERROR), or for REJECTED the
     * transport's reject reason ({@link RejectReason}: InfiniBand/RoCE 28 = consumer reject, 8 = no listener; iWARP a
     * negative errno).
     */
    public int status() {
        return status;
    }

    /**
     * The id it is about; for {@link CmEventType#CONNECT_REQUEST} a new id for the connection, which the caller owns
     * (accept or reject it, close it).
     */
    public CmId id() {
        return id;
    }

    /** For a connect request, the listening id it arrived on; else {@code null}. */
    public CmId listenId() {
        return listenId;
    }

    /**
     * A copy of the peer's private data (connect request, response, established, rejected, UD events); empty if none.
     * On InfiniBand/RoCE the transport pads it to its full size with zeros.
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * For connection events, the peer's connection parameters (its QP number, READ depths, retry counts, SRQ, flow
     * control).
     */
    public Optional<ConnectionParameters> peerParameters() {
        return Optional.ofNullable(peer);
    }

    /** For {@link PortSpace#UDP} and multicast events, how to reach the peer or group. */
    public Optional<UdParameters> udParameters() {
        return Optional.ofNullable(ud);
    }

    @Override
    public String toString() {
        return type + (type == CmEventType.UNKNOWN ? "(" + rawType + ")" : "") + " status " + status
                + (privateData.length == 0 ? "" : ", " + privateData.length + " bytes of private data");
    }
}
