package io.rdma4j.cm;

import io.rdma4j.bindings.verbs.RdmaCore;

/** What a connection-manager event reports (C: {@code enum rdma_cm_event_type}). */
public enum CmEventType {
    /** {@code RDMA_CM_EVENT_ADDR_RESOLVED}: the destination maps to a local device. */
    ADDRESS_RESOLVED(RdmaCore.RDMA_CM_EVENT_ADDR_RESOLVED()),
    /** {@code RDMA_CM_EVENT_ADDR_ERROR}: the destination cannot be reached from any RDMA device (or timed out). */
    ADDRESS_ERROR(RdmaCore.RDMA_CM_EVENT_ADDR_ERROR()),
    /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}. */
    ROUTE_RESOLVED(RdmaCore.RDMA_CM_EVENT_ROUTE_RESOLVED()),
    /** {@code RDMA_CM_EVENT_ROUTE_ERROR}. */
    ROUTE_ERROR(RdmaCore.RDMA_CM_EVENT_ROUTE_ERROR()),
    /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}: on a listening id; the event's id is the new connection. */
    CONNECT_REQUEST(RdmaCore.RDMA_CM_EVENT_CONNECT_REQUEST()),
    /** {@code RDMA_CM_EVENT_CONNECT_RESPONSE}: the peer accepted; move the queue pair, then {@link CmId#establish()}. */
    CONNECT_RESPONSE(RdmaCore.RDMA_CM_EVENT_CONNECT_RESPONSE()),
    /** {@code RDMA_CM_EVENT_CONNECT_ERROR}. */
    CONNECT_ERROR(RdmaCore.RDMA_CM_EVENT_CONNECT_ERROR()),
    /** {@code RDMA_CM_EVENT_UNREACHABLE}: the peer did not answer (e.g. nobody listens on that port). */
    UNREACHABLE(RdmaCore.RDMA_CM_EVENT_UNREACHABLE()),
    /** {@code RDMA_CM_EVENT_REJECTED}: the peer rejected, or nobody listens (status names the reason). */
    REJECTED(RdmaCore.RDMA_CM_EVENT_REJECTED()),
    /** {@code RDMA_CM_EVENT_ESTABLISHED}. */
    ESTABLISHED(RdmaCore.RDMA_CM_EVENT_ESTABLISHED()),
    /** {@code RDMA_CM_EVENT_DISCONNECTED}. */
    DISCONNECTED(RdmaCore.RDMA_CM_EVENT_DISCONNECTED()),
    /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}. */
    DEVICE_REMOVAL(RdmaCore.RDMA_CM_EVENT_DEVICE_REMOVAL()),
    /** {@code RDMA_CM_EVENT_MULTICAST_JOIN}: carries the group's {@link UdParameters}. */
    MULTICAST_JOIN(RdmaCore.RDMA_CM_EVENT_MULTICAST_JOIN()),
    /** {@code RDMA_CM_EVENT_MULTICAST_ERROR}. */
    MULTICAST_ERROR(RdmaCore.RDMA_CM_EVENT_MULTICAST_ERROR()),
    /** {@code RDMA_CM_EVENT_ADDR_CHANGE}. */
    ADDRESS_CHANGE(RdmaCore.RDMA_CM_EVENT_ADDR_CHANGE()),
    /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}: the queue pair of a disconnected id may be reused. */
    TIMEWAIT_EXIT(RdmaCore.RDMA_CM_EVENT_TIMEWAIT_EXIT()),
    /** An event this version of rdma4j does not know (from a newer librdmacm); {@link CmEvent#rawType()} has it. */
    UNKNOWN(-1);

    private final int value;

    CmEventType(int value) {
        this.value = value;
    }

    /** The C value ({@code -1} for {@link #UNKNOWN}). */
    public int value() {
        return value;
    }

    /** The type of C value {@code value}; {@link #UNKNOWN} for one this version does not know. */
    static CmEventType of(int value) {
        for (CmEventType type : values()) {
            if (type.value == value && type != UNKNOWN) {
                return type;
            }
        }
        return UNKNOWN;
    }
}
