package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_qp_cap;
import io.rdma4j.bindings.verbs.ibv_qp_init_attr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Misuse that used to reach the provider with freed memory, now refused with {@link IllegalStateException}: batches
 * naming objects closed after they were added, objects closed by another thread during a post, and a parent and
 * child closed from two threads at once. Each case ran into SIGSEGV (in the provider or libibverbs) before.
 */
@Tag("device")
class MisuseTest extends PairFixture {

    MisuseTest() {
        super(4, 2);
    }

    @Test
    void aRegionClosedAfterItWasAddedToABatchIsRefusedAtPostAndNothingIsPosted() {
        MemoryRegion gone = pair.pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE));
        sends.clear().send(1).gather(gone, 0, 16).inline().signaled();
        receives.clear().add(2).scatter(gone, 0, 64);
        gone.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pair.client.postSend(sends),
                "the provider would copy the inline bytes from freed memory");
        assertTrue(e.getMessage().contains(gone.describe()) && e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> pair.server.postReceive(receives));
        assertThrows(IllegalStateException.class, () -> sends.clear().send(3).gather(gone, 0, 16), "nor added");
        assertEquals(0, pair.clientCq.poll(completions), "nothing was posted");
        try (MemoryRegion source = pair.pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE));
             MemoryRegion target = pair.pd.allocateMemory(64, ConnectedPair.REMOTE_ACCESS)) {
            pair.client.postSend(sends.clear().rdmaWrite(4, target.address(), target.rkey()).gather(source, 0, 8)
                    .signaled());
            ConnectedPair.await(pair.clientCq, completions, 1);
            assertEquals(WorkCompletionStatus.SUCCESS, completions.status(0), "the queue pair was not disturbed");
        }
    }

    /**
     * A caller's segment, registered, then its arena closed while the region stays open: an inline request from the
     * region would make the provider copy from unmapped memory (SIGSEGV), so the post refuses it. Unregistered bytes
     * go inline through the batch's own copy.
     */
    @Test
    void anInlineRequestFromARegionWhoseArenaIsClosedIsRefusedAtPost() {
        MemoryRegion region;
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            region = pair.pd.registerMemory(arena.allocate(1 << 20, 4096), Set.of(Access.LOCAL_WRITE));
            sends.clear().send(1).gather(region, 0, 16).inline().signaled();
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pair.client.postSend(sends));
        assertTrue(e.getMessage().contains(region.describe()) && e.getMessage().contains("arena is closed"),
                e.getMessage());
        assertEquals(0, pair.clientCq.poll(completions), "nothing was posted");
        assertThrows(IllegalStateException.class, () -> region.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0),
                "nor can the caller read it");
        region.close();
    }

    /** A batch larger than the queue it is posted to is refused before the provider (siw would drop the extra). */
    @Test
    void aBatchLargerThanTheGrantedQueueIsRefused() {
        int granted = pair.client.capabilities().maxSendWorkRequests();
        try (MemoryRegion region = pair.pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE));
             SendWorkRequests tooMany = new SendWorkRequests(granted + 1, 1)) {
            for (int i = 0; i <= granted; i++) {
                tooMany.send(i).gather(region, 0, 8);
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pair.client.postSend(tooMany));
            assertTrue(e.getMessage().contains("more than the " + granted + " send requests"), e.getMessage());
            assertEquals(0, pair.clientCq.poll(completions), "nothing was posted");
        }
    }

    /** A range that leaves its region is refused with the C structure and the region's size, before anything is posted. */
    @Test
    void aRangeOutsideItsRegionNamesTheFieldAndTheRegionsSize() {
        try (MemoryRegion region = pair.pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE))) {
            IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                    () -> sends.clear().send(1).gather(region, 0, 4097));
            assertEquals("ibv_sge: bytes 0 to 0 + 4097 are not inside the region's 4096 bytes", e.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> receives.clear().add(1).scatter(region, 4095, 2));
            assertThrows(IndexOutOfBoundsException.class, () -> receives.clear().add(1).scatter(region, -1, 1));
            assertThrows(IndexOutOfBoundsException.class,
                    () -> receives.clear().add(1).scatter(region, Long.MAX_VALUE, 2), "no overflow to a fit");
            sends.clear().send(2).gather(region, 0, 4096);
        }
    }

    /**
     * One thread RDMA WRITEs inline from a region, post after post, while another closes the region: the close is
     * refused while a post runs, so the writer ends with an exception naming the region, never in the provider's
     * memcpy of freed memory.
     */
    @Test
    void aRegionClosedWhileAnotherThreadPostsFromItEndsThePostsWithAnException() throws InterruptedException {
        try (MemoryRegion target = pair.pd.allocateMemory(64, ConnectedPair.REMOTE_ACCESS)) {
            for (int round = 0; round < 20; round++) {
                MemoryRegion source = pair.pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE));
                AtomicReference<Throwable> writerEnded = new AtomicReference<>();
                CountDownLatch writing = new CountDownLatch(1);
                Thread writer = Thread.ofPlatform().start(() -> {
                    try {
                        for (long id = 0; ; id++) {
                            pair.client.postSend(sends.clear().rdmaWrite(id, target.address(), target.rkey())
                                    .gather(source, 0, 32).inline().signaled());
                            ConnectedPair.await(pair.clientCq, completions, 1);
                            writing.countDown();
                        }
                    } catch (Throwable t) {
                        writerEnded.set(t);
                    }
                });
                writing.await();
                LockSupport.parkNanos(round * 50_000L);
                while (!source.isClosed()) {
                    try {
                        source.close();
                    } catch (IllegalStateException duringAPost) {
                        assertTrue(duringAPost.getMessage()
                                .contains("cannot be closed while a call on it or naming it runs"), duringAPost.getMessage());
                    }
                }
                writer.join();
                Throwable t = writerEnded.get();
                assertTrue(t instanceof IllegalStateException && t.getMessage().contains(source.describe()),
                        String.valueOf(t));
            }
        }
    }

    /**
     * The same race without inline data: the post hands only the region's key to the device, so it does not pin the
     * region (two atomic adds saved per post). The close goes through at once, and the writer ends either at a post
     * refused because the region is closed, or at the device's error completion for the dead key: never in a crash,
     * never in a success after the region was gone.
     */
    @Test
    void aRegionClosedDuringPostsThatOnlyNameItsKeyEndsInARefusalOrAnErrorCompletion() throws InterruptedException {
        try (MemoryRegion target = pair.pd.allocateMemory(64, ConnectedPair.REMOTE_ACCESS)) {
            for (int round = 0; round < 20; round++) {
                MemoryRegion source = pair.pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE));
                AtomicReference<Object> writerEnded = new AtomicReference<>();
                CountDownLatch writing = new CountDownLatch(1);
                Thread writer = Thread.ofPlatform().start(() -> {
                    try {
                        for (long id = 0; ; id++) {
                            pair.client.postSend(sends.clear().rdmaWrite(id, target.address(), target.rkey())
                                    .gather(source, 0, 32).signaled());
                            ConnectedPair.await(pair.clientCq, completions, 1);
                            if (!completions.isSuccess(0)) {
                                writerEnded.set(completions.status(0));
                                return;
                            }
                            writing.countDown();
                        }
                    } catch (Throwable t) {
                        writerEnded.set(t);
                    }
                });
                writing.await();
                LockSupport.parkNanos(round * 50_000L);
                source.close();
                writer.join();
                Object end = writerEnded.get();
                assertTrue(end instanceof WorkCompletionStatus || end instanceof IllegalStateException ise
                        && ise.getMessage().contains(source.describe()), String.valueOf(end));
                if (end instanceof WorkCompletionStatus) {
                    return; // the client's QP is in the error state now: this pair is done
                }
            }
        }
    }

    @Test
    void anAddressHandleClosedAfterItWasAddedIsRefusedAtPost() {
        GidEntry gid = context.gidTable().getFirst();
        AddressHandle ah;
        try {
            ah = pair.pd.createAddressHandle(AddressVector.ofGid(gid.gid(), gid.index(), 1));
        } catch (UnsupportedVerbException e) {
            abort("the provider has no address handles: " + e.getMessage());
            return;
        }
        try (MemoryRegion source = pair.pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE))) {
            sends.clear().send(1).gather(source, 0, 8).destination(ah, 1, 0x11111111);
            ah.close();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pair.client.postSend(sends));
            assertTrue(e.getMessage().contains(ah.describe()), e.getMessage());
        }
    }

    @Test
    void aMemoryWindowClosedAfterItWasAddedIsRefusedAtPost() {
        MemoryWindow window;
        try {
            window = pair.pd.allocateMemoryWindow(MemoryWindow.Type.TYPE_2);
        } catch (UnsupportedVerbException e) {
            abort("the provider has no type 2 memory windows: " + e.getMessage());
            return;
        }
        try (MemoryRegion target = pair.pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE, Access.MW_BIND))) {
            sends.clear().bindMemoryWindow(1, window, window.nextRkey(), target, 0, 1024, Set.of(Access.REMOTE_WRITE))
                    .signaled();
            window.close();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pair.client.postSend(sends));
            assertTrue(e.getMessage().contains(window.describe()), e.getMessage());
        }
    }

    /** Found by the fuzzer: a UD send without a destination made rxe dereference a NULL address handle (SIGSEGV). */
    @Test
    void aSendOnAUdQueuePairWithoutADestinationIsRefused() {
        QueuePair ud;
        try {
            ud = pair.pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM).completionQueue(pair.clientCq).create();
        } catch (UnsupportedVerbException e) {
            abort("the provider has no UD queue pairs: " + e.getMessage());
            return;
        }
        try (MemoryRegion source = pair.pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE))) {
            sends.clear().send(1).gather(source, 0, 8);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> ud.postSend(sends));
            assertTrue(e.getMessage().contains("destination"), e.getMessage());
        } finally {
            ud.close();
        }
    }

    /**
     * Found by the fuzzer on siw: a CQ whose destroy the kernel refused (EBUSY: a QP still used it) stayed open in
     * rdma4j, but libsiw had already unmapped its queue, and the next poll crashed. A refused destroy now abandons
     * the object: closed to Java, its C object never touched again. The QP here is made behind rdma4j's back, the
     * one way a test can make the kernel refuse.
     */
    @Test
    void aQueueTheKernelRefusesToDestroyIsAbandonedNeverPolled() {
        try (Context other = TestDevice.open(); Arena arena = Arena.ofConfined()) {
            CompletionQueue cq = other.createCompletionQueue(4);
            ProtectionDomain pd = other.allocateProtectionDomain();
            MemorySegment init = arena.allocate(ibv_qp_init_attr.layout());
            MemorySegment cqPointer = cq.withPinned(pointer -> pointer);
            ibv_qp_init_attr.send_cq(init, cqPointer);
            ibv_qp_init_attr.recv_cq(init, cqPointer);
            ibv_qp_init_attr.qp_type(init, QueuePairType.RELIABLE_CONNECTED.value());
            MemorySegment cap = ibv_qp_init_attr.cap(init);
            ibv_qp_cap.max_send_wr(cap, 1);
            ibv_qp_cap.max_recv_wr(cap, 1);
            ibv_qp_cap.max_send_sge(cap, 1);
            ibv_qp_cap.max_recv_sge(cap, 1);
            MemorySegment hidden = pd.withPinned(pointer -> ExportedVerbs.ibv_create_qp(Errno.state(), pointer, init));
            assertTrue(hidden.address() != 0, "the hidden QP was created");
            long abandoned = cqPointer.address();
            try {
                VerbException refused = assertThrows(VerbException.class, cq::close);
                assertTrue(refused.getMessage().contains("abandoned"), refused.getMessage());
                assertTrue(cq.isClosed());
                assertThrows(IllegalStateException.class, () -> cq.poll(completions), "never polled again");
            } finally {
                assertEquals(0, RdmaCore.ibv_destroy_qp(hidden));
            }
            if (!TestDevice.isSoftIwarp(other)) {
                // Only so that the suite's leftover check stays exact: librxe refuses before it unmaps anything, so
                // its CQ can be destroyed now (its mapping would keep the kernel's CQ for the life of this JVM).
                // libsiw unmapped the queue already, which lets the kernel drop the CQ with the context.
                assertEquals(0, RdmaCore.ibv_destroy_cq(MemorySegment.ofAddress(abandoned)));
            }
        }
    }

    /** A PD and its context closed from two threads at once (SIGSEGV in the provider before): both close, in order. */
    @Test
    void aProtectionDomainAndItsContextClosedFromTwoThreadsAtOnceCloseInOrder() throws InterruptedException {
        for (int round = 0; round < 50; round++) {
            Context other = TestDevice.open();
            ProtectionDomain pd = other.allocateProtectionDomain();
            pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE));
            pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(other.createCompletionQueue(4)).create();
            CountDownLatch go = new CountDownLatch(1);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread a = Thread.ofPlatform().start(() -> closeAfter(go, pd, failed));
            Thread b = Thread.ofPlatform().start(() -> closeAfter(go, other, failed));
            go.countDown();
            a.join();
            b.join();
            assertEquals(null, failed.get());
            assertTrue(pd.isClosed() && other.isClosed());
        }
    }

    private static void closeAfter(CountDownLatch go, AutoCloseable object, AtomicReference<Throwable> failed) {
        try {
            go.await();
            object.close();
        } catch (Throwable t) {
            failed.compareAndSet(null, t);
        }
    }
}
