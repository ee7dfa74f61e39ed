package io.rdma4j.bindings.shim;

import static io.rdma4j.bindings.verbs.RdmaCore.EINVAL;
import static io.rdma4j.bindings.verbs.RdmaCore.EOPNOTSUPP;
import static io.rdma4j.bindings.verbs.RdmaCore.EPERM;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_MW_TYPE_1;

import io.rdma4j.bindings.verbs.ibv_context;
import io.rdma4j.bindings.verbs.ibv_context_ops;
import io.rdma4j.bindings.verbs.ibv_mr;
import io.rdma4j.bindings.verbs.ibv_mw;
import io.rdma4j.bindings.verbs.ibv_mw_bind;
import io.rdma4j.bindings.verbs.ibv_mw_bind_info;
import io.rdma4j.bindings.verbs.ibv_pd;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The {@code static inline} verbs of {@code <infiniband/verbs.h>} that dispatch through the provider's
 * {@code ibv_context.ops} table: jextract cannot bind them because there is no exported symbol to call.
 *
 * <p>Each verb takes the provider's function pointer first. Read it once per object with the {@code *Function}
 * readers (e.g. when a QP is created) and keep it: the C macro reads it on every call, but the table of a context
 * never changes, and an extra pointer chase per post is measurable. Each method otherwise does exactly what the
 * inline function in rdma-core 44 does, including its argument checks.
 *
 * <p>Stateless and thread-safe; the thread-safety of a call is the provider's (libibverbs: posting to one QP or
 * polling one CQ from several threads is safe).
 */
public final class ContextOps {

    /**
     * {@code -Drdma4j.criticalDowncalls=true} binds post and poll with {@code Linker.Option.critical(false)}, which
     * skips the thread-state transition of a downcall. Off by default: the benchmarks module measures both.
     */
    private static final boolean CRITICAL = Boolean.getBoolean("rdma4j.criticalDowncalls");

