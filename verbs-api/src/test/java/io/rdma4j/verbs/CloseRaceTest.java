package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.verbs.RdmaCore;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Closes that race a waiter, repeated until the race is met: each close is done once, within seconds, and the
 * waiter goes on. Found by repetition (once in ~200 rounds on rxe0), so tested by repetition.
 */
@Tag("device")
class CloseRaceTest {

    private static final int ROUNDS = 2000;

    /**
     * A queue whose flush completion raised an event is closed while another thread takes that event from the
     * channel: {@code ibv_destroy_cq} waits until every event the kernel handed out is acknowledged, so an event
     * counted after the destroy took the count blocked it for good.
     */
    @Test
    void aCompletionQueueClosedWhileAWaiterTakesItsEventClosesAtOnce() throws Exception {
        try (Context context = TestDevice.open();
             CompletionChannel channel = context.createCompletionChannel();
             ProtectionDomain pd = context.allocateProtectionDomain();
             MemoryRegion memory = pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE));
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1)) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger taken = new AtomicInteger();
            Thread waiter = Thread.ofPlatform().name("cq-event-waiter").start(() -> {
                while (!stop.get()) {
                    try {
                        channel.await(Duration.ofMillis(20)).ifPresent(cq -> taken.incrementAndGet());
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            SplittableRandom random = new SplittableRandom(42);
            for (int round = 0; round < ROUNDS; round++) {
                QueuePair qp = flushedReceive(context, channel, pd, memory, receives, round);
                CompletionQueue cq = qp.receiveCompletionQueue();
                for (int spin = random.nextInt(20_000); spin > 0; spin--) {
                    Thread.onSpinWait();
                }
                closeWithin(round, qp, cq);
            }
            stop.set(true);
            waiter.join(10_000);
            assertTrue(!waiter.isAlive(), "the waiter ended");
            // Proof that the race was run: the waiter took flush events throughout, racing the closes.
            assumeTrue(taken.get() > 0, "SKIPPED: " + TestDevice.device().name() + " raised no completion event for a"
                    + " flushed receive");
            assertTrue(taken.get() > ROUNDS / 20, "events taken: " + taken.get() + " of " + ROUNDS + " rounds");
            System.out.println("close race: " + ROUNDS + " rounds, the waiter took " + taken.get() + " events");
        }
    }

    /**
     * The race's window held open: a waiter has taken an event from the kernel ({@code ibv_get_cq_event}) and not
     * yet counted it when another thread closes the queue. The destroy, blocked in {@code ibv_destroy_cq} until that
     * event is acknowledged, must end once the waiter counts it (the count went to a destroy that had already begun,
     * so the waiter acknowledges it itself). Deterministic where the repeated race above is luck: counting the event
     * as an ordinary one leaves the destroy blocked for good.
     */
    @Test
    void anEventTakenButNotYetCountedWhenTheCloseBeginsIsAcknowledgedByItsTaker() throws Exception {
        try (Context context = TestDevice.open();
             CompletionChannel channel = context.createCompletionChannel();
             ProtectionDomain pd = context.allocateProtectionDomain();
             MemoryRegion memory = pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE));
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
             Arena arena = Arena.ofConfined()) {
            QueuePair qp = flushedReceive(context, channel, pd, memory, receives, 1);
            CompletionQueue cq = qp.receiveCompletionQueue();
            qp.close();
            // The waiter's first half: the event leaves the kernel, as in CompletionChannel's take.
            MemorySegment cqOut = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment contextOut = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment state = Errno.state();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (channel.withPinned(c -> ExportedVerbs.ibv_get_cq_event(state, c, cqOut, contextOut)) != 0) {
                assertEquals(RdmaCore.EAGAIN(), Errno.get(state), "ibv_get_cq_event's errno");
                assumeTrue(System.nanoTime() < deadline, "SKIPPED: " + TestDevice.device().name()
                        + " raised no completion event for a flushed receive");
                Thread.sleep(1);
            }
            MemorySegment taken = cqOut.get(ValueLayout.ADDRESS, 0);
            assertEquals(cq.openAddress(), taken.address());
            Thread closing = Thread.ofPlatform().daemon().name("closing-with-an-event-out").start(cq::close);
            closing.join(500);
            assertTrue(closing.isAlive(), "ibv_destroy_cq waits for the event taken and not acknowledged");
            // The waiter's second half, after the destroy has begun.
            boolean handedOut = cq.eventReceived(taken);
            closing.join(10_000);
            if (closing.isAlive()) {
                RdmaCore.ibv_ack_cq_events(taken, 1); // lets the destroy end, so that the context closes after the failure
                fail("closing the completion queue blocked: the event taken before it began was never acknowledged");
            }
            assertTrue(cq.isClosed());
            assertFalse(handedOut, "an event counted during the destroy belongs to no one");
        }
    }

    /**
     * A completion channel closed while a thread waits in {@code await}, and a context closed while a thread waits
     * for its next async event, round after round: a close refused while the waiter's take is inside its verb leaves
     * the object as it was, the next one closes it for good, and the waiter is woken at once with
     * {@link IllegalStateException} (never left to its 30 s timeout).
     */
    @Test
    void channelsAndContextsClosedUnderAWaiterWakeItEveryTime() throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < ROUNDS / 4; round++) {
            try (Context context = TestDevice.open()) {
                CompletionChannel channel = context.createCompletionChannel();
                closeUnder(round, "completion channel", () -> channel.await(Duration.ofSeconds(30)), channel,
                        random.nextInt(20_000));
                assertTrue(channel.isClosed(), "round " + round);
            }
            Context context = TestDevice.open();
            closeUnder(round, "context", () -> context.nextAsyncEvent(Duration.ofSeconds(30)), context,
                    random.nextInt(20_000));
            assertTrue(context.isClosed(), "round " + round);
        }
    }

    /** What a waiter does: waits on an object until it throws. */
    @FunctionalInterface
    private interface Wait {
        void await() throws InterruptedException;
    }

    /** Starts {@code wait} on a thread, closes {@code object} after {@code spins}, and requires the waiter to end. */
    private static void closeUnder(int round, String what, Wait wait, NativeObject object, int spins)
            throws InterruptedException {
        java.util.concurrent.atomic.AtomicReference<Throwable> ended = new java.util.concurrent.atomic.AtomicReference<>();
        Thread waiter = Thread.ofPlatform().name(what + "-waiter").start(() -> {
            try {
                while (true) {
                    wait.await();
                }
            } catch (Throwable t) {
                ended.set(t);
            }
        });
        for (int spin = spins; spin > 0; spin--) {
            Thread.onSpinWait();
        }
        while (true) {
            try {
                object.close();
                break;
            } catch (IllegalStateException takeRunning) {
                // Refused while the waiter's take is inside its verb: the object stays as it was; close again.
                Thread.onSpinWait();
            }
        }
        waiter.join(5_000);
        if (waiter.isAlive()) {
            fail("round " + round + ": the " + what + "'s waiter still waits after its close");
        }
        assertTrue(ended.get() instanceof IllegalStateException, "round " + round + ", " + what + ": " + ended.get());
    }

    /**
     * A queue pair on a new queue of {@code channel}, armed, whose one receive was flushed: a completion, and the
     * armed queue's event on the channel.
     */
    private static QueuePair flushedReceive(Context context, CompletionChannel channel, ProtectionDomain pd,
            MemoryRegion memory, ReceiveWorkRequests receives, long workRequestId) {
        CompletionQueue cq = context.createCompletionQueue(4, channel, 0);
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        qp.initialize(1, Set.of());
        qp.postReceive(receives.clear().add(workRequestId).scatter(memory, 0, 64));
        cq.requestNotification(false);
        qp.moveToError();
        return qp;
    }

    /** Closes the queue pair, then the queue, on a thread of its own: a close still blocked after 10 s fails. */
    private static void closeWithin(int round, QueuePair qp, CompletionQueue cq) throws InterruptedException {
        Thread closing = Thread.ofPlatform().daemon().name("close-round-" + round).start(() -> {
            qp.close();
            cq.close();
        });
        closing.join(10_000);
        if (closing.isAlive()) {
            fail("round " + round + ": closing the completion queue blocked (ibv_destroy_cq waits for an event that is"
                    + " never acknowledged)");
        }
        assertTrue(cq.isClosed(), "round " + round);
    }
}
