package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import java.lang.ref.WeakReference;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every verbs object: create, use, close, close again, and a use after close that throws instead of crashing. */
@Tag("device")
class LifecycleTest {

    private Context context;
    private ProtectionDomain pd;
    private CompletionQueue cq;

    @BeforeEach
    void open() {
        context = TestDevice.open();
        cq = context.createCompletionQueue(8);
        pd = context.allocateProtectionDomain();
    }

    @AfterEach
    void close() throws Exception {
        TestDevice.closeAll(pd, cq, context);
    }

    @Test
    void protectionDomain() {
        lifecycle(c -> c.allocateProtectionDomain(), d -> d.allocateMemory(64, Set.of()));
    }

    @Test
    void memoryRegion() {
        lifecycle(c -> pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE)), MemoryRegion::rkey);
    }

    @Test
    void completionQueue() {
        try (WorkCompletions completions = new WorkCompletions(1)) {
            lifecycle(c -> c.createCompletionQueue(4), q -> q.poll(completions));
        }
    }

    @Test
    void completionChannel() {
        lifecycle(Context::createCompletionChannel, ch -> context.createCompletionQueue(4, ch, 0).close());
    }

    @Test
    void queuePair() {
        lifecycle(c -> pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create(), QueuePair::query);
    }

    @Test
    void sharedReceiveQueue() {
        try (ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1)) {
            MemoryRegion memory = pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE));
            lifecycle(c -> pd.createSharedReceiveQueue(4, 1),
                    s -> s.postReceive(receives.clear().add(1).scatter(memory, 0, 64)));
        }
    }

    @Test
    void addressHandle() {
        GidEntry gid = context.gidTable().getFirst();
        lifecycle(c -> supported(() -> pd.createAddressHandle(AddressVector.ofGid(gid.gid(), gid.index(), 1))),
                ah -> new SendWorkRequests(1, 0).send(1).destination(ah, 1, 1));
    }

    @Test
    void memoryWindow() {
        lifecycle(c -> supported(() -> pd.allocateMemoryWindow(MemoryWindow.Type.TYPE_1)), MemoryWindow::rkey);
    }

    @Test
    void aChannelRefusesToCloseUnderItsCompletionQueue() {
        CompletionChannel channel = context.createCompletionChannel();
        CompletionQueue queue = context.createCompletionQueue(4, channel, 0);
        IllegalStateException e = assertThrows(IllegalStateException.class, channel::close);
        assertTrue(e.getMessage().contains("still used by [CompletionQueue@0x"), e.getMessage());
        queue.close();
        channel.close();
    }

    @Test
    void context() {
        lifecycle(c -> TestDevice.open(), Context::queryDevice);
    }

    /**
     * The garbage collector's rule: an open parent does not keep the children the program dropped; each is closed by
     * the Cleaner (with a warning) while its parent lives on, so a forgotten region or queue pair never holds its
     * memory or device resources for good.
     */
    @Test
    void aChildTheProgramDroppedIsClosedWhileItsParentLives() throws Exception {
        WeakReference<QueuePair> qp = new WeakReference<>(pd.queuePair(QueuePairType.RELIABLE_CONNECTED)
                .completionQueue(cq).create());
        WeakReference<MemoryRegion> memory = new WeakReference<>(pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE)));
        collectGarbage();
        assertNull(qp.get(), "the open protection domain let go of its dropped queue pair");
        assertNull(memory.get(), "and of its dropped region");
        long deadline = System.nanoTime() + 30_000_000_000L;
        while ((!LeftoverResourcesTest.ours("qp").isEmpty() || !LeftoverResourcesTest.ours("mr").isEmpty())
                && System.nanoTime() < deadline) {
            collectGarbage();
        }
        assertEquals(java.util.List.of(), LeftoverResourcesTest.ours("qp"), "the dropped queue pair was destroyed");
        assertEquals(java.util.List.of(), LeftoverResourcesTest.ours("mr"), "the dropped region was deregistered");
        assertFalse(pd.isClosed());
        cq.close(); // no queue pair uses it any more
    }

    private static void collectGarbage() throws InterruptedException {
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(50);
        }
    }

    /** Creates an object, uses it, closes it twice, and checks that using it again is a clear exception. */
    private <T extends NativeObject> void lifecycle(Function<Context, T> create, Consumer<T> use) {
        T object = create.apply(context);
        use.accept(object);
        assertFalse(object.isClosed());
        object.close();
        object.close();
        assertTrue(object.isClosed());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> use.accept(object));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    private static <T> T supported(java.util.function.Supplier<T> create) {
        try {
            return create.get();
        } catch (UnsupportedVerbException e) {
            return abort("the provider lacks it: " + e.getMessage());
        }
    }
}
