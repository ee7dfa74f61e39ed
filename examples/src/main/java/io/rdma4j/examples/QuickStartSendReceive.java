package io.rdma4j.examples;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.AddressVector;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.GidEntry;
import io.rdma4j.verbs.GidType;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.util.Set;

/** The README's first quick start: a SEND from one RC queue pair to another on the same RoCE device. */
public final class QuickStartSendReceive {

    private QuickStartSendReceive() {
    }

    /** {@code QuickStartSendReceive DEVICE}, e.g. {@code rxe0}; prints what arrived. */
    public static void main(String[] args) {
        try (Context context = Device.byName(args[0]).orElseThrow().open();
             CompletionQueue cq = context.createCompletionQueue(16);      // before the PD: closed after its QPs
             ProtectionDomain pd = context.allocateProtectionDomain();
             MemoryRegion memory = pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE));
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(2)) {
            QueuePair a = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
            QueuePair b = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
            GidEntry gid = context.gidTable().stream().filter(g -> g.type() == GidType.ROCE_V2).findFirst().orElseThrow();
            AddressVector self = AddressVector.ofGid(gid.gid(), gid.index(), 1);
            for (QueuePair[] ends : new QueuePair[][] {{a, b}, {b, a}}) {
                ends[0].initialize(1, Set.of());
                ends[0].readyToReceive(self, ends[1].number(), 0, context.queryPort(1).activeMtu());
                ends[0].readyToSend(0);
            }
            b.postReceive(receives.clear().add(1).scatter(memory, 2048, 2048));
            memory.segment().setString(0, "hello, RDMA");
            a.postSend(sends.clear().send(2).gather(memory, 0, 12).signaled());
            for (int seen = 0; seen < 2; seen += cq.poll(completions)) {
                Thread.onSpinWait();
            }
            System.out.println("received: " + memory.segment().getString(2048));
        }
    }
}
