package io.rdma4j.verbs;

import static io.rdma4j.verbs.ConnectedPair.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Two connected RC queue pairs on the test device moving real data: every opcode the provider has. */
@Tag("device")
class DataPathTest extends PairFixture {

    private MemoryRegion clientMemory;
    private MemoryRegion serverMemory;

    DataPathTest() {
        super(4, 2);
    }

    @BeforeEach
    void registerMemory() {
        clientMemory = pair.pd.allocateMemory(8192, ConnectedPair.REMOTE_ACCESS);
        serverMemory = pair.pd.allocateMemory(8192, ConnectedPair.REMOTE_ACCESS);
    }

    @Test
    void sendLandsInThePostedReceive() {
        write(clientMemory, 0, "hello over " + context.device().name());
        receives.clear().add(77).scatter(serverMemory, 100, 1000);
        pair.server.postReceive(receives);
        sends.clear().send(5).gather(clientMemory, 0, 64).signaled();
        pair.client.postSend(sends);

        await(pair.clientCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(5, completions.workRequestId(0));
        assertEquals(WorkCompletionOpcode.SEND, completions.opcode(0));
        assertThrows(IllegalStateException.class, () -> completions.failure(0, WorkCompletionOpcode.SEND, null),
                "a success is no failure");
        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(77, completions.workRequestId(0));
        assertEquals(WorkCompletionOpcode.RECEIVE, completions.opcode(0));
        assertEquals(64, completions.byteLength(0));
        assertEquals(pair.server.number(), completions.queuePairNumber(0));
        assertFalse(completions.hasImmediateData(0));
        assertEquals("hello over " + context.device().name(), read(serverMemory, 100));
    }

    @Test
    void severalGatherEntriesArriveConcatenatedAndScattered() {
        write(clientMemory, 0, "first-");
        write(clientMemory, 4096, "second");
        receives.clear().add(1).scatter(serverMemory, 0, 3).scatter(serverMemory, 4000, 100);
        pair.server.postReceive(receives);
        sends.clear().send(2).gather(clientMemory, 0, 6).gather(clientMemory, 4096, 7).signaled();
        pair.client.postSend(sends);

        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(13, completions.byteLength(0));
        assertEquals("fir", new String(serverMemory.segment().asSlice(0, 3).toArray(ValueLayout.JAVA_BYTE),
                StandardCharsets.US_ASCII));
        assertEquals("st-second", read(serverMemory, 4000));
    }

    @Test
    void unregisteredInlineDataIsCopiedIntoTheBatchAndThenByTheProvider() {
        assumeTrue(pair.client.capabilities().maxInlineData() >= 32, "the provider grants no inline data");
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment unregistered = arena.allocate(32);
            unregistered.setString(0, "inline bytes");
            receives.clear().add(1).scatter(serverMemory, 0, 64);
            pair.server.postReceive(receives);
            sends.clear().send(3).inline(unregistered).signaled();
            unregistered.setString(0, "overwritten!");
        }
        // Copied into the batch at once: the arena is closed before the post, and the post is the provider's copy.
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        await(pair.serverCq, completions, 1);
        assertEquals(32, completions.byteLength(0));
        assertEquals("inline bytes", read(serverMemory, 0));
    }

    @Test
    void sendWithImmediateDeliversTheImmediate() {
        assumeFalse(iwarp(), "iWARP (RFC 5040) has no immediate data");
        receives.clear().add(9).scatter(serverMemory, 0, 64);
        pair.server.postReceive(receives);
        sends.clear().sendWithImmediate(4, 0xCAFE_F00D).gather(clientMemory, 0, 8).signaled();
        pair.client.postSend(sends);
        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertTrue(completions.hasImmediateData(0));
        assertEquals(0xCAFE_F00D, completions.immediateData(0));
    }

    @Test
    void rdmaWritePlacesBytesWithoutAReceive() {
        write(clientMemory, 0, "written remotely");
        sends.clear().rdmaWrite(6, serverMemory.address() + 512, serverMemory.rkey()).gather(clientMemory, 0, 17)
                .signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(WorkCompletionOpcode.RDMA_WRITE, completions.opcode(0));
        assertEquals("written remotely", read(serverMemory, 512));
        assertEquals(0, pair.serverCq.poll(completions), "an RDMA WRITE does not complete at the target");
    }

