package io.rdma4j.verbs;

import static io.rdma4j.verbs.ConnectedPair.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** UD: connectionless sends through an address handle. */
@Tag("device")
class UnreliableDatagramTest {

    private static final int QKEY = 0x1234_5678;
    /** UD receives start with room for the 40-byte global route header. */
    private static final int GRH = 40;

    @Test
    void aDatagramReachesItsQueuePairThroughAnAddressHandle() {
        try (Context context = TestDevice.open()) {
            assumeFalse(context.device().transport() == Transport.IWARP, "iWARP is connected-only: no UD");
            ProtectionDomain pd = context.allocateProtectionDomain();
            CompletionQueue sendCq = context.createCompletionQueue(8);
            CompletionQueue receiveCq = context.createCompletionQueue(8);
            QueuePair sender = pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM).completionQueue(sendCq).create();
            QueuePair receiver = pd.queuePair(QueuePairType.UNRELIABLE_DATAGRAM).completionQueue(receiveCq).create();
            for (QueuePair qp : new QueuePair[] {sender, receiver}) {
                qp.initialize(1, QKEY);
                qp.readyToReceive();
                qp.readyToSend(0);
            }
            GidEntry gid = ConnectedPair.gid(context);
            AddressHandle ah = pd.createAddressHandle(AddressVector.ofGid(gid.gid(), gid.index(), 1));
            try (MemoryRegion memory = pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
                 ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
                 SendWorkRequests sends = new SendWorkRequests(1, 1);
                 WorkCompletions completions = new WorkCompletions(1)) {
                receives.clear().add(5).scatter(memory, 1024, GRH + 256);
                receiver.postReceive(receives);
                DataPathTest.write(memory, 0, "a datagram");
                sends.clear().send(6).gather(memory, 0, 32).destination(ah, receiver.number(), QKEY).signaled();
                sender.postSend(sends);

                await(sendCq, completions, 1);
                assertTrue(completions.isSuccess(0), completions.statusText(0));
                await(receiveCq, completions, 1);
                assertTrue(completions.isSuccess(0), completions.statusText(0));
                assertEquals(5, completions.workRequestId(0));
                assertEquals(GRH + 32, completions.byteLength(0));
                assertTrue(completions.hasGlobalRouteHeader(0), "RoCE datagrams carry a GRH");
                assertEquals(sender.number(), completions.sourceQueuePair(0));
                assertEquals("a datagram", DataPathTest.read(memory, 1024 + GRH));
            }
        }
    }
}