    /**
     * The data path's verbs take their pointers as 64-bit addresses ({@code JAVA_LONG}, the same register as a
     * pointer in every 64-bit ABI): a {@link MemorySegment} argument is checked and unwrapped on every call, ~1 ns of a
     * ~9 ns post through a stub provider. The callers keep what the addresses point to reachable for the call.
     */
    private static final FunctionDescriptor THREE_POINTERS = FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);
    private static final MethodHandle POST = dataPath(THREE_POINTERS);
    private static final MethodHandle POLL_CQ = dataPath(FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
    private static final MethodHandle REQ_NOTIFY_CQ = Downcalls.pointer(ibv_context_ops.req_notify_cq.descriptor());
    private static final MethodHandle ALLOC_MW =
            Downcalls.pointerCapturingErrno(ibv_context_ops.alloc_mw.descriptor());
    private static final MethodHandle DEALLOC_MW = Downcalls.pointer(ibv_context_ops.dealloc_mw.descriptor());
    private static final MethodHandle BIND_MW = Downcalls.pointer(ibv_context_ops.bind_mw.descriptor());

    private ContextOps() {
    }

    private static MethodHandle dataPath(FunctionDescriptor descriptor) {
        return CRITICAL ? Downcalls.criticalPointer(descriptor) : Downcalls.pointer(descriptor);
    }

    /**
     * Returns the {@code ops} table embedded in a context.
     *
     * @param context an {@code ibv_context *} as returned by {@code ibv_open_device} (any segment size)
     */
    public static MemorySegment ops(MemorySegment context) {
        return ibv_context.ops(context.reinterpret(ibv_context.layout().byteSize()));
    }

    /** {@code context->ops.post_send}. */
    public static MemorySegment postSendFunction(MemorySegment context) {
        return ibv_context_ops.post_send(ops(context));
    }

    /** {@code context->ops.post_recv}. */
    public static MemorySegment postRecvFunction(MemorySegment context) {
        return ibv_context_ops.post_recv(ops(context));
    }

    /** {@code context->ops.post_srq_recv}. */
    public static MemorySegment postSrqRecvFunction(MemorySegment context) {
        return ibv_context_ops.post_srq_recv(ops(context));
    }

    /** {@code context->ops.poll_cq}. */
    public static MemorySegment pollCqFunction(MemorySegment context) {
        return ibv_context_ops.poll_cq(ops(context));
    }

    /** {@code context->ops.req_notify_cq}. */
    public static MemorySegment reqNotifyCqFunction(MemorySegment context) {
        return ibv_context_ops.req_notify_cq(ops(context));
    }

    /**
     * {@code ibv_post_send(qp, wr, bad_wr)}, {@code ibv_post_recv(qp, wr, bad_wr)} or
     * {@code ibv_post_srq_recv(srq, wr, bad_wr)}: the three share one C signature, and {@code fn} (from
     * {@link #postSendFunction}, {@link #postRecvFunction} or {@link #postSrqRecvFunction}) names the verb. Returns 0,
     * or an errno value with {@code *bad_wr} set.
     */
    public static int post(MemorySegment fn, long queue, long wr, long badWr) {
        try {
            return (int) POST.invokeExact(fn, queue, wr, badWr);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_poll_cq(cq, n, wc)}: the number of completions written to {@code wc}, or negative on error. */
    public static int ibv_poll_cq(MemorySegment fn, long cq, int numEntries, long wc) {
        try {
            return (int) POLL_CQ.invokeExact(fn, cq, numEntries, wc);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_req_notify_cq(cq, solicited_only)}: 0 or an errno value. */
    public static int ibv_req_notify_cq(MemorySegment fn, MemorySegment cq, int solicitedOnly) {
        try {
            return (int) REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_alloc_mw(pd, type)}: the new {@code ibv_mw *}, or NULL with errno in {@code errnoState}
     * ({@code EOPNOTSUPP} when the provider has no memory windows at all).
     */
    public static MemorySegment ibv_alloc_mw(MemorySegment errnoState, MemorySegment pd, int type) {
        MemorySegment pdView = pd.reinterpret(ibv_pd.layout().byteSize());
        MemorySegment fn = ibv_context_ops.alloc_mw(ops(ibv_pd.context(pdView)));
        if (fn.address() == 0) {
            Errno.set(errnoState, EOPNOTSUPP());
            return MemorySegment.NULL;
        }
        try {
            return (MemorySegment) ALLOC_MW.invokeExact(fn, errnoState, pd, type);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code ibv_dealloc_mw(mw)}: 0 or an errno value. */
    public static int ibv_dealloc_mw(MemorySegment mw) {
        MemorySegment mwView = mw.reinterpret(ibv_mw.layout().byteSize());
        MemorySegment fn = ibv_context_ops.dealloc_mw(ops(ibv_mw.context(mwView)));
        try {
            return (int) DEALLOC_MW.invokeExact(fn, mw);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_bind_mw(qp, mw, mw_bind)} for type 1 windows, with the inline function's checks: EINVAL for a
     * type 2 window or a range without an MR, EPERM when the MR belongs to another PD.
     */
    public static int ibv_bind_mw(MemorySegment qp, MemorySegment mw, MemorySegment mwBind) {
        MemorySegment mwView = mw.reinterpret(ibv_mw.layout().byteSize());
        MemorySegment bind = ibv_mw_bind.bind_info(
                mwBind.reinterpret(ibv_mw_bind.layout().byteSize()));
        if (ibv_mw.type(mwView) != IBV_MW_TYPE_1()) {
            return EINVAL();
        }
        MemorySegment mr = ibv_mw_bind_info.mr(bind);
        if (mr.address() == 0) {
            if (ibv_mw_bind_info.addr(bind) != 0
                    || ibv_mw_bind_info.length(bind) != 0) {
                return EINVAL();
            }
        } else {
            MemorySegment mrPd = ibv_mr.pd(
                    mr.reinterpret(ibv_mr.layout().byteSize()));
            if (mrPd.address() != ibv_mw.pd(mwView).address()) {
                return EPERM();
            }
        }
        MemorySegment fn = ibv_context_ops.bind_mw(ops(ibv_mw.context(mwView)));
        try {
            return (int) BIND_MW.invokeExact(fn, qp, mw, mwBind);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
