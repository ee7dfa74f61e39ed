package io.rdma4j.bindings.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_context;
import io.rdma4j.bindings.verbs.ibv_context_ops;
import io.rdma4j.bindings.verbs.ibv_cq;
import io.rdma4j.bindings.verbs.ibv_qp;
import io.rdma4j.bindings.verbs.ibv_send_wr;
import io.rdma4j.bindings.verbs.ibv_sge;
import io.rdma4j.bindings.verbs.ibv_wc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The inline verbs reach the provider through {@code ibv_context.ops}, with every argument intact. Upcall stubs
 * stand in for a provider's functions in a fake context, so no device is needed.
 */
class ContextOpsDispatchTest {

    @BeforeAll
    static void libraries() {
        NativeLibraries.require();
    }

    @Test
    void postSendHandsTheProviderTheExactWorkRequest() {
        try (Arena arena = Arena.ofConfined()) {
            List<Object> seen = new ArrayList<>();
            MemorySegment context = arena.allocate(ibv_context.layout());
            MemorySegment qp = arena.allocate(ibv_qp.layout());
            ibv_qp.context(qp, context);
            ibv_context_ops.post_send(ibv_context.ops(context), ibv_context_ops.post_send.allocate((q, wrPtr, bad) -> {
                MemorySegment wr = wrPtr.reinterpret(ibv_send_wr.layout().byteSize());
                MemorySegment sge = ibv_send_wr.sg_list(wr).reinterpret(ibv_sge.layout().byteSize());
                MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(wr));
                seen.addAll(List.of(q.address(), ibv_send_wr.wr_id(wr), ibv_send_wr.opcode(wr),
                        ibv_send_wr.send_flags(wr), ibv_send_wr.num_sge(wr), ibv_sge.addr(sge), ibv_sge.length(sge),
                        ibv_sge.lkey(sge), ibv_send_wr.wr.rdma.remote_addr(rdma), ibv_send_wr.wr.rdma.rkey(rdma),
                        ibv_send_wr.next(wr).address()));
                bad.reinterpret(ValueLayout.ADDRESS.byteSize()).set(ValueLayout.ADDRESS, 0, wrPtr);
                return RdmaCore.ENOMEM();
            }, arena));

            MemorySegment sge = arena.allocate(ibv_sge.layout());
            ibv_sge.addr(sge, 0x7f00_1234_5000L);
            ibv_sge.length(sge, 4096);
            ibv_sge.lkey(sge, 0xabcd);
            MemorySegment wr = arena.allocate(ibv_send_wr.layout());
            ibv_send_wr.wr_id(wr, 0x1122_3344_5566_7788L);
            ibv_send_wr.opcode(wr, RdmaCore.IBV_WR_RDMA_WRITE());
            ibv_send_wr.send_flags(wr, RdmaCore.IBV_SEND_SIGNALED() | RdmaCore.IBV_SEND_FENCE());
            ibv_send_wr.sg_list(wr, sge);
            ibv_send_wr.num_sge(wr, 1);
            MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(wr));
            ibv_send_wr.wr.rdma.remote_addr(rdma, 0x5500_0000_0040L);
            ibv_send_wr.wr.rdma.rkey(rdma, 0x7777);
            MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);

            int ret = ContextOps.post(ContextOps.postSendFunction(context), qp.address(), wr.address(),
                    badWr.address());

            assertEquals(RdmaCore.ENOMEM(), ret, "the provider's return value is passed back");
            assertEquals(wr.address(), badWr.get(ValueLayout.ADDRESS, 0).address(), "bad_wr written by the provider");
            assertEquals(List.of(qp.address(), 0x1122_3344_5566_7788L, RdmaCore.IBV_WR_RDMA_WRITE(),
                    RdmaCore.IBV_SEND_SIGNALED() | RdmaCore.IBV_SEND_FENCE(), 1, 0x7f00_1234_5000L, 4096, 0xabcd,
                    0x5500_0000_0040L, 0x7777, 0L), seen);
        }
    }

    @Test
    void pollCqAndNotifyReachTheProvider() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment context = arena.allocate(ibv_context.layout());
            MemorySegment cq = arena.allocate(ibv_cq.layout());
            ibv_cq.context(cq, context);
            MemorySegment ops = ibv_context.ops(context);
            ibv_context_ops.poll_cq(ops, ibv_context_ops.poll_cq.allocate((c, n, wcPtr) -> {
                MemorySegment wcs = wcPtr.reinterpret(ibv_wc.layout().byteSize() * n);
                for (int i = 0; i < 2; i++) {
                    MemorySegment wc = ibv_wc.asSlice(wcs, i);
                    ibv_wc.wr_id(wc, 100 + i);
                    ibv_wc.byte_len(wc, n);
                }
                return 2;
            }, arena));
            int[] armed = {-1};
            ibv_context_ops.req_notify_cq(ops, ibv_context_ops.req_notify_cq.allocate((c, solicited) -> {
                armed[0] = solicited;
                return 0;
            }, arena));

            MemorySegment wcs = ibv_wc.allocateArray(4, arena);
            assertEquals(2, ContextOps.ibv_poll_cq(ContextOps.pollCqFunction(context), cq.address(), 4,
                    wcs.address()));
            assertEquals(100, ibv_wc.wr_id(ibv_wc.asSlice(wcs, 0)));
            assertEquals(101, ibv_wc.wr_id(ibv_wc.asSlice(wcs, 1)));
            assertEquals(4, ibv_wc.byte_len(ibv_wc.asSlice(wcs, 1)), "num_entries reached the provider");
            assertEquals(0, ContextOps.ibv_req_notify_cq(ContextOps.reqNotifyCqFunction(context), cq, 1));
            assertEquals(1, armed[0]);
        }
    }

    @Test
    void allocMwWithoutProviderSupportFailsWithEopnotsupp() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment context = arena.allocate(ibv_context.layout());
            MemorySegment pd = arena.allocate(io.rdma4j.bindings.verbs.ibv_pd.layout());
            io.rdma4j.bindings.verbs.ibv_pd.context(pd, context);
            MemorySegment state = Errno.state();
            Errno.set(state, 0);
            assertEquals(0, ContextOps.ibv_alloc_mw(state, pd, RdmaCore.IBV_MW_TYPE_1()).address());
            assertEquals(RdmaCore.EOPNOTSUPP(), Errno.get(state));
        }
    }
}
