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
        NativeResource region = resource(null, 1, p -> {
            destroyed.incrementAndGet();
            return 0;
        });
        assertTrue(region.pin());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> region.close("the region"));
        assertTrue(e.getMessage().contains("the region cannot be closed while a call naming it runs"), e.getMessage());
        assertFalse(region.isClosed(), "a refused close leaves the object open");
        assertTrue(region.pin(), "and usable");
        region.unpin();
        region.unpin();
        region.close("the region");
        region.close("the region");
        assertEquals(1, destroyed.get(), "destroyed once");
        assertFalse(region.pin());
    }

    /**
     * An unguarded object (a memory region) has no shared arena to close, yet keeps the rules: pinned, it refuses to
     * close; closed, its pointer is refused; its parent closes it first.
     */
    @Test
    void anUnguardedObjectKeepsTheRulesWithoutAnArena() {
        AtomicInteger destroyed = new AtomicInteger();
        NativeResource pd = resource(null, 2, p -> 0);
        NativeResource region = NativeResource.unguarded(pd, Arena.ofAuto().allocate(64), 64, 1, "Stand-in",
                "destroy_stand_in", p -> {
                    destroyed.incrementAndGet();
                    return 0;
                });
        assertEquals(64, region.handle().byteSize());
        assertTrue(region.pin());
        assertThrows(IllegalStateException.class, () -> pd.close("the protection domain"));
        region.unpin();
        pd.close("the protection domain");
        assertEquals(1, destroyed.get(), "the parent closed its unguarded child first");
        IllegalStateException e = assertThrows(IllegalStateException.class, region::handle);
        assertTrue(e.getMessage().endsWith(" is closed"), e.getMessage());
        assertFalse(region.pin());
    }

    /** A post pins, reads and unpins in a loop while another thread closes: no read may see the object destroyed. */
    @Test
    void noPinEverOverlapsTheDestroy() throws InterruptedException {
        for (int round = 0; round < ROUNDS; round++) {
            AtomicBoolean destroyed = new AtomicBoolean();
            NativeResource region = resource(null, 1, p -> {
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
                    region.close("the region");
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
            NativeResource parent = resource(null, 2, p -> {
                wrongOrder.compareAndSet(false, childDestroyed.get() != 1);
                parentDestroyed.incrementAndGet();
                return 0;
            });
            NativeResource child = resource(parent, 1, p -> {
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
        resource.close(description);
    }

    private static NativeResource resource(NativeResource parent, int rank, NativeResource.Destroyer destroyer) {
        MemorySegment fake = Arena.ofAuto().allocate(64);
        return new NativeResource(parent, fake, 64, rank, "Stand-in", "destroy_stand_in", destroyer);
    }
}
