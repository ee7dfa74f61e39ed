package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("device")
class ProtectionDomainTest {

    @Test
    void registeredMemoryHasKeysAndTheSegmentsExtent() {
        try (Context context = TestDevice.open(); Arena arena = Arena.ofConfined()) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            MemorySegment buffer = arena.allocate(64 * 1024, 4096);
            MemoryRegion mr = pd.registerMemory(buffer,
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            assertEquals(buffer.address(), mr.address());
            assertEquals(64 * 1024, mr.length());
            assertEquals(buffer, mr.segment());
            assertNotEquals(0, mr.lkey());
            assertNotEquals(0, mr.rkey());
            mr.close();
            pd.close();
        }
    }

    @Test
    void aRegionLargerThanFourGibibytesKeepsItsFullLength() {
        long size = 5L << 30;
        try (Context context = TestDevice.open(); ProtectionDomain pd = context.allocateProtectionDomain()) {
            long max = context.queryDevice().maxMemoryRegionSize();
            assumeTrue(Long.compareUnsigned(max, size) > 0, "the device limits regions to "
                    + Long.toUnsignedString(max) + " bytes");
            try (MemoryRegion mr = pd.allocateMemory(size, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ))) {
                assertEquals(size, mr.length());
                assertEquals(size, mr.segment().byteSize());
                mr.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, size - 8, 0x5a5a);
                assertEquals(0x5a5a, mr.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, size - 8));
            }
        }
    }

    @Test
    void aHeapSegmentIsRefusedBeforeAnyVerbRuns() {
        try (Context context = TestDevice.open(); ProtectionDomain pd = context.allocateProtectionDomain()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> pd.registerMemory(MemorySegment.ofArray(new byte[4096]), Set.of(Access.LOCAL_WRITE)));
            assertTrue(e.getMessage().contains("native segment"), e.getMessage());
        }
    }

    @Test
    void remoteWriteWithoutLocalWriteIsRejectedByTheVerbWithItsErrno() {
        try (Context context = TestDevice.open(); ProtectionDomain pd = context.allocateProtectionDomain();
             Arena arena = Arena.ofConfined()) {
            VerbException e = assertThrows(VerbException.class,
                    () -> pd.registerMemory(arena.allocate(4096), Set.of(Access.REMOTE_WRITE)));
            assertEquals("ibv_reg_mr_iova2", e.verb());
            assertEquals(io.rdma4j.bindings.verbs.RdmaCore.EINVAL(), e.errno());
        }
    }

    @Test
    void closingTheDomainClosesItsRegionsFirst() {
        try (Context context = TestDevice.open(); Arena arena = Arena.ofConfined()) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            MemoryRegion mr = pd.registerMemory(arena.allocate(4096), Set.of(Access.LOCAL_WRITE));
            pd.close();
            assertTrue(mr.isClosed());
            assertTrue(pd.isClosed());
            mr.close();
            pd.close();
        }
    }

    @Test
    void closingTheContextClosesEverythingUnderIt() {
        Context context = TestDevice.open();
        try (Arena arena = Arena.ofConfined()) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            MemoryRegion mr = pd.registerMemory(arena.allocate(4096), Set.of(Access.LOCAL_WRITE));
            CompletionQueue cq = context.createCompletionQueue(8);
            context.close();
            assertTrue(mr.isClosed() && pd.isClosed() && cq.isClosed() && context.isClosed());
            assertThrows(IllegalStateException.class, () -> pd.registerMemory(arena.allocate(64), Set.of()));
        }
    }

    @Test
    void aChildCannotBeCreatedFromAClosedDomain() {
        try (Context context = TestDevice.open(); Arena arena = Arena.ofConfined()) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            pd.close();
            assertThrows(IllegalStateException.class, () -> pd.registerMemory(arena.allocate(64), Set.of()));
            assertFalse(context.isClosed());
        }
    }
}
