package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The echo client's bookkeeping of its wait ({@link Echo.Progress}), no device: a nudge that fails as
 * {@code rdma_server} disconnects right after its answer (seen on siw0 in CI) must not fail an exchange whose answer
 * came, in either order of the two completions, and must be named when the answer does not come.
 */
class EchoProgressTest {

    private static final long RECEIVE = 1;
    private static final String NUDGE_LOST = "local QP operation error";

    @Test
    void aNudgeThatFailsBeforeTheAnswerIsTakenDoesNotFailTheExchange() {
        Echo.Progress progress = waitingAfterANudge();
        progress.take(Echo.NUDGE_ID, false, NUDGE_LOST);
        assertTrue(progress.waiting());
        progress.take(RECEIVE, true, "success");
        assertFalse(progress.waiting());
    }

    @Test
    void aNudgeThatFailsAfterTheAnswerInTheSamePollDoesNotFailTheExchange() {
        Echo.Progress progress = waitingAfterANudge();
        progress.take(RECEIVE, true, "success");
        progress.take(Echo.NUDGE_ID, false, NUDGE_LOST);
        assertFalse(progress.waiting());
    }

    @Test
    void aReceiveFlushedAfterAFailedNudgeFailsNamingBoth() {
        Echo.Progress progress = waitingAfterANudge();
        progress.take(Echo.NUDGE_ID, false, NUDGE_LOST);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> progress.take(RECEIVE, false, "Work Request Flushed Error"));
        assertTrue(e.getMessage().contains("Work Request Flushed Error"), e.getMessage());
        assertTrue(e.getMessage().contains("1 zero-length WRITEs sent to wake the server, the last failed: "
                + NUDGE_LOST), e.getMessage());
    }

    @Test
    void nudgesGoOneAtATimeAndStopOnceOneFailed() {
        Echo.Progress progress = new Echo.Progress();
        progress.expectOneMore();
        assertTrue(progress.mayNudge());
        progress.nudged();
        assertFalse(progress.mayNudge(), "one nudge at a time");
        progress.take(Echo.NUDGE_ID, true, "success");
        assertTrue(progress.mayNudge());
        progress.nudged();
        progress.take(Echo.NUDGE_ID, false, NUDGE_LOST);
        assertFalse(progress.mayNudge(), "the connection is gone");
        assertTrue(progress.waiting(), "a nudge's completion is not the answer");
    }

    @Test
    void aFailedReceiveWithoutNudgesSaysOnlyItsStatus() {
        Echo.Progress progress = new Echo.Progress();
        progress.expectOneMore();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> progress.take(RECEIVE, false, "Work Request Flushed Error"));
        assertEquals("completion Work Request Flushed Error", e.getMessage());
    }

    private static Echo.Progress waitingAfterANudge() {
        Echo.Progress progress = new Echo.Progress();
        progress.expectOneMore();
        progress.nudged();
        return progress;
    }
}
