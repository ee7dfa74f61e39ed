package io.rdma4j.verbs;

import static io.rdma4j.verbs.ConnectedPair.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("device")
class SharedReceiveQueueTest {

    @Test
    void aQueuePairTakesItsReceivesFromTheSharedQueue() {
        try (Context context = TestDevice.open();
             ConnectedPair pair = ConnectedPair.withSharedReceiveQueue(context);
             MemoryRegion memory = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(2, 1);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(1)) {
            receives.clear().add(21).scatter(memory, 1024, 512).add(22).scatter(memory, 2048, 512);
            assertSame(pair.srq, pair.server.sharedReceiveQueue().orElseThrow());
            pair.srq.postReceive(receives);
            DataPathTest.write(memory, 0, "through the SRQ");
            sends.clear().send(1).gather(memory, 0, 16).signaled();
            pair.client.postSend(sends);
            await(pair.serverCq, completions, 1);
            assertTrue(completions.isSuccess(0), completions.statusText(0));
            assertEquals(21, completions.workRequestId(0));
            assertEquals("through the SRQ", DataPathTest.read(memory, 1024));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pair.server.postReceive(receives),
                    "a QP with an SRQ has no receive queue of its own");
            assertTrue(e.getMessage().contains("shared receive queue"), e.getMessage());
        }
    }

    @Test
    void theLimitEventFiresWhenReceivesRunLow() throws InterruptedException {
        try (Context context = TestDevice.open();
             ConnectedPair pair = ConnectedPair.withSharedReceiveQueue(context);
             MemoryRegion memory = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(4, 1);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(1)) {
            receives.clear();
            for (int i = 0; i < 4; i++) {
                receives.add(i).scatter(memory, i * 64L, 64);
            }
            pair.srq.postReceive(receives);
            pair.srq.armLimit(4);
            try {
                assertEquals(4, pair.srq.query().limit());
            } catch (UnsupportedVerbException e) {
                // siw cannot query an SRQ; the limit event below still shows that the limit was armed.
                assertEquals("ibv_query_srq", e.verb());
            }
            sends.clear().send(9).gather(memory, 0, 8).signaled();
            pair.client.postSend(sends);
            await(pair.serverCq, completions, 1);
            Optional<AsyncEvent> event = context.nextAsyncEvent(Duration.ofSeconds(10));
            assertTrue(event.isPresent(), "IBV_EVENT_SRQ_LIMIT_REACHED");
            assertEquals(AsyncEventType.SRQ_LIMIT_REACHED, event.get().type());
            assertSame(pair.srq, event.get().sharedReceiveQueue());
        }
    }
}
