package io.rdma4j.bindings.shim;

import io.rdma4j.bindings.verbs.RdmaCore;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The exported libibverbs functions that report failure only through {@code errno} (they return NULL or -1),
 * bound with errno capture. jextract's own handles for them do not capture errno, so rdma4j never calls those.
 * Verbs that return their errno value directly (ibv_modify_qp, ibv_dereg_mr, ibv_destroy_*, …) need no capture
 * and are called through the generated {@code RdmaCore} methods.
 *
 * <p>Each method takes the capture-state segment ({@link Errno#state()}) first. Stateless and thread-safe.
 */
public final class ExportedVerbs {

    private static final MethodHandle GET_DEVICE_LIST = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_get_device_list$address(), RdmaCore.ibv_get_device_list$descriptor());
    private static final MethodHandle OPEN_DEVICE = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_open_device$address(), RdmaCore.ibv_open_device$descriptor());
    private static final MethodHandle ALLOC_PD = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_alloc_pd$address(), RdmaCore.ibv_alloc_pd$descriptor());
    private static final MethodHandle REG_MR_IOVA2 = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_reg_mr_iova2$address(), RdmaCore.ibv_reg_mr_iova2$descriptor());
    private static final MethodHandle CREATE_COMP_CHANNEL = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_create_comp_channel$address(), RdmaCore.ibv_create_comp_channel$descriptor());
    private static final MethodHandle CREATE_CQ = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_create_cq$address(), RdmaCore.ibv_create_cq$descriptor());
    private static final MethodHandle CREATE_QP = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_create_qp$address(), RdmaCore.ibv_create_qp$descriptor());
    private static final MethodHandle CREATE_SRQ = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_create_srq$address(), RdmaCore.ibv_create_srq$descriptor());
    private static final MethodHandle CREATE_AH = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_create_ah$address(), RdmaCore.ibv_create_ah$descriptor());
    private static final MethodHandle GET_CQ_EVENT = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_get_cq_event$address(), RdmaCore.ibv_get_cq_event$descriptor());
    private static final MethodHandle GET_ASYNC_EVENT = Downcalls.exportedCapturingErrno(
            RdmaCore.ibv_get_async_event$address(), RdmaCore.ibv_get_async_event$descriptor());

    private ExportedVerbs() {
    }

    /** {@code ibv_get_device_list(num_devices)}: NULL with errno on failure (e.g. ENOSYS without the kernel ABI). */
    public static MemorySegment ibv_get_device_list(MemorySegment errnoState, MemorySegment numDevices) {
        try {
            return (MemorySegment) GET_DEVICE_LIST.invokeExact(errnoState, numDevices);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_open_device(device)}: NULL with errno on failure. */
    public static MemorySegment ibv_open_device(MemorySegment errnoState, MemorySegment device) {
        try {
            return (MemorySegment) OPEN_DEVICE.invokeExact(errnoState, device);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_alloc_pd(context)}: NULL with errno on failure. */
    public static MemorySegment ibv_alloc_pd(MemorySegment errnoState, MemorySegment context) {
        try {
            return (MemorySegment) ALLOC_PD.invokeExact(errnoState, context);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_reg_mr_iova2(pd, addr, length, iova, access)}: NULL with errno on failure. rdma4j registers all
     * memory through this verb: the exported {@code ibv_reg_mr} drops the optional access flags, which the
     * {@code ibv_reg_mr} macro only routes here when they are set.
     */
    public static MemorySegment ibv_reg_mr_iova2(MemorySegment errnoState, MemorySegment pd, MemorySegment address,
                                                 long length, long iova, int access) {
        try {
            return (MemorySegment) REG_MR_IOVA2.invokeExact(errnoState, pd, address, length, iova, access);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_create_comp_channel(context)}: NULL with errno on failure. */
    public static MemorySegment ibv_create_comp_channel(MemorySegment errnoState, MemorySegment context) {
        try {
            return (MemorySegment) CREATE_COMP_CHANNEL.invokeExact(errnoState, context);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_create_cq(context, cqe, cq_context, channel, comp_vector)}: NULL with errno on failure. */
    public static MemorySegment ibv_create_cq(MemorySegment errnoState, MemorySegment context, int cqe,
                                              MemorySegment cqContext, MemorySegment channel, int compVector) {
        try {
            return (MemorySegment) CREATE_CQ.invokeExact(errnoState, context, cqe, cqContext, channel, compVector);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_create_qp(pd, qp_init_attr)}: NULL with errno on failure; fills in the granted caps. */
    public static MemorySegment ibv_create_qp(MemorySegment errnoState, MemorySegment pd, MemorySegment initAttr) {
        try {
            return (MemorySegment) CREATE_QP.invokeExact(errnoState, pd, initAttr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_create_srq(pd, srq_init_attr)}: NULL with errno on failure. */
    public static MemorySegment ibv_create_srq(MemorySegment errnoState, MemorySegment pd, MemorySegment initAttr) {
        try {
            return (MemorySegment) CREATE_SRQ.invokeExact(errnoState, pd, initAttr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_create_ah(pd, ah_attr)}: NULL with errno on failure. */
    public static MemorySegment ibv_create_ah(MemorySegment errnoState, MemorySegment pd, MemorySegment ahAttr) {
        try {
            return (MemorySegment) CREATE_AH.invokeExact(errnoState, pd, ahAttr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_get_cq_event(channel, &cq, &cq_context)}: 0, or -1 with errno (EAGAIN on a non-blocking fd). */
    public static int ibv_get_cq_event(MemorySegment errnoState, MemorySegment channel, MemorySegment cq,
                                       MemorySegment cqContext) {
        try {
            return (int) GET_CQ_EVENT.invokeExact(errnoState, channel, cq, cqContext);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_get_async_event(context, event)}: 0, or -1 with errno (EAGAIN on a non-blocking fd). */
    public static int ibv_get_async_event(MemorySegment errnoState, MemorySegment context, MemorySegment event) {
        try {
            return (int) GET_ASYNC_EVENT.invokeExact(errnoState, context, event);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
