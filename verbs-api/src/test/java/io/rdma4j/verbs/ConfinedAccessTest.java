package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The confined posters and poller ({@link QueuePair#confinedPoster()}, {@link SharedReceiveQueue#confinedPoster()},
 * {@link CompletionQueue#confinedPoller()}): real data through them, and the rules that keep them as safe as the
 * queues' own methods: the pin they hold, their thread, their close.
 */
@Tag("device")
class ConfinedAccessTest extends PairFixture {

    private MemoryRegion memory;

    ConfinedAccessTest() {
        super(2, 1);
    }

    @BeforeEach
    void registerMemory() {
        memory = pair.pd.allocateMemory(8192, ConnectedPair.REMOTE_ACCESS);
    }

    @Test
    void aSendAndItsReceiveGoThroughPostersAndPollers() {
        try (QueuePairPoster client = pair.client.confinedPoster();
             QueuePairPoster server = pair.server.confinedPoster();
             CompletionQueuePoller clientCq = pair.clientCq.confinedPoller();
             CompletionQueuePoller serverCq = pair.serverCq.confinedPoller()) {
            assertSame(pair.client, client.queuePair());
            assertSame(pair.serverCq, serverCq.queue());
            assertSame(Thread.currentThread(), client.owner());
            DataPathTest.write(memory, 0, "confined");
            receives.clear().add(31).scatter(memory, 4096, 64);
            server.postReceive(receives);
            sends.clear().send(32).gather(memory, 0, 9).signaled();
            client.postSend(sends);

            await(clientCq);
            assertTrue(completions.isSuccess(0), completions.statusText(0));
            assertEquals(32, completions.workRequestId(0));
            await(serverCq);
            assertTrue(completions.isSuccess(0), completions.statusText(0));
            assertEquals(31, completions.workRequestId(0));
            assertEquals(9, completions.byteLength(0));
            assertEquals("confined", DataPathTest.read(memory, 4096));
        }
    }

    @Test
    void aSharedReceiveQueuePosterFeedsTheQueuePairsThatUseIt() {
        try (Context other = TestDevice.open();
             ConnectedPair srqPair = ConnectedPair.withSharedReceiveQueue(other);
             MemoryRegion region = srqPair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
             SharedReceiveQueuePoster srq = srqPair.srq.confinedPoster()) {
            assertSame(srqPair.srq, srq.queue());
            receives.clear().add(41).scatter(region, 1024, 512);
            srq.postReceive(receives);
            DataPathTest.write(region, 0, "through the SRQ's poster");
            sends.clear().send(42).gather(region, 0, 25).signaled();
            srqPair.client.postSend(sends);
            ConnectedPair.await(srqPair.serverCq, completions, 1);
            assertTrue(completions.isSuccess(0), completions.statusText(0));
            assertEquals(41, completions.workRequestId(0));
            assertEquals("through the SRQ's poster", DataPathTest.read(region, 1024));
            srqPair.server.close();
            IllegalStateException e = assertThrows(IllegalStateException.class, srqPair.srq::close);
            assertTrue(e.getMessage().contains("confined poster"), e.getMessage());
        }
    }

    @Test
    void whileAPosterIsOpenItsQueuePairAndEverythingAboveRefuseToClose() {
        QueuePairPoster poster = pair.client.confinedPoster();
        CompletionQueuePoller poller = pair.clientCq.confinedPoller();
        IllegalStateException e = assertThrows(IllegalStateException.class, pair.client::close);
        assertTrue(e.getMessage().contains("confined poster or poller"), e.getMessage());
        // Still whole: the poster posts, the poller polls.
        sends.clear().rdmaWrite(2, memory.address() + 4096, memory.rkey()).gather(memory, 0, 8).signaled();
        poster.postSend(sends);
        await(poller);
        assertTrue(completions.isSuccess(0), completions.statusText(0));

        // A parent's close closes its descendants first, and stops at the pinned one.
        assertThrows(IllegalStateException.class, pair.pd::close);
        assertThrows(IllegalStateException.class, context::close);
        assertFalse(pair.client.isClosed() || pair.pd.isClosed() || context.isClosed());
        poster.close();
        pair.client.close();
        IllegalStateException cq = assertThrows(IllegalStateException.class, pair.clientCq::close);
        assertTrue(cq.getMessage().contains("confined poster or poller"), cq.getMessage());
        poller.close();
        pair.clientCq.close();
        assertTrue(pair.client.isClosed() && pair.clientCq.isClosed());
    }

    @Test
    void onlyItsThreadMayUseOrCloseItUntilThatThreadEnds() throws InterruptedException {
        QueuePairPoster poster = pair.client.confinedPoster();
        CompletionQueuePoller poller = pair.clientCq.confinedPoller();
        sends.clear().send(1).gather(memory, 0, 8);
        assertWrongThread(() -> poster.postSend(sends));
        assertWrongThread(() -> poster.postReceive(receives.clear().add(1).scatter(memory, 0, 8)));
        assertWrongThread(() -> poller.poll(completions));
        assertWrongThread(poster::close);
        poster.close();
        poller.close();

        AtomicReference<QueuePairPoster> made = new AtomicReference<>();
        Thread owner = Thread.ofPlatform().name("short-lived").start(() -> made.set(pair.server.confinedPoster()));
        owner.join();
        assertSame(owner, made.get().owner());
        assertWrongThread(() -> made.get().postSend(sends));
        made.get().close();
        pair.server.close();
    }

    @Test
    void aClosedPosterRefusesEveryPostAndClosesOnce() {
        QueuePairPoster poster = pair.client.confinedPoster();
        CompletionQueuePoller poller = pair.clientCq.confinedPoller();
        poster.close();
        poster.close();
        poller.close();
        sends.clear().send(1).gather(memory, 0, 8);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> poster.postSend(sends));
        assertTrue(e.getMessage().startsWith("QueuePairPoster of QueuePair(") && e.getMessage().endsWith(" is closed"),
                e.getMessage());
        assertThrows(IllegalStateException.class, () -> poller.poll(completions));
        pair.client.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, pair.client::confinedPoster);
        assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
    }

    @Test
    void aDroppedPosterReleasesItsPinThroughTheCleaner() throws InterruptedException {
        dropAPoster(pair.client);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            System.gc();
            try {
                pair.client.close();
                return;
            } catch (IllegalStateException stillPinned) {
                if (System.nanoTime() > deadline) {
                    fail("the Cleaner did not release the dropped poster's pin within 30 s", stillPinned);
                }
                Thread.sleep(50);
            }
        }
    }

    /** In its own frame, so that no local of the test keeps the poster reachable. */
    private static void dropAPoster(QueuePair queuePair) {
        queuePair.confinedPoster();
    }

    private void await(CompletionQueuePoller poller) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        int n;
        while ((n = poller.poll(completions)) == 0) {
            if (System.nanoTime() > deadline) {
                fail("no completion within 10 s");
            }
        }
        assertEquals(1, n);
    }

    private static void assertWrongThread(Executable call) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread other = Thread.ofPlatform().name("other").start(() -> {
            try {
                call.execute();
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        other.join();
        assertTrue(thrown.get() instanceof WrongThreadException, String.valueOf(thrown.get()));
        assertTrue(thrown.get().getMessage().contains("cannot be") && thrown.get().getMessage().contains("\"other\""),
                thrown.get().getMessage());
    }
}
