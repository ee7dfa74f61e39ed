package io.rdma4j.verbs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The lifetime rules every rdma4j object relies on, without a device: stand-in C objects (plain memory) whose
 * destroyers record what the C library would see.
 */
class NativeResourceTest {

    private static final int ROUNDS = 200;

    @Test
    void aPinnedObjectRefusesToCloseAndAClosedOneCannotBePinned() {
        AtomicInteger destroyed = new AtomicInteger();
        NativeResource region = resource(null, Rank.MEMORY_REGION, p -> {
            destroyed.incrementAndGet();
            return 0;
        });
        assertTrue(region.pin());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> region.close(() -> "the region"));
        assertTrue(e.getMessage().contains("the region cannot be closed while a call on it or naming it runs"),
                e.getMessage());
        assertFalse(region.isClosed(), "a refused close leaves the object open");
        assertTrue(region.pin(), "and usable");
        region.unpin();
        region.unpin();
        region.close(() -> "the region");
        region.close(() -> "the region");
        assertEquals(1, destroyed.get(), "destroyed once");
        assertFalse(region.pin());
    }

    /**
     * A verb gets the pointer only pinned: meanwhile the parent cannot close it; once closed (with its parent),
     * the pointer is refused with a message naming the object.
     */
    @Test
    void thePointerIsHandedOutPinnedAndRefusedOnceClosed() {
        AtomicInteger destroyed = new AtomicInteger();
        NativeResource pd = resource(null, Rank.PROTECTION_DOMAIN, p -> 0);
        NativeResource qp = resource(pd, Rank.QUEUE_PAIR, p -> {
            destroyed.incrementAndGet();
            return 0;
        });
        assertEquals(64, qp.pinned().byteSize());
        assertThrows(IllegalStateException.class, () -> pd.close(() -> "the protection domain"));
        assertEquals(0, destroyed.get());
        qp.unpin();
        assertEquals(64L, qp.withPinned(MemorySegment::byteSize));
        pd.close(() -> "the protection domain");
        assertEquals(1, destroyed.get(), "the parent closed its child first");
        IllegalStateException e = assertThrows(IllegalStateException.class, qp::pinned);
        assertTrue(e.getMessage().endsWith(" is closed"), e.getMessage());
        assertThrows(IllegalStateException.class, qp::openAddress);
        assertEquals(null, qp.pinnedOrNull());
        assertFalse(qp.pin());
    }

    /** A post pins, reads and unpins in a loop while another thread closes: no read may see the object destroyed. */
    @Test
    void noPinEverOverlapsTheDestroy() throws InterruptedException {
        for (int round = 0; round < ROUNDS; round++) {
            AtomicBoolean destroyed = new AtomicBoolean();
            NativeResource region = resource(null, Rank.MEMORY_REGION, p -> {
                destroyed.set(true);
                return 0;
            });
            AtomicInteger overlaps = new AtomicInteger();
            Thread poster = Thread.ofPlatform().start(() -> {
                while (region.pin()) {
                    if (destroyed.get()) {
                        overlaps.incrementAndGet();
                    }
                    region.unpin();
                }
            });
            LockSupport.parkNanos(round % 7 * 10_000L);
            while (!region.isClosed()) {
                try {
                    region.close(() -> "the region");
                } catch (IllegalStateException busy) {
                    Thread.onSpinWait(); // refused during a post: try again, as a program would
                }
            }
            poster.join();
            assertEquals(0, overlaps.get(), "a pinned object was destroyed");
            assertTrue(destroyed.get());
        }
    }

    /**
     * A parent and its child closed at once from two threads (a context and its PD): the parent is destroyed only
     * after the child, and each exactly once, whichever thread comes first.
     */
    @Test
    void aParentAndItsChildClosedAtOnceAreDestroyedOnceInOrder() throws InterruptedException {
        for (int round = 0; round < ROUNDS; round++) {
            AtomicInteger childDestroyed = new AtomicInteger();
            AtomicInteger parentDestroyed = new AtomicInteger();
            AtomicBoolean wrongOrder = new AtomicBoolean();
            NativeResource parent = resource(null, Rank.PROTECTION_DOMAIN, p -> {
                wrongOrder.compareAndSet(false, childDestroyed.get() != 1);
                parentDestroyed.incrementAndGet();
                return 0;
            });
            NativeResource child = resource(parent, Rank.MEMORY_REGION, p -> {
                LockSupport.parkNanos(200_000); // a destroy verb takes time: widen the window
                childDestroyed.incrementAndGet();
                return 0;
            });
            CountDownLatch go = new CountDownLatch(1);
            Thread a = Thread.ofPlatform().start(() -> closeAfter(go, child, "the child"));
            Thread b = Thread.ofPlatform().start(() -> closeAfter(go, parent, "the parent"));
            go.countDown();
            a.join();
            b.join();
            assertFalse(wrongOrder.get(), "the parent was destroyed before its child was");
            assertEquals(1, childDestroyed.get());
            assertEquals(1, parentDestroyed.get());
        }
    }

    private static void closeAfter(CountDownLatch go, NativeResource resource, String description) {
        try {
            go.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        resource.close(() -> description);
    }

    private static NativeResource resource(NativeResource parent, Rank rank, NativeResource.Destroyer destroyer) {
        MemorySegment fake = Arena.ofAuto().allocate(64);
        return new NativeResource(parent, fake, 64, rank, "Stand-in", "destroy_stand_in", destroyer);
    }
}
