package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An event channel closed while another thread takes events from it, repeated: a close refused while the take runs
 * leaves the channel as it was, the next close closes it for good (fd, ids, rdma_cm state), and the waiter is
 * woken with {@link IllegalStateException} at once, never left to sleep to its timeout.
 */
@Tag("device")
class EventChannelCloseRaceTest {

    private static final int ROUNDS = 2000;

    @Test
    void everyCloseEndsClosedAndWakesTheWaiter() throws Exception {
        int refused = 0;
        for (int round = 0; round < ROUNDS; round++) {
            EventChannel channel = EventChannel.create();
            CmId id = channel.createId(PortSpace.TCP);
            AtomicReference<Throwable> ended = new AtomicReference<>();
            boolean busy = round % 2 == 0;
            Thread waiter = Thread.ofPlatform().name("cm-event-waiter").start(() -> {
                try {
                    // Half the rounds take in a tight loop (the take is pinned most of the time), half park.
                    while (true) {
                        channel.next(busy ? Duration.ZERO : Duration.ofSeconds(30));
                    }
                } catch (Throwable t) {
                    ended.set(t);
                }
            });
            while (true) {
                try {
                    channel.close();
                    break;
                } catch (IllegalStateException inUse) {
                    refused++;
                }
            }
            assertTrue(channel.isClosed(), "round " + round + ": closed");
            assertTrue(id.state() == CmIdState.CLOSED, "round " + round + ": its id closed");
            assertThrows(IllegalStateException.class, channel::fileDescriptor, "round " + round);
            waiter.join(5_000);
            assertFalse(waiter.isAlive(), "round " + round + ": the waiter still sleeps after the close");
            assertTrue(ended.get() instanceof IllegalStateException, "round " + round + ": " + ended.get());
        }
        System.out.println("event channel close race: " + ROUNDS + " rounds, " + refused + " closes refused while a"
                + " take ran");
    }
}
