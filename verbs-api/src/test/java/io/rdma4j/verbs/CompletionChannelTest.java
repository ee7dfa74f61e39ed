package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Sleeping until a completion: notification, timeouts, solicited events, virtual threads. */
@Tag("device")
class CompletionChannelTest extends PairFixture {

    private CompletionChannel channel;
    private MemoryRegion memory;

    CompletionChannelTest() {
        super(2, 1);
    }

    @Override
    ConnectedPair connect(Context device) {
        channel = device.createCompletionChannel();
        return ConnectedPair.reliable(device, b -> b, b -> b, channel);
    }

    @Override
    AutoCloseable closeAfterPair() {
        return channel;
    }

    @BeforeEach
    void postReceives() {
        memory = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
        receives.clear().add(1).scatter(memory, 0, 64).add(2).scatter(memory, 64, 64);
        pair.server.postReceive(receives);
    }

    @Test
    void anArmedQueueWakesTheWaiter() throws InterruptedException {
        pair.serverCq.requestNotification(false);
        sends.clear().send(1).gather(memory, 512, 8);
        pair.client.postSend(sends);
        Optional<CompletionQueue> fired = channel.await(Duration.ofSeconds(10));
        assertSame(pair.serverCq, fired.orElseThrow(() -> new AssertionError("no completion event")));
        assertEquals(1, pair.serverCq.poll(completions));
        assertTrue(completions.isSuccess(0), completions.statusText(0));
    }

    /**
     * A queue whose event another thread took from the channel (and rdma4j has not acknowledged yet: it acknowledges
     * in batches) closes at once: ibv_destroy_cq would otherwise wait forever for the acknowledgement.
     */
    @Test
    void aQueueWhoseEventAnotherThreadTookClosesWithoutWaiting() throws Exception {
        pair.serverCq.requestNotification(false);
        CompletableFuture<Optional<CompletionQueue>> taken = CompletableFuture.supplyAsync(() -> {
            try {
                return channel.await(Duration.ofSeconds(10));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        pair.client.postSend(sends.clear().send(1).gather(memory, 512, 8));
        assertSame(pair.serverCq, taken.get(30, TimeUnit.SECONDS).orElseThrow());
        pair.server.close(); // the queue's only user
        CompletableFuture.runAsync(pair.serverCq::close).get(10, TimeUnit.SECONDS);
        assertTrue(pair.serverCq.isClosed());
    }

    @Test
    void aWaitWithoutEventsEndsAtItsTimeout() throws InterruptedException {
        pair.serverCq.requestNotification(false);
        long start = System.nanoTime();
        assertTrue(channel.await(Duration.ofMillis(300)).isEmpty());
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(elapsedMillis >= 300 && elapsedMillis < 5_000, elapsedMillis + " ms");
    }

    @Test
    void aSolicitedOnlyQueueSleepsThroughUnsolicitedSends() throws InterruptedException {
        assumeFalse(TestDevice.isSoftIwarp(context), "siw (Linux 6.1) drops the solicited flag when it completes a"
                + " receive (siw_rqe_complete notifies with SIW_WQE_SIGNALLED only): solicited-only CQs never fire");
        pair.serverCq.requestNotification(true);
        sends.clear().send(1).gather(memory, 512, 8);
        pair.client.postSend(sends);
        assertTrue(channel.await(Duration.ofMillis(500)).isEmpty(), "an unsolicited send raises no event");
        sends.clear().send(2).gather(memory, 512, 8).solicited();
        pair.client.postSend(sends);
        assertSame(pair.serverCq, channel.await(Duration.ofSeconds(10)).orElseThrow(
                () -> new AssertionError("the solicited send raises an event")));
        int polled = 0;
        while (polled < 2) {
            polled += pair.serverCq.poll(completions);
        }
        assertEquals(2, polled);
    }

    @Test
    void aVirtualThreadWaitsAndCanBeInterrupted() throws Exception {
        pair.serverCq.requestNotification(false);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                channel.await(Duration.ofMinutes(5));
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        Thread.sleep(300);
        waiter.interrupt();
        assertInstanceOf(InterruptedException.class, outcome.get(10, TimeUnit.SECONDS));
    }
}
