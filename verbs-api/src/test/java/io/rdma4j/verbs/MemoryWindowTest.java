package io.rdma4j.verbs;

import static io.rdma4j.verbs.ConnectedPair.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Memory windows: remote access to a bound sub-range only, where the provider has windows. */
@Tag("device")
class MemoryWindowTest {

    private static final Set<Access> WINDOW_ACCESS = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ);

    private Context context;
    private ConnectedPair pair;
    private MemoryRegion target;
    private MemoryRegion source;
    private SendWorkRequests sends;
    private WorkCompletions completions;

    @BeforeEach
    void connect() {
        context = TestDevice.open();
        pair = ConnectedPair.reliable(context);
        Set<Access> access = EnumSet.copyOf(ConnectedPair.REMOTE_ACCESS);
        access.add(Access.MW_BIND);
        target = pair.pd.allocateMemory(8192, access);
        source = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
        sends = new SendWorkRequests(2, 1);
        completions = new WorkCompletions(1);
    }

    @AfterEach
    void close() throws Exception {
        TestDevice.closeAll(sends, completions, pair, context);
    }

    @Test
    void aTypeOneWindowGrantsItsRangeOnly() {
        MemoryWindow window = allocate(MemoryWindow.Type.TYPE_1);
        int before = window.rkey();
        window.bind(pair.server, 31, target, 4096, 1024, WINDOW_ACCESS, true);
        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals(WorkCompletionOpcode.BIND_MEMORY_WINDOW, completions.opcode(0));
        assertNotEquals(before, window.rkey(), "a bind issues a new key");

        writeThrough(window.rkey(), target.address() + 4096);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals("through a window", DataPathTest.read(target, 4096));

        // Beyond the region: rejected. (rxe on Linux 6.1 checks a window access against the region's range only,
        // not the window's, so a test of "inside the region, outside the window" would fail there.)
        writeThrough(window.rkey(), target.address() + target.length());
        assertEquals(WorkCompletionStatus.REMOTE_ACCESS_ERROR, completions.status(0), "outside the region");
        assertThrows(IllegalStateException.class, () -> allocate(MemoryWindow.Type.TYPE_2).bind(pair.server, 1, target,
                0, 64, WINDOW_ACCESS, true), "type 2 windows are bound by work request");
    }

    @Test
    void aTypeTwoWindowIsBoundAndInvalidatedByWorkRequests() {
        MemoryWindow window = allocate(MemoryWindow.Type.TYPE_2);
        int rkey = window.nextRkey();
        // A bind's range is checked against its region before the provider reads it.
        assertThrows(IndexOutOfBoundsException.class,
                () -> sends.clear().bindMemoryWindow(40, window, rkey, target, 8000, 2048, WINDOW_ACCESS));
        sends.clear().bindMemoryWindow(41, window, rkey, target, 0, 2048, WINDOW_ACCESS).signaled();
        pair.server.postSend(sends);
        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));

        writeThrough(rkey, target.address() + 100);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        assertEquals("through a window", DataPathTest.read(target, 100));

        sends.clear().localInvalidate(42, rkey).signaled();
        pair.server.postSend(sends);
        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        writeThrough(rkey, target.address() + 100);
        assertEquals(WorkCompletionStatus.REMOTE_ACCESS_ERROR, completions.status(0), "an invalidated key");
    }

    @Test
    void aSendWithInvalidateRevokesTheReceiversWindow() {
        MemoryWindow window = allocate(MemoryWindow.Type.TYPE_2);
        int rkey = window.nextRkey();
        sends.clear().bindMemoryWindow(61, window, rkey, target, 0, 1024, WINDOW_ACCESS).signaled();
        pair.server.postSend(sends);
        await(pair.serverCq, completions, 1);
        assertTrue(completions.isSuccess(0), completions.statusText(0));
        try (ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1)) {
            pair.server.postReceive(receives.clear().add(62).scatter(source, 1024, 64));
            sends.clear().sendWithInvalidate(63, rkey).gather(source, 0, 8).signaled();
            pair.client.postSend(sends);
            await(pair.serverCq, completions, 1);
            assertTrue(completions.isSuccess(0), completions.statusText(0));
            assertEquals(62, completions.workRequestId(0));
            // rxe (Linux 6.1) does not report IBV_WC_WITH_INV to user space; the revocation below is what counts.
            if ((completions.flags(0) & io.rdma4j.bindings.verbs.RdmaCore.IBV_WC_WITH_INV()) != 0) {
                assertEquals(rkey, completions.invalidatedRkey(0));
            }
            await(pair.clientCq, completions, 1);
        }
        writeThrough(rkey, target.address() + 100);
        assertEquals(WorkCompletionStatus.REMOTE_ACCESS_ERROR, completions.status(0), "a remotely invalidated key");
    }

    private MemoryWindow allocate(MemoryWindow.Type type) {
        try {
            return pair.pd.allocateMemoryWindow(type);
        } catch (UnsupportedVerbException e) {
            return abort("the provider has no " + type + " memory windows: " + e.getMessage());
        }
    }

    private void writeThrough(int rkey, long address) {
        DataPathTest.write(source, 0, "through a window");
        sends.clear().rdmaWrite(50, address, rkey).gather(source, 0, 17).signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
    }
}
