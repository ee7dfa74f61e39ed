package io.rdma4j.bindings.shim;

import static io.rdma4j.bindings.verbs.RdmaCore.EINVAL;
import static io.rdma4j.bindings.verbs.RdmaCore.ENOSYS;
import static io.rdma4j.bindings.verbs.RdmaCore.EOPNOTSUPP;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_INIT_ATTR_PD;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_SRQT_BASIC;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_SRQ_INIT_ATTR_PD;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_SRQ_INIT_ATTR_TYPE;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_context;
import io.rdma4j.bindings.verbs.ibv_device_attr_ex;
import io.rdma4j.bindings.verbs.ibv_port_attr;
import io.rdma4j.bindings.verbs.ibv_qp_init_attr_ex;
import io.rdma4j.bindings.verbs.ibv_query_device_ex_input;
import io.rdma4j.bindings.verbs.ibv_srq_init_attr_ex;
import io.rdma4j.bindings.verbs.verbs_context;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The {@code static inline} verbs that dispatch through {@code struct verbs_context}, the extended operations
 * table that providers place in front of {@code struct ibv_context}.
 *
 * <p>{@link #verbs_get_ctx} is the C helper re-done in Java: check {@code abi_compat}, step back from the
 * {@code ibv_context} to the enclosing {@code verbs_context}, and, before an entry is used, check that the
 * provider's {@code sz} covers it (the struct grows at its front, so older providers have fewer entries). Each
 * verb falls back exactly as its inline C version does (e.g. the full {@code ibv_query_port} falls back to the
 * exported compat symbol, which fills only the old layout).
 *
 * <p>Stateless and thread-safe.
 */
public final class VerbsContext {

    private static final long SIZE = verbs_context.layout().byteSize();
    private static final long CONTEXT_OFFSET = verbs_context.context$offset();
    private static final long CONTEXT_SIZE = ibv_context.layout().byteSize();
    /** {@code __VERBS_ABI_IS_EXTENDED}: {@code (void *)UINTPTR_MAX}. */
    private static final long ABI_IS_EXTENDED = -1L;

    private static final MethodHandle QUERY_PORT = Downcalls.pointer(verbs_context.query_port.descriptor());
    private static final MethodHandle QUERY_DEVICE_EX = Downcalls.pointer(verbs_context.query_device_ex.descriptor());
    private static final MethodHandle CREATE_CQ_EX =
            Downcalls.pointerCapturingErrno(verbs_context.create_cq_ex.descriptor());
    private static final MethodHandle CREATE_QP_EX =
            Downcalls.pointerCapturingErrno(verbs_context.create_qp_ex.descriptor());
    private static final MethodHandle CREATE_SRQ_EX =
            Downcalls.pointerCapturingErrno(verbs_context.create_srq_ex.descriptor());

    private VerbsContext() {
    }

    /**
     * {@code verbs_get_ctx(ctx)}: the {@code verbs_context} around {@code context}, or NULL for a legacy provider.
     */
    public static MemorySegment verbs_get_ctx(MemorySegment context) {
        MemorySegment ctx = context.reinterpret(CONTEXT_SIZE);
        if (ibv_context.abi_compat(ctx).address() != ABI_IS_EXTENDED) {
            return MemorySegment.NULL;
        }
        return MemorySegment.ofAddress(context.address() - CONTEXT_OFFSET).reinterpret(SIZE);
    }

    /**
     * {@code verbs_get_ctx_op(ctx, op)} followed by the read of {@code vctx->op}: the provider's function for the
     * entry at {@code entryOffset} of {@code verbs_context}, or NULL when the provider lacks it.
     */
    static MemorySegment entry(MemorySegment context, long entryOffset) {
        MemorySegment vctx = verbs_get_ctx(context);
        if (vctx.address() == 0 || verbs_context.sz(vctx) < SIZE - entryOffset) {
            return MemorySegment.NULL;
        }
        return vctx.get(ValueLayout.ADDRESS, entryOffset);
    }

    /** The full {@code ibv_query_port(context, port, attr)} (the macro's path, not the compat symbol's): 0 or an errno. */
    public static int ibv_query_port(MemorySegment context, byte portNum, MemorySegment portAttr) {
        MemorySegment fn = entry(context, verbs_context.query_port$offset());
        if (fn.address() == 0) {
            portAttr.fill((byte) 0);
            return RdmaCore.ibv_query_port(context, portNum, portAttr);
        }
        try {
            return (int) QUERY_PORT.invokeExact(fn, context, portNum, portAttr, ibv_port_attr.layout().byteSize());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_query_device_ex(context, input, attr)}: 0 or an errno; falls back to {@code ibv_query_device}. */
    public static int ibv_query_device_ex(MemorySegment context, MemorySegment input, MemorySegment attr) {
        if (input.address() != 0 && ibv_query_device_ex_input.comp_mask(
                input.reinterpret(ibv_query_device_ex_input.layout().byteSize())) != 0) {
            return EINVAL();
        }
        MemorySegment fn = entry(context, verbs_context.query_device_ex$offset());
        if (fn.address() != 0) {
            int ret;
            try {
                ret = (int) QUERY_DEVICE_EX.invokeExact(fn, context, input, attr, ibv_device_attr_ex.layout().byteSize());
            } catch (Throwable t) {
                throw Downcalls.rethrow(t);
            }
            if (ret != EOPNOTSUPP() && ret != ENOSYS()) {
                return ret;
            }
        }
        attr.fill((byte) 0);
        return RdmaCore.ibv_query_device(context, ibv_device_attr_ex.orig_attr(attr));
    }

    /** {@code ibv_create_cq_ex(context, attr)}: NULL with errno on failure (EOPNOTSUPP without the entry). */
    public static MemorySegment ibv_create_cq_ex(MemorySegment errnoState, MemorySegment context, MemorySegment attr) {
        MemorySegment fn = entry(context, verbs_context.create_cq_ex$offset());
        if (fn.address() == 0) {
            Errno.set(errnoState, EOPNOTSUPP());
            return MemorySegment.NULL;
        }
        try {
            return (MemorySegment) CREATE_CQ_EX.invokeExact(fn, errnoState, context, attr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_create_qp_ex(context, attr)}: NULL with errno on failure. With only {@code IBV_QP_INIT_ATTR_PD}
     * in {@code comp_mask} this is plain {@code ibv_create_qp}, as in C.
     */
    public static MemorySegment ibv_create_qp_ex(MemorySegment errnoState, MemorySegment context, MemorySegment attr) {
        if (ibv_qp_init_attr_ex.comp_mask(attr) == IBV_QP_INIT_ATTR_PD()) {
            return ExportedVerbs.ibv_create_qp(errnoState, ibv_qp_init_attr_ex.pd(attr), attr);
        }
        MemorySegment fn = entry(context, verbs_context.create_qp_ex$offset());
        if (fn.address() == 0) {
            Errno.set(errnoState, EOPNOTSUPP());
            return MemorySegment.NULL;
        }
        try {
            return (MemorySegment) CREATE_QP_EX.invokeExact(fn, errnoState, context, attr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_create_srq_ex(context, attr)}: NULL with errno on failure. A basic SRQ with a PD is plain
     * {@code ibv_create_srq}, as in C.
     */
    public static MemorySegment ibv_create_srq_ex(MemorySegment errnoState, MemorySegment context, MemorySegment attr) {
        int mask = ibv_srq_init_attr_ex.comp_mask(attr);
        int pdAndType = IBV_SRQ_INIT_ATTR_PD() | IBV_SRQ_INIT_ATTR_TYPE();
        if ((mask & ~pdAndType) == 0 && (mask & IBV_SRQ_INIT_ATTR_PD()) != 0
                && ((mask & IBV_SRQ_INIT_ATTR_TYPE()) == 0 || ibv_srq_init_attr_ex.srq_type(attr) == IBV_SRQT_BASIC())) {
            return ExportedVerbs.ibv_create_srq(errnoState, ibv_srq_init_attr_ex.pd(attr), attr);
        }
        MemorySegment fn = entry(context, verbs_context.create_srq_ex$offset());
        if (fn.address() == 0) {
            Errno.set(errnoState, EOPNOTSUPP());
            return MemorySegment.NULL;
        }
        try {
            return (MemorySegment) CREATE_SRQ_EX.invokeExact(fn, errnoState, context, attr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
