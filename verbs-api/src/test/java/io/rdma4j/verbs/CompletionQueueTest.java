package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("device")
class CompletionQueueTest {

    @Test
    void holdsAtLeastWhatWasAskedFor() {
        try (Context context = TestDevice.open(); CompletionQueue cq = context.createCompletionQueue(100)) {
            assertTrue(cq.capacity() >= 100, "capacity " + cq.capacity());
        }
    }

    @Test
    void beyondTheDeviceLimitIsAVerbError() {
        try (Context context = TestDevice.open()) {
            int tooMany = context.queryDevice().maxCompletionQueueEntries() + 1;
            VerbException e = assertThrows(VerbException.class, () -> context.createCompletionQueue(tooMany));
            assertTrue(e.getMessage().startsWith("ibv_create_cq failed: errno "), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> context.createCompletionQueue(0));
        }
    }

    @Test
    void closeIsIdempotent() {
        try (Context context = TestDevice.open()) {
            CompletionQueue cq = context.createCompletionQueue(4);
            cq.close();
            cq.close();
            assertTrue(cq.isClosed());
        }
    }
}