    @Test
    void rdmaWriteWithImmediateConsumesAReceive() {
        assumeFalse(iwarp(), "iWARP (RFC 5040) has no immediate data");
        write(clientMemory, 0, "with imm");
        receives.clear().add(11).scatter(serverMemory, 0, 8);
        pair.server.postReceive(receives);
        sends.clear().rdmaWriteWithImmediate(7, serverMemory.address() + 1024, serverMemory.rkey(), 1234)
                .gather(clientMemory, 0, 9).signaled();
        pair.client.postSend(sends);
        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(WorkCompletionOpcode.RECEIVE_RDMA_WRITE_WITH_IMMEDIATE, completions.opcode(0));
        assertEquals(1234, completions.immediateData(0));
        assertEquals("with imm", read(serverMemory, 1024));
    }

    @Test
    void rdmaReadFetchesRemoteBytes() {
        write(serverMemory, 2048, "read me");
        sends.clear().rdmaRead(8, serverMemory.address() + 2048, serverMemory.rkey()).gather(clientMemory, 300, 8)
                .signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(WorkCompletionOpcode.RDMA_READ, completions.opcode(0));
        assertEquals("read me", read(clientMemory, 300));
    }

    @Test
    void atomicsReturnTheOldValue() {
        assumeTrue(context.queryDevice().atomicCapability() != AtomicCapability.NONE,
                "the device reports ATOMIC_NONE");
        serverMemory.segment().set(ValueLayout.JAVA_LONG, 64, 40);
        sends.clear().fetchAndAdd(1, serverMemory.address() + 64, serverMemory.rkey(), 2)
                .gather(clientMemory, 0, 8).signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(WorkCompletionOpcode.FETCH_AND_ADD, completions.opcode(0));
        assertEquals(40, clientMemory.segment().get(ValueLayout.JAVA_LONG, 0));
        assertEquals(42, serverMemory.segment().get(ValueLayout.JAVA_LONG, 64));

        sends.clear().compareAndSwap(2, serverMemory.address() + 64, serverMemory.rkey(), 42, 7)
                .gather(clientMemory, 8, 8).signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(WorkCompletionOpcode.COMPARE_AND_SWAP, completions.opcode(0));
        assertEquals(42, clientMemory.segment().get(ValueLayout.JAVA_LONG, 8));
        assertEquals(7, serverMemory.segment().get(ValueLayout.JAVA_LONG, 64));
    }

    /** siw reports atomic_cap NONE: atomics are refused before C, naming the device and the capability. */
    @Test
    void atomicsOnADeviceWithoutThemAreRefusedBeforeTheProvider() {
        assumeTrue(context.queryDevice().atomicCapability() == AtomicCapability.NONE,
                "SKIPPED: " + context.device().name() + " has atomics");
        sends.clear().send(1).gather(clientMemory, 0, 8)
                .fetchAndAdd(2, serverMemory.address() + 64, serverMemory.rkey(), 2).gather(clientMemory, 0, 8);
        UnsupportedVerbException e = assertThrows(UnsupportedVerbException.class, () -> pair.client.postSend(sends));
        assertTrue(e.getMessage().contains(context.device().name() + " reports atomic_cap NONE")
                && e.getMessage().contains("nothing was posted"), e.getMessage());
        assertEquals(0, pair.clientCq.poll(completions), "nothing was posted");
    }

    @Test
    void unsignaledSendsDoNotComplete() {
        receives.clear().add(1).scatter(serverMemory, 0, 64).add(2).scatter(serverMemory, 64, 64);
        pair.server.postReceive(receives);
        sends.clear().send(1).gather(clientMemory, 0, 8).send(2).gather(clientMemory, 8, 8).signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertEquals(2, completions.workRequestId(0), "only the signaled request completes");
    }

    private boolean iwarp() {
        return context.device().transport() == Transport.IWARP;
    }

    static void write(MemoryRegion region, long offset, String text) {
        region.segment().setString(offset, text, StandardCharsets.US_ASCII);
    }

    static String read(MemoryRegion region, long offset) {
        return region.segment().getString(offset, StandardCharsets.US_ASCII);
    }
}
