package io.rdma4j.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Unit tests: the options' defaults and their refusals, each naming its field (no device). */
class MessagingOptionsTest {

    @Test
    void theDefaultsAreTheDocumentedOnes() {
        MessagingOptions o = MessagingOptions.defaults();
        assertEquals(4096, o.receiveBufferSize());
        assertEquals(32, o.receiveCredits());
        assertEquals(32, o.sendBuffers());
        assertEquals(64, o.inlineSize());
        assertEquals(16, o.operationsInFlight());
        assertEquals(16 << 20, o.maxMessageSize());
        assertEquals(Duration.ofSeconds(5), o.closeTimeout());
    }

    @Test
    void valuesOutOfRangeAreRefusedNamingTheField() {
        IllegalArgumentException credits = assertThrows(IllegalArgumentException.class,
                () -> MessagingOptions.builder().receiveCredits(0).build());
        assertTrue(credits.getMessage().contains("receiveCredits"), credits.getMessage());
        IllegalArgumentException close = assertThrows(IllegalArgumentException.class,
                () -> MessagingOptions.builder().closeTimeout(Duration.ofMillis(-1)).build());
        assertEquals("closeTimeout is negative: PT-0.001S", close.getMessage());
        NullPointerException none = assertThrows(NullPointerException.class,
                () -> MessagingOptions.builder().closeTimeout(null).build());
        assertEquals("closeTimeout", none.getMessage());
        assertEquals(Duration.ZERO, MessagingOptions.builder().closeTimeout(Duration.ZERO).build().closeTimeout());
    }
}
