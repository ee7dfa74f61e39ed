package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link RegionMemory}, without a device: what {@link ProtectionDomain#allocateMemory} registers. */
class RegionMemoryTest {

    private static final int PER_SLAB = (int) (RegionMemory.SLAB_SIZE / 4096);

    private final RegionMemory memory = new RegionMemory();

    @Test
    void smallAllocationsArePageAlignedZeroedAndNeverGetFreedPages() {
        RegionMemory.Allocation first = memory.allocate(100);
        first.segment().fill((byte) 1);
        first.free().run();
        RegionMemory.Allocation second = memory.allocate(4096);
        assertEquals(100, first.segment().byteSize());
        assertEquals(0, second.segment().address() % 4096);
        assertTrue(second.segment().address() >= first.segment().address() + 4096, "pages of a freed allocation");
        for (long i = 0; i < 4096; i++) {
            assertEquals(0, second.segment().get(ValueLayout.JAVA_BYTE, i));
        }
        // The freed allocation's slab is in use: its memory is still there, and nobody else's.
        assertEquals(1, first.segment().get(ValueLayout.JAVA_BYTE, 99));
        second.free().run();
    }

    @Test
    void aFullSlabIsFreedWithItsLastAllocationAndItsSegmentsRefuseAccessFromThen() {
        List<RegionMemory.Allocation> slab = new ArrayList<>();
        for (int i = 0; i < PER_SLAB; i++) {
            slab.add(memory.allocate(4096));
        }
        assertEquals(1, memory.openSlabs());
        RegionMemory.Allocation next = memory.allocate(4096);
        assertEquals(2, memory.openSlabs(), "one slab holds " + PER_SLAB + " pages");
        RegionMemory.Allocation kept = slab.removeLast();
        slab.forEach(a -> a.free().run());
        assertEquals(2, memory.openSlabs(), "one live allocation keeps its slab");
        kept.segment().set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        kept.free().run();
        assertEquals(1, memory.openSlabs());
        assertThrows(IllegalStateException.class, () -> kept.segment().get(ValueLayout.JAVA_BYTE, 0));
        assertThrows(IllegalStateException.class, () -> slab.getFirst().segment().get(ValueLayout.JAVA_BYTE, 0));
        next.free().run();
        assertEquals(1, memory.openSlabs(), "the slab allocations are carved from stays");
    }

    @Test
    void allocationsAboveTheSlabLimitAreFreedAtOnce() {
        RegionMemory.Allocation large = memory.allocate(RegionMemory.SLAB_LIMIT + 1);
        assertEquals(0, large.segment().address() % 4096);
        assertEquals(0, memory.openSlabs());
        large.free().run();
        assertThrows(IllegalStateException.class, () -> large.segment().get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void anAllocationOfTheSlabLimitFillsItsShareOfASlab() {
        for (int i = 0; i < RegionMemory.SLAB_SIZE / RegionMemory.SLAB_LIMIT; i++) {
            memory.allocate(RegionMemory.SLAB_LIMIT).free().run();
        }
        assertEquals(1, memory.openSlabs());
        memory.allocate(1).free().run();
        assertEquals(1, memory.openSlabs(), "the first slab, full and unused, was freed as the second opened");
    }

    @Test
    void freeingTwiceFreesOnce() {
        RegionMemory.Allocation twice = memory.allocate(4096);
        List<RegionMemory.Allocation> rest = new ArrayList<>();
        for (int i = 1; i < PER_SLAB; i++) {
            rest.add(memory.allocate(4096));
        }
        memory.allocate(4096).free().run();
        RegionMemory.Allocation live = rest.removeLast();
        rest.forEach(a -> a.free().run());
        twice.free().run();
        twice.free().run();
        assertEquals(2, memory.openSlabs(), "a second free must not count for the live allocation");
        live.segment().set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        live.free().run();
        assertEquals(1, memory.openSlabs());
    }
}
