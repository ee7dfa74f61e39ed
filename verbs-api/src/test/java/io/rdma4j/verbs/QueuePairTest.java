package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("device")
class QueuePairTest {

    private Context context;
    private ProtectionDomain pd;
    private CompletionQueue cq;

    @BeforeEach
    void open() {
        context = TestDevice.open();
        pd = context.allocateProtectionDomain();
        cq = context.createCompletionQueue(16);
    }

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void createdQueuePairsAreInResetWithTheGrantedSizes() {
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq)
                .capabilities(QueuePairCapabilities.defaults().withSendQueue(8).withReceiveQueue(8)).create();
        assertNotEquals(0, qp.number());
        assertTrue(qp.capabilities().maxSendWorkRequests() >= 8, qp.capabilities().toString());
        assertTrue(qp.capabilities().maxReceiveWorkRequests() >= 8, qp.capabilities().toString());
        assertEquals(QueuePairState.RESET, qp.state());
        qp.close();
        qp.close();
        assertThrows(IllegalStateException.class, qp::state);
    }

    @Test
    void initializeSetsPortAndAccess() {
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        qp.initialize(1, Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        QueuePairAttributes attributes = qp.query();
        assertTrue(attributes.access().contains(Access.REMOTE_READ), attributes.access().toString());
        if (context.device().transport() != Transport.IWARP) {
            assertEquals(QueuePairState.INIT, attributes.state());
            assertEquals(1, attributes.port());
        }
    }

    @Test
    void aTransitionTheStateDoesNotAllowIsAnIllegalStateException() {
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> qp.readyToSend(0));
        assertTrue(e.getMessage().contains("cannot move from RESET to READY_TO_SEND"), e.getMessage());
        assertInstanceOf(VerbException.class, e.getCause());
        assertEquals("ibv_modify_qp", ((VerbException) e.getCause()).verb());
    }

    @Test
    void missingRequiredAttributesAreNamed() {
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> qp.modify(new QueuePairAttributes().state(QueuePairState.INIT).port(1)));
        assertTrue(e.getMessage().contains("IBV_QP_ACCESS_FLAGS"), e.getMessage());
    }

    @Test
    void postingToAResetQueuePairIsRefused() {
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        try (MemoryRegion mr = pd.allocateMemory(64, Set.of(Access.LOCAL_WRITE));
             SendWorkRequests sends = new SendWorkRequests(1, 1)) {
            sends.clear().send(1).gather(mr, 0, 8).signaled();
            PostException e = assertThrows(PostException.class, () -> qp.postSend(sends));
            assertEquals("ibv_post_send", e.verb());
            assertTrue(e.index() == 0 || e.index() == -1, "the first request, or unknown: " + e.index());
        }
    }

    @Test
    void aQueuePairNeedsCompletionQueues() {
        assertThrows(IllegalStateException.class, () -> pd.queuePair(QueuePairType.RELIABLE_CONNECTED).create());
    }

    @Test
    void unreliableDatagramQueuePairsExistWhereTheTransportHasThem() {
        QueuePair qp;
        try {
            qp = pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM).completionQueue(cq).create();
        } catch (UnsupportedVerbException e) {
            assertEquals(Transport.IWARP, context.device().transport(), "only iWARP lacks UD: " + e.getMessage());
            abort("the provider has no UD queue pairs (" + e.getMessage() + ")");
            return;
        }
        qp.initialize(1, 0x1111_1111);
        qp.readyToReceive();
        qp.readyToSend(0);
        assertEquals(QueuePairState.READY_TO_SEND, qp.state());
        assertEquals(0x1111_1111, qp.query().qkey());
    }

    @Test
    void closingTheCompletionQueueUnderALiveQueuePairFailsAndLeavesItUsable() {
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
        IllegalStateException e = assertThrows(IllegalStateException.class, cq::close);
        assertTrue(e.getMessage().contains("is still used by [QueuePair@0x"), e.getMessage());
        assertTrue(!cq.isClosed());
        try (WorkCompletions completions = new WorkCompletions(1)) {
            assertEquals(0, cq.poll(completions), "still usable");
        }
        qp.close();
        cq.close();
        assertTrue(cq.isClosed());
    }

    @Test
    void aQueuePairNamesItsQueuesAndHoldsEachUntilItCloses() {
        CompletionQueue receives = context.createCompletionQueue(16);
        QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).sendCompletionQueue(cq)
                .receiveCompletionQueue(receives).create();
        assertSame(cq, qp.sendCompletionQueue());
        assertSame(receives, qp.receiveCompletionQueue());
        assertTrue(qp.sharedReceiveQueue().isEmpty());
        assertThrows(IllegalStateException.class, cq::close);
        assertThrows(IllegalStateException.class, receives::close);
        // One CQ for both queues is one use: closing the second QP releases it entirely.
        QueuePair shared = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(receives).create();
        assertSame(shared.sendCompletionQueue(), shared.receiveCompletionQueue());
        qp.close();
        cq.close();
        assertThrows(IllegalStateException.class, receives::close);
        shared.close();
        receives.close();
        assertTrue(receives.isClosed());
    }
}
