package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdma4j.bindings.shim.NativeLibraries;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_recv_wr;
import io.rdma4j.bindings.verbs.ibv_send_wr;
import io.rdma4j.bindings.verbs.ibv_sge;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Unit tests: what the batches write into native work requests (no device). */
class WorkRequestBatchTest {

    @BeforeAll
    static void libraries() {
        NativeLibraries.require();
    }

    @Test
    void sendRequestsCarryOpcodeFlagsRemoteAddressAndGatherEntries() {
        try (SendWorkRequests sends = new SendWorkRequests(4, 2)) {
            sends.clear()
                    .rdmaWrite(11, 0x1000_2000L, 0x77).gatherUnchecked(0xA000, 100, 5).gatherUnchecked(0xB000, 200, 6)
                    .signaled().fence()
                    .sendWithImmediate(12, 0x01020304).solicited();
            MemorySegment first = sends.requests;
            MemorySegment wr0 = first.asSlice(0, ibv_send_wr.layout().byteSize());
            MemorySegment wr1 = first.asSlice(ibv_send_wr.layout().byteSize(), ibv_send_wr.layout().byteSize());
            assertEquals(11, ibv_send_wr.wr_id(wr0));
            assertEquals(RdmaCore.IBV_WR_RDMA_WRITE(), ibv_send_wr.opcode(wr0));
            assertEquals(RdmaCore.IBV_SEND_SIGNALED() | RdmaCore.IBV_SEND_FENCE(), ibv_send_wr.send_flags(wr0));
            MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(wr0));
            assertEquals(0x1000_2000L, ibv_send_wr.wr.rdma.remote_addr(rdma));
            assertEquals(0x77, ibv_send_wr.wr.rdma.rkey(rdma));
            assertEquals(2, ibv_send_wr.num_sge(wr0));
            MemorySegment sges = ibv_send_wr.sg_list(wr0).reinterpret(2 * ibv_sge.layout().byteSize());
            assertEquals(0xB000, ibv_sge.addr(ibv_sge.asSlice(sges, 1)));
            assertEquals(200, ibv_sge.length(ibv_sge.asSlice(sges, 1)));
            assertEquals(6, ibv_sge.lkey(ibv_sge.asSlice(sges, 1)));
            assertEquals(wr1.address(), ibv_send_wr.next(wr0).address(), "linked to the next request");
            assertEquals(0, ibv_send_wr.next(wr1).address(), "the last request ends the list");
            assertEquals(RdmaCore.IBV_WR_SEND_WITH_IMM(), ibv_send_wr.opcode(wr1));
            assertEquals(Integer.reverseBytes(0x01020304), ibv_send_wr.imm_data(wr1), "immediate data is big-endian");
            assertEquals(RdmaCore.IBV_SEND_SOLICITED(), ibv_send_wr.send_flags(wr1), "flags start clear per request");
            assertEquals(0, ibv_send_wr.num_sge(wr1));
        }
    }

    @Test
    void aRefilledBatchForgetsThePreviousRequests() {
        try (ReceiveWorkRequests receives = new ReceiveWorkRequests(2, 1)) {
            receives.clear().add(1).scatterUnchecked(0x10, 8, 1).add(2).scatterUnchecked(0x20, 8, 2);
            receives.clear().add(3);
            MemorySegment first = receives.requests;
            assertEquals(1, receives.count());
            assertEquals(3, ibv_recv_wr.wr_id(first));
            assertEquals(0, ibv_recv_wr.num_sge(first));
            assertEquals(0, ibv_recv_wr.next(first).address());
        }
    }

    @Test
    void aRefilledSendRequestStartsFromZero() {
        long size = ibv_send_wr.layout().byteSize();
        try (SendWorkRequests sends = new SendWorkRequests(2, 1)) {
            sends.clear().compareAndSwap(1, -8L, -1, -1L, -1L).gatherUnchecked(-1L, 8, -1).signaled().fence()
                    .sendWithImmediate(2, -1).solicited().inline();
            sends.clear().send(3);
            MemorySegment wr0 = sends.requests.asSlice(0, size);
            MemorySegment expected = Arena.ofAuto().allocate(size);
            ibv_send_wr.wr_id(expected, 3);
            ibv_send_wr.opcode(expected, RdmaCore.IBV_WR_SEND());
            ibv_send_wr.sg_list(expected, ibv_send_wr.sg_list(wr0));
            assertEquals(-1, wr0.mismatch(expected), "every other byte of the refilled request is zero");
            assertEquals(1, sends.count());
        }
    }

    @Test
    void limitsAreCheckedBeforeAnyVerb() {
        try (SendWorkRequests sends = new SendWorkRequests(1, 1)) {
            assertThrows(IllegalStateException.class, () -> sends.post(MemorySegment.NULL, 0, "ibv_post_send"),
                    "empty: refused before the verb");
            assertThrows(IllegalStateException.class, sends::signaled, "no request to flag");
            sends.clear().send(1).gatherUnchecked(0, 1, 0);
            assertThrows(IllegalStateException.class, () -> sends.gatherUnchecked(0, 1, 0), "too many entries");
            assertThrows(IllegalStateException.class, () -> sends.send(2), "full");
        }
        assertThrows(IllegalArgumentException.class, () -> new SendWorkRequests(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new WorkCompletions(0));
    }

    @Test
    void completionsAreReadOnlyWithinThePollsCountAndUntilClosed() {
        WorkCompletions completions = new WorkCompletions(4);
        assertThrows(IndexOutOfBoundsException.class, () -> completions.workRequestId(0), "nothing polled yet");
        completions.count(2);
        assertEquals(0, completions.workRequestId(1), "the array starts zeroed");
        assertThrows(IndexOutOfBoundsException.class, () -> completions.byteLength(2), "beyond the poll's count");
        assertThrows(IndexOutOfBoundsException.class, () -> completions.isSuccess(-1));
        completions.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> completions.isSuccess(0));
        assertEquals("the completions batch is closed", closed.getMessage());
        assertThrows(IllegalStateException.class, () -> completions.pkeyIndex(0), "the UD fields too");
        assertThrows(IllegalStateException.class, completions::arrayAddress, "and the next poll");
    }

    @Test
    void theBadRequestIndexComesFromTheProvidersPointer() {
        try (ReceiveWorkRequests receives = new ReceiveWorkRequests(3, 0)) {
            long first = receives.clear().add(1).add(2).add(3).requests.address();
            assertEquals(0, receives.badRequest().get(ValueLayout.JAVA_LONG, 0), "NULL before the first post");
            receives.badRequest().set(ValueLayout.JAVA_LONG, 0, first + 2 * ibv_recv_wr.layout().byteSize());
            assertEquals(2, receives.takeBadIndex());
            assertEquals(0, receives.badRequest().get(ValueLayout.JAVA_LONG, 0), "NULL again for the next post");
            assertEquals(-1, receives.takeBadIndex(), "a failure that named no request");
        }
    }

    /** The provider copies inline bytes from raw addresses itself: a bad unchecked one would crash the process. */
    @Test
    void anUncheckedEntryIsNeverInline() {
        try (SendWorkRequests sends = new SendWorkRequests(3, 2)) {
            sends.clear().send(1).gatherUnchecked(0xDEAD_0000L, 64, 0);
            IllegalStateException e = assertThrows(IllegalStateException.class, sends::inline);
            assertEquals("ibv_send_wr: an inline request cannot have an entry from gatherUnchecked (the provider would"
                    + " copy from its raw address): gather from a region, or use inline(MemorySegment)", e.getMessage());
            assertThrows(IllegalStateException.class, () -> sends.inline(Arena.ofAuto().allocate(8)));
            assertEquals(0, ibv_send_wr.send_flags(sends.requests.asSlice(0, ibv_send_wr.layout().byteSize())),
                    "the request stayed as it was");
            sends.send(2).inline(Arena.ofAuto().allocate(8));
            assertThrows(IllegalStateException.class, () -> sends.gatherUnchecked(0xDEAD_0000L, 64, 0));
            sends.send(3).gatherUnchecked(0xDEAD_0000L, 64, 0); // a new request starts clean
        }
    }

    @Test
    void inlineDataIsCopiedIntoTheBatchAtOnceFromAnySegment() {
        long size = ibv_send_wr.layout().byteSize();
        try (SendWorkRequests sends = new SendWorkRequests(2, 2); Arena arena = Arena.ofConfined()) {
            MemorySegment first = arena.allocate(300);
            first.fill((byte) 1);
            byte[] second = new byte[300];
            java.util.Arrays.fill(second, (byte) 2);
            // 600 bytes outgrow the batch's first staging area: the first entry must keep pointing at its bytes.
            sends.clear().send(1).inline(first).inline(MemorySegment.ofArray(second)).signaled();
            first.fill((byte) 9);
            MemorySegment wr = sends.requests.asSlice(0, size);
            assertEquals(RdmaCore.IBV_SEND_INLINE() | RdmaCore.IBV_SEND_SIGNALED(), ibv_send_wr.send_flags(wr));
            assertEquals(2, ibv_send_wr.num_sge(wr));
            MemorySegment sges = ibv_send_wr.sg_list(wr).reinterpret(2 * ibv_sge.layout().byteSize());
            for (int i = 0; i < 2; i++) {
                MemorySegment sge = sges.asSlice(i * ibv_sge.layout().byteSize(), ibv_sge.layout().byteSize());
                assertEquals(300, ibv_sge.length(sge));
                MemorySegment bytes = MemorySegment.ofAddress(ibv_sge.addr(sge)).reinterpret(300);
                for (long at = 0; at < 300; at++) {
                    assertEquals(i + 1, bytes.get(ValueLayout.JAVA_BYTE, at), "entry " + i + " byte " + at);
                }
            }
        }
        MemorySegment freed;
        try (Arena arena = Arena.ofConfined()) {
            freed = arena.allocate(8);
        }
        try (SendWorkRequests sends = new SendWorkRequests(1, 1)) {
            assertThrows(IllegalStateException.class, () -> sends.clear().send(1).inline(freed), "a closed arena");
        }
    }

    @Test
    void anAtomicNeedsAnAlignedTargetAndAnEightByteResultEntry() {
        try (SendWorkRequests sends = new SendWorkRequests(2, 1)) {
            IllegalArgumentException misaligned = assertThrows(IllegalArgumentException.class,
                    () -> sends.clear().fetchAndAdd(1, 0x1004, 7, 1));
            assertEquals("wr.atomic.remote_addr must be 8-byte aligned, not 0x1004", misaligned.getMessage());
            assertEquals(0, sends.count(), "nothing half-built was left in the batch");
            sends.compareAndSwap(2, 0x1008, 7, 0, 1);
            assertThrows(IllegalArgumentException.class,
                    () -> sends.gather(null, 0, 4), "the old value is 8 bytes");
        }
    }

    /**
     * Only an atomic's own entry must be 8 bytes: the request after it, in the same fill or the next, takes any length
     * (the check once outlived its atomic, refusing a messaging channel's SEND after a fetch-and-add). A region-less
     * entry fails further on, at its region, which shows it passed the length check.
     */
    @Test
    void theRequestAfterAnAtomicTakesEntriesOfAnyLength() {
        try (SendWorkRequests sends = new SendWorkRequests(2, 1)) {
            sends.clear().fetchAndAdd(1, 0x1008, 7, 1);
            assertThrows(NullPointerException.class, () -> sends.send(2).gather(null, 0, 25), "in the same fill");
            assertThrows(NullPointerException.class, () -> sends.clear().send(3).gather(null, 0, 25), "refilled");
            assertThrows(IllegalArgumentException.class, () -> sends.clear().fetchAndAdd(4, 0x1008, 7, 1)
                    .gather(null, 0, 25), "still checked for the next atomic");
        }
    }

    @Test
    void aClosedBatchCannotBeUsed() {
        SendWorkRequests sends = new SendWorkRequests(1, 1);
        sends.close();
        sends.close();
        assertThrows(IllegalStateException.class, () -> sends.clear().send(1));
    }
}
