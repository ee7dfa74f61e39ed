package io.rdma4j.cm;

import io.rdma4j.bindings.verbs.RdmaCore;

/** What a connection-manager event reports (C: {@code enum rdma_cm_event_type}). */
public enum CmEventType {
    /** {@code RDMA_CM_EVENT_ADDR_RESOLVED}: the destination maps to a local device. */
    ADDRESS_RESOLVED(RdmaCore.RDMA_CM_EVENT_ADDR_RESOLVED()),
    /** {@code RDMA_CM_EVENT_ADDR_ERROR}. */
    ADDRESS_ERROR(RdmaCore.RDMA_CM_EVENT_ADDR_ERROR()),
    /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}. */
    ROUTE_RESOLVED(RdmaCore.RDMA_CM_EVENT_ROUTE_RESOLVED()),
    /** {@code RDMA_CM_EVENT_ROUTE_ERROR}. */
    ROUTE_ERROR(RdmaCore.RDMA_CM_EVENT_ROUTE_ERROR()),
    /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}: on a listening id; the event's id is the new connection. */
    CONNECT_REQUEST(RdmaCore.RDMA_CM_EVENT_CONNECT_REQUEST()),
    /** {@code RDMA_CM_EVENT_CONNECT_RESPONSE}: the peer accepted; finish with {@link CmId#establish()}. */
    CONNECT_RESPONSE(RdmaCore.RDMA_CM_EVENT_CONNECT_RESPONSE()),
    /** {@code RDMA_CM_EVENT_CONNECT_ERROR}. */
    CONNECT_ERROR(RdmaCore.RDMA_CM_EVENT_CONNECT_ERROR()),
    /** {@code RDMA_CM_EVENT_UNREACHABLE}. */
    UNREACHABLE(RdmaCore.RDMA_CM_EVENT_UNREACHABLE()),
    /** {@code RDMA_CM_EVENT_REJECTED}. */
    REJECTED(RdmaCore.RDMA_CM_EVENT_REJECTED()),
    /** {@code RDMA_CM_EVENT_ESTABLISHED}. */
    ESTABLISHED(RdmaCore.RDMA_CM_EVENT_ESTABLISHED()),
    /** {@code RDMA_CM_EVENT_DISCONNECTED}. */
    DISCONNECTED(RdmaCore.RDMA_CM_EVENT_DISCONNECTED()),
    /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}. */
    DEVICE_REMOVAL(RdmaCore.RDMA_CM_EVENT_DEVICE_REMOVAL()),
    /** {@code RDMA_CM_EVENT_MULTICAST_JOIN}. */
    MULTICAST_JOIN(RdmaCore.RDMA_CM_EVENT_MULTICAST_JOIN()),
    /** {@code RDMA_CM_EVENT_MULTICAST_ERROR}. */
    MULTICAST_ERROR(RdmaCore.RDMA_CM_EVENT_MULTICAST_ERROR()),
    /** {@code RDMA_CM_EVENT_ADDR_CHANGE}. */
    ADDRESS_CHANGE(RdmaCore.RDMA_CM_EVENT_ADDR_CHANGE()),
    /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}. */
    TIMEWAIT_EXIT(RdmaCore.RDMA_CM_EVENT_TIMEWAIT_EXIT());

    private final int value;

    CmEventType(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    static CmEventType of(int value) {
        for (CmEventType type : values()) {
            if (type.value == value) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown rdma_cm event " + value);
    }
}
