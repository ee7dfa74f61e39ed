package io.rdma4j.bindings.shim;

import io.rdma4j.bindings.verbs.RdmaCore;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The librdmacm functions that report failure as -1 (or NULL) with {@code errno}, bound with errno capture.
 * Each method takes the capture-state segment ({@link Errno#state()}) first. Stateless and thread-safe.
 */
public final class ExportedConnectionManager {
    private static final MethodHandle RDMA_CREATE_EVENT_CHANNEL = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_create_event_channel$address(), RdmaCore.rdma_create_event_channel$descriptor());
    private static final MethodHandle RDMA_CREATE_ID = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_create_id$address(), RdmaCore.rdma_create_id$descriptor());
    private static final MethodHandle RDMA_BIND_ADDR = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_bind_addr$address(), RdmaCore.rdma_bind_addr$descriptor());
    private static final MethodHandle RDMA_LISTEN = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_listen$address(), RdmaCore.rdma_listen$descriptor());
    private static final MethodHandle RDMA_RESOLVE_ADDR = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_resolve_addr$address(), RdmaCore.rdma_resolve_addr$descriptor());
    private static final MethodHandle RDMA_RESOLVE_ROUTE = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_resolve_route$address(), RdmaCore.rdma_resolve_route$descriptor());
    private static final MethodHandle RDMA_CONNECT = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_connect$address(), RdmaCore.rdma_connect$descriptor());
    private static final MethodHandle RDMA_ACCEPT = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_accept$address(), RdmaCore.rdma_accept$descriptor());
    private static final MethodHandle RDMA_REJECT = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_reject$address(), RdmaCore.rdma_reject$descriptor());
    private static final MethodHandle RDMA_ESTABLISH = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_establish$address(), RdmaCore.rdma_establish$descriptor());
    private static final MethodHandle RDMA_DISCONNECT = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_disconnect$address(), RdmaCore.rdma_disconnect$descriptor());
    private static final MethodHandle RDMA_GET_CM_EVENT = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_get_cm_event$address(), RdmaCore.rdma_get_cm_event$descriptor());
    private static final MethodHandle RDMA_DESTROY_ID = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_destroy_id$address(), RdmaCore.rdma_destroy_id$descriptor());

    private static final MethodHandle RDMA_CREATE_QP = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_create_qp$address(), RdmaCore.rdma_create_qp$descriptor());
    private static final MethodHandle RDMA_CREATE_QP_EX = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_create_qp_ex$address(), RdmaCore.rdma_create_qp_ex$descriptor());
    private static final MethodHandle RDMA_INIT_QP_ATTR = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_init_qp_attr$address(), RdmaCore.rdma_init_qp_attr$descriptor());
    private static final MethodHandle RDMA_SET_OPTION = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_set_option$address(), RdmaCore.rdma_set_option$descriptor());
    private static final MethodHandle RDMA_MIGRATE_ID = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_migrate_id$address(), RdmaCore.rdma_migrate_id$descriptor());
    private static final MethodHandle RDMA_JOIN_MULTICAST = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_join_multicast$address(), RdmaCore.rdma_join_multicast$descriptor());
    private static final MethodHandle RDMA_LEAVE_MULTICAST = Downcalls.exportedCapturingErrno(
            RdmaCore.rdma_leave_multicast$address(), RdmaCore.rdma_leave_multicast$descriptor());

    private ExportedConnectionManager() {
    }

    /** {@code rdma_create_event_channel}: NULL with errno on failure. */
    public static MemorySegment rdma_create_event_channel(MemorySegment errnoState) {
        try {
            return (MemorySegment) RDMA_CREATE_EVENT_CHANNEL.invokeExact(errnoState);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_create_id}: -1 with errno on failure. */
    public static int rdma_create_id(MemorySegment errnoState, MemorySegment channel, MemorySegment id, MemorySegment context, int ps) {
        try {
            return (int) RDMA_CREATE_ID.invokeExact(errnoState, channel, id, context, ps);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_bind_addr}: -1 with errno on failure. */
    public static int rdma_bind_addr(MemorySegment errnoState, MemorySegment id, MemorySegment addr) {
        try {
            return (int) RDMA_BIND_ADDR.invokeExact(errnoState, id, addr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_listen}: -1 with errno on failure. */
    public static int rdma_listen(MemorySegment errnoState, MemorySegment id, int backlog) {
        try {
            return (int) RDMA_LISTEN.invokeExact(errnoState, id, backlog);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_resolve_addr}: -1 with errno on failure. */
    public static int rdma_resolve_addr(MemorySegment errnoState, MemorySegment id, MemorySegment src, MemorySegment dst, int timeoutMs) {
        try {
            return (int) RDMA_RESOLVE_ADDR.invokeExact(errnoState, id, src, dst, timeoutMs);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_resolve_route}: -1 with errno on failure. */
    public static int rdma_resolve_route(MemorySegment errnoState, MemorySegment id, int timeoutMs) {
        try {
            return (int) RDMA_RESOLVE_ROUTE.invokeExact(errnoState, id, timeoutMs);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_connect}: -1 with errno on failure. */
    public static int rdma_connect(MemorySegment errnoState, MemorySegment id, MemorySegment param) {
        try {
            return (int) RDMA_CONNECT.invokeExact(errnoState, id, param);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_accept}: -1 with errno on failure. */
    public static int rdma_accept(MemorySegment errnoState, MemorySegment id, MemorySegment param) {
        try {
            return (int) RDMA_ACCEPT.invokeExact(errnoState, id, param);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_reject}: -1 with errno on failure. */
    public static int rdma_reject(MemorySegment errnoState, MemorySegment id, MemorySegment privateData, byte privateDataLength) {
        try {
            return (int) RDMA_REJECT.invokeExact(errnoState, id, privateData, privateDataLength);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_establish}: -1 with errno on failure. */
    public static int rdma_establish(MemorySegment errnoState, MemorySegment id) {
        try {
            return (int) RDMA_ESTABLISH.invokeExact(errnoState, id);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_disconnect}: -1 with errno on failure. */
    public static int rdma_disconnect(MemorySegment errnoState, MemorySegment id) {
        try {
            return (int) RDMA_DISCONNECT.invokeExact(errnoState, id);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_get_cm_event}: -1 with errno on failure. */
    public static int rdma_get_cm_event(MemorySegment errnoState, MemorySegment channel, MemorySegment event) {
        try {
            return (int) RDMA_GET_CM_EVENT.invokeExact(errnoState, channel, event);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_destroy_id}: -1 with errno on failure. */
    public static int rdma_destroy_id(MemorySegment errnoState, MemorySegment id) {
        try {
            return (int) RDMA_DESTROY_ID.invokeExact(errnoState, id);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_create_qp}: -1 with errno on failure. */
    public static int rdma_create_qp(MemorySegment errnoState, MemorySegment id, MemorySegment pd, MemorySegment initAttr) {
        try {
            return (int) RDMA_CREATE_QP.invokeExact(errnoState, id, pd, initAttr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_create_qp_ex}: -1 with errno on failure. */
    public static int rdma_create_qp_ex(MemorySegment errnoState, MemorySegment id, MemorySegment initAttr) {
        try {
            return (int) RDMA_CREATE_QP_EX.invokeExact(errnoState, id, initAttr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_init_qp_attr}: -1 with errno on failure. */
    public static int rdma_init_qp_attr(MemorySegment errnoState, MemorySegment id, MemorySegment qpAttr, MemorySegment qpAttrMask) {
        try {
            return (int) RDMA_INIT_QP_ATTR.invokeExact(errnoState, id, qpAttr, qpAttrMask);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_set_option}: -1 with errno on failure. */
    public static int rdma_set_option(MemorySegment errnoState, MemorySegment id, int level, int optname, MemorySegment optval, long optlen) {
        try {
            return (int) RDMA_SET_OPTION.invokeExact(errnoState, id, level, optname, optval, optlen);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_migrate_id}: -1 with errno on failure. */
    public static int rdma_migrate_id(MemorySegment errnoState, MemorySegment id, MemorySegment channel) {
        try {
            return (int) RDMA_MIGRATE_ID.invokeExact(errnoState, id, channel);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_join_multicast}: -1 with errno on failure. */
    public static int rdma_join_multicast(MemorySegment errnoState, MemorySegment id, MemorySegment addr, MemorySegment context) {
        try {
            return (int) RDMA_JOIN_MULTICAST.invokeExact(errnoState, id, addr, context);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code rdma_leave_multicast}: -1 with errno on failure. */
    public static int rdma_leave_multicast(MemorySegment errnoState, MemorySegment id, MemorySegment addr) {
        try {
            return (int) RDMA_LEAVE_MULTICAST.invokeExact(errnoState, id, addr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
