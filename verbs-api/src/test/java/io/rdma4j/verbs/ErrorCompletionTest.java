package io.rdma4j.verbs;

import static io.rdma4j.verbs.ConnectedPair.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Bad work requests end as error completions (and async events), never as crashes or hangs. */
@Tag("device")
class ErrorCompletionTest extends PairFixture {

    private MemoryRegion memory;

    ErrorCompletionTest() {
        super(4, 1);
    }

    @BeforeEach
    void registerMemory() {
        memory = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
    }

    @Test
    void aGatherEntryOutsideTheRegionIsALocalProtectionError() {
        sends.clear().rdmaWrite(1, memory.address(), memory.rkey())
                .gatherUnchecked(memory.address() + memory.length(), 64, memory.lkey()).signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertEquals(1, completions.workRequestId(0));
        assertFalse(completions.isSuccess(0));
        // rxe reports the protection error itself; siw fails the work request as a local QP operation error.
        assertEquals(iwarp() ? WorkCompletionStatus.LOCAL_QP_OPERATION_ERROR : WorkCompletionStatus.LOCAL_PROTECTION_ERROR,
                completions.status(0), completions.statusText(0));
    }

    /**
     * The defaults surface a dead peer: work sent to a queue pair that is gone ends in an error completion within
     * seconds (Soft-RoCE retries forever with the retry count 7 that used to be the default).
     */
    @Test
    void workSentToAPeerThatIsGoneEndsInAnErrorWithinSeconds() {
        assumeFalse(iwarp(), "iWARP has no transport retry count: TCP and the connection manager notice a vanished"
                + " peer, and siw (Linux 6.1) completes no WRITE to a destroyed peer QP at all (none in 10 s)");
        pair.server.close();
        long start = System.nanoTime();
        pair.client.postSend(sends.clear().rdmaWrite(9, memory.address(), memory.rkey()).gather(memory, 0, 64)
                .signaled());
        await(pair.clientCq, completions, 1); // fails after 10 s
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(WorkCompletionStatus.RETRY_EXCEEDED_ERROR, completions.status(0), completions.statusText(0));
        System.out.println("dead peer reported after " + millis + " ms: " + completions.statusText(0));
    }

    @Test
    void readingWithAWrongRemoteKeyIsARemoteAccessError() {
        sends.clear().rdmaRead(2, memory.address(), memory.rkey() ^ 0x5500).gather(memory, 0, 64).signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertEquals(2, completions.workRequestId(0));
        // siw: the target answers with an iWARP TERMINATE, which moves the QP to error and flushes the READ.
        assertEquals(iwarp() ? WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR : WorkCompletionStatus.REMOTE_ACCESS_ERROR,
                completions.status(0), completions.statusText(0));
        // The same failure as the exception a caller that waited on the READ gets.
        WorkCompletionException failure = completions.failure(0, WorkCompletionOpcode.RDMA_READ, "reading the peer");
        assertEquals(WorkCompletionOpcode.RDMA_READ, failure.opcode());
        assertEquals(2, failure.workRequestId());
        assertEquals(pair.client.number(), failure.queuePairNumber());
        assertEquals(completions.status(0), failure.status());
        assertEquals(completions.statusText(0), failure.statusText());
        assertEquals(completions.vendorError(0), failure.vendorError());
        assertTrue(failure.getMessage().startsWith("reading the peer: RDMA_READ (work request 2) on QP 0x"
                + Integer.toHexString(pair.client.number()) + " completed with " + failure.status() + " ("
                + failure.statusText() + ", status "), failure.getMessage());
        assertInstanceOf(RdmaException.class, failure);
    }

    @Test
    void aReceiveBufferTheTargetMayNotWriteIsAQueuePairAsyncEvent() throws InterruptedException {
        assumeFalse(!iwarp(), "rxe (Linux 6.1) raises no QP async events, only CQ, SRQ, SQ-drained and port ones");
        receives.clear().add(1).scatterUnchecked(memory.address(), 64, memory.lkey() ^ 0x5500);
        pair.server.postReceive(receives);
        sends.clear().send(2).gather(memory, 0, 64).signaled();
        pair.client.postSend(sends);
        Optional<AsyncEvent> event = context.nextAsyncEvent(Duration.ofSeconds(10));
        assertTrue(event.isPresent(), "the receiving QP reports the bad buffer asynchronously");
        assertEquals(AsyncEventType.QP_ACCESS_ERROR, event.get().type(), event.get().toString());
        assertSame(pair.server, event.get().queuePair(), event.get().toString());
    }

    @Test
    void aSendWithoutAReceiveExhaustsTheRnrRetries() {
        assumeFalse(iwarp(),
                "iWARP has no receiver-not-ready flow control: a send without a receive terminates the stream");
        pair.close();
        pair = ConnectedPair.reliable(context, rts -> rts.rnrRetry(0));
        memory = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
        sends.clear().send(3).gather(memory, 0, 8).signaled();
        pair.client.postSend(sends);
        await(pair.clientCq, completions, 1);
        assertEquals(WorkCompletionStatus.RNR_RETRY_EXCEEDED_ERROR, completions.status(0), completions.statusText(0));
    }

    private boolean iwarp() {
        return context.device().transport() == Transport.IWARP;
    }

    @Test
    void movingToErrorFlushesPostedWork() {
        receives.clear().add(10).scatter(memory, 0, 64).add(11).scatter(memory, 64, 64);
        pair.server.postReceive(receives);
        pair.server.moveToError();
        for (long expected = 10; expected <= 11; expected++) {
            await(pair.serverCq, completions, 1);
            assertEquals(expected, completions.workRequestId(0));
            assertEquals(WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR, completions.status(0), completions.statusText(0));
        }
    }

    @Test
    void aQueuePairInErrorCanBeResetAndSetUpAgain() {
        pair.client.moveToError();
        pair.client.reset();
        if (context.device().transport() != Transport.IWARP) {
            assertEquals(QueuePairState.RESET, pair.client.state());
        }
        pair.client.initialize(1, ConnectedPair.REMOTE_ACCESS);
    }
}
