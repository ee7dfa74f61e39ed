package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/** What an asynchronous event reports (C: {@code enum ibv_event_type}). */
public enum AsyncEventType implements CValue {
    /** {@code IBV_EVENT_CQ_ERR}. */
    CQ_ERROR(RdmaCore.IBV_EVENT_CQ_ERR(), Subject.COMPLETION_QUEUE),
    /** {@code IBV_EVENT_QP_FATAL}. */
    QP_FATAL(RdmaCore.IBV_EVENT_QP_FATAL(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_QP_REQ_ERR}. */
    QP_REQUEST_ERROR(RdmaCore.IBV_EVENT_QP_REQ_ERR(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_QP_ACCESS_ERR}. */
    QP_ACCESS_ERROR(RdmaCore.IBV_EVENT_QP_ACCESS_ERR(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_COMM_EST}. */
    COMMUNICATION_ESTABLISHED(RdmaCore.IBV_EVENT_COMM_EST(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_SQ_DRAINED}. */
    SEND_QUEUE_DRAINED(RdmaCore.IBV_EVENT_SQ_DRAINED(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_PATH_MIG}. */
    PATH_MIGRATED(RdmaCore.IBV_EVENT_PATH_MIG(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_PATH_MIG_ERR}. */
    PATH_MIGRATION_ERROR(RdmaCore.IBV_EVENT_PATH_MIG_ERR(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_DEVICE_FATAL}. */
    DEVICE_FATAL(RdmaCore.IBV_EVENT_DEVICE_FATAL(), Subject.DEVICE),
    /** {@code IBV_EVENT_PORT_ACTIVE}. */
    PORT_ACTIVE(RdmaCore.IBV_EVENT_PORT_ACTIVE(), Subject.PORT),
    /** {@code IBV_EVENT_PORT_ERR}. */
    PORT_ERROR(RdmaCore.IBV_EVENT_PORT_ERR(), Subject.PORT),
    /** {@code IBV_EVENT_LID_CHANGE}. */
    LID_CHANGE(RdmaCore.IBV_EVENT_LID_CHANGE(), Subject.PORT),
    /** {@code IBV_EVENT_PKEY_CHANGE}. */
    PKEY_CHANGE(RdmaCore.IBV_EVENT_PKEY_CHANGE(), Subject.PORT),
    /** {@code IBV_EVENT_SM_CHANGE}. */
    SM_CHANGE(RdmaCore.IBV_EVENT_SM_CHANGE(), Subject.PORT),
    /** {@code IBV_EVENT_SRQ_ERR}. */
    SRQ_ERROR(RdmaCore.IBV_EVENT_SRQ_ERR(), Subject.SHARED_RECEIVE_QUEUE),
    /** {@code IBV_EVENT_SRQ_LIMIT_REACHED}. */
    SRQ_LIMIT_REACHED(RdmaCore.IBV_EVENT_SRQ_LIMIT_REACHED(), Subject.SHARED_RECEIVE_QUEUE),
    /** {@code IBV_EVENT_QP_LAST_WQE_REACHED}. */
    QP_LAST_WQE_REACHED(RdmaCore.IBV_EVENT_QP_LAST_WQE_REACHED(), Subject.QUEUE_PAIR),
    /** {@code IBV_EVENT_CLIENT_REREGISTER}. */
    CLIENT_REREGISTER(RdmaCore.IBV_EVENT_CLIENT_REREGISTER(), Subject.PORT),
    /** {@code IBV_EVENT_GID_CHANGE}. */
    GID_CHANGE(RdmaCore.IBV_EVENT_GID_CHANGE(), Subject.PORT),
    /** {@code IBV_EVENT_WQ_FATAL}. */
    WQ_FATAL(RdmaCore.IBV_EVENT_WQ_FATAL(), Subject.WORK_QUEUE),
    /** An event type this version of rdma4j does not know (a newer rdma-core): reported, never an exception. */
    UNKNOWN(-1, Subject.UNKNOWN);

    /** What an event is about, i.e. which member of {@code ibv_async_event.element} is valid. */
    public enum Subject {
        /** A queue pair. */
        QUEUE_PAIR,
        /** A completion queue. */
        COMPLETION_QUEUE,
        /** A shared receive queue. */
        SHARED_RECEIVE_QUEUE,
        /** A work queue (not wrapped by rdma4j). */
        WORK_QUEUE,
        /** A port, by number. */
        PORT,
        /** The whole device. */
        DEVICE,
        /** Not known (an event type from a newer rdma-core). */
        UNKNOWN
    }

    private final int value;
    private final Subject subject;

    AsyncEventType(int value, Subject subject) {
        this.value = value;
        this.subject = subject;
    }

    /** What the event is about. */
    public Subject subject() {
        return subject;
    }

    @Override
    public int value() {
        return value;
    }
}
