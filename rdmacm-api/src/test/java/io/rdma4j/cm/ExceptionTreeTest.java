package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.bindings.shim.NativeLibraries;
import io.rdma4j.verbs.PostException;
import io.rdma4j.verbs.RdmaException;
import io.rdma4j.verbs.UnsupportedVerbException;
import io.rdma4j.verbs.VerbException;
import io.rdma4j.verbs.WorkCompletionException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Unit tests, no device: every failure of every module has the one root, and says what it was about. */
class ExceptionTreeTest {

    @BeforeAll
    static void libraries() {
        NativeLibraries.require();
    }

    @Test
    void everyFailureTypeHasTheOneRoot() {
        for (Class<?> type : new Class<?>[] {VerbException.class, UnsupportedVerbException.class, PostException.class,
                WorkCompletionException.class, ConnectionException.class}) {
            assertTrue(RdmaException.class.isAssignableFrom(type), type + " is an RdmaException");
        }
        assertFalse(RdmaException.class.isAssignableFrom(IllegalArgumentException.class), "misuse is no failure");
    }

    @Test
    void aRejectByThePeersApplicationIsToldFromNobodyListening() {
        ConnectionException consumer = ConnectionException.failed("connect to 192.0.2.1:7471", rejected(28, "busy"));
        assertEquals(Optional.of(RejectReason.CONSUMER), consumer.rejectReason());
        assertEquals("connect to 192.0.2.1:7471 failed: REJECTED (the peer's application rejected the connection,"
                + " InfiniBand CM reject reason 28 (consumer defined), 4 bytes of private data)", consumer.getMessage());
        assertEquals("busy", new String(consumer.rejectPrivateData(), java.nio.charset.StandardCharsets.US_ASCII));

        ConnectionException nobody = ConnectionException.failed("connect to 192.0.2.1:7471", rejected(8, ""));
        assertEquals(Optional.of(RejectReason.NO_LISTENER), nobody.rejectReason());
        assertTrue(nobody.getMessage().contains("nobody listens at that address and port, InfiniBand CM reject reason 8"
                + " (invalid service ID)"), nobody.getMessage());

        ConnectionException iwarp = ConnectionException.failed("connect to 198.51.100.1:7471", rejected(-104, "busy"));
        assertEquals(Optional.of(RejectReason.REJECTED_OR_RESET), iwarp.rejectReason());
        assertTrue(iwarp.getMessage().contains("the peer's application rejected it, or the connection was reset during"
                + " the exchange, iWARP status -104"), iwarp.getMessage());
        assertEquals(Optional.of(RejectReason.NO_LISTENER),
                ConnectionException.failed("x", rejected(-111, "")).rejectReason());
        assertEquals(Optional.of(RejectReason.TIMEOUT), ConnectionException.failed("x", rejected(4, "")).rejectReason());
        assertEquals(Optional.of(RejectReason.OTHER), ConnectionException.failed("x", rejected(26, "")).rejectReason());
        assertTrue(ConnectionException.failed("x", rejected(26, "")).getMessage().contains("(invalid MTU)"));
        assertEquals(Optional.of(RejectReason.OTHER), ConnectionException.failed("x", rejected(99, "")).rejectReason());
    }

    @Test
    void otherEventsAndFailedCallsCarryNoRejectReason() {
        CmEvent unreachable = new CmEvent(CmEventType.UNREACHABLE, 0, -110, null, null, new byte[0], null, null);
        ConnectionException e = ConnectionException.failed("connect to 192.0.2.1:7471", unreachable);
        assertEquals(Optional.empty(), e.rejectReason());
        assertEquals("connect to 192.0.2.1:7471 failed: UNREACHABLE (status -110)", e.getMessage());

        VerbException refused = VerbException.of("rdma_connect", 111);
        ConnectionException call = ConnectionException.failed("connect to 198.51.100.1:7471", refused);
        assertSame(refused, call.getCause());
        assertEquals(Optional.empty(), call.rejectReason());
        assertFalse(call.isTimeout());
    }

    @Test
    void aStepThatRanOutSaysWhichBoundItWas() {
        ConnectionException e = ConnectionException.timedOut("connect to 192.0.2.1:7471", CmEventType.ESTABLISHED,
                " within the connect timeout of " + Duration.ofSeconds(3) + " (this step had 1 ms of it left)");
        assertTrue(e.isTimeout());
        assertEquals("connect to 192.0.2.1:7471: no ESTABLISHED within the connect timeout of PT3S (this step had 1 ms"
                + " of it left)", e.getMessage());
    }

    @Test
    void aStepWaitsItsOwnLimitOrWhatIsLeftOfTheCallersAndFailsAtOnceWhenNothingIs() {
        // No channel: budget reads only the clock (and the builders are not closed: they hold nothing).
        Connection.Builder parts = new Connection.Builder(ConnectionOptions.defaults(), null, Duration.ofSeconds(3),
                "connect timeout");
        Connection.Builder.Wait resolve = parts.budget("resolve address", CmEventType.ADDRESS_RESOLVED,
                    Duration.ofSeconds(2), "resolve timeout");
        assertEquals(Duration.ofSeconds(2), resolve.duration());
        assertEquals("the resolve timeout of PT2S", resolve.bound());
        Connection.Builder.Wait connect = parts.budget("connect", CmEventType.ESTABLISHED, null, null);
        assertTrue(connect.duration().compareTo(Duration.ofSeconds(3)) <= 0, connect.toString());
        assertTrue(connect.bound().startsWith("the connect timeout of PT3S (this step had "), connect.bound());

        Connection.Builder spent = new Connection.Builder(ConnectionOptions.defaults(), null, Duration.ZERO,
                "connect timeout");
        ConnectionException e = org.junit.jupiter.api.Assertions.assertThrows(ConnectionException.class,
                () -> spent.budget("resolve route to 192.0.2.1:7471", CmEventType.ROUTE_RESOLVED,
                        Duration.ofSeconds(2), "resolve timeout"));
        assertEquals("resolve route to 192.0.2.1:7471: no ROUTE_RESOLVED: the connect timeout of PT0S ran out before"
                + " this step", e.getMessage());
        assertTrue(e.isTimeout());
        assertEquals(Duration.ofMillis(1), new Connection.Builder.Wait(Duration.ofNanos(5), "x").atLeastAMillisecond());
    }

    private static CmEvent rejected(int status, String privateData) {
        return new CmEvent(CmEventType.REJECTED, 0, status, null, null,
                privateData.getBytes(java.nio.charset.StandardCharsets.US_ASCII), null, null);
    }
}
