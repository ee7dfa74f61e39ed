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
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.util.EnumSet;
import java.util.Set;

/** The README's second quick start: an RDMA WRITE into a peer's registered memory, which never sees a CPU. */
public final class QuickStartRdmaWrite {

    private QuickStartRdmaWrite() {
    }

    /** {@code QuickStartRdmaWrite DEVICE}, e.g. {@code rxe0}; prints what the target memory holds afterwards. */
    public static void main(String[] args) {
        Set<Access> remoteWrite = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        try (Context context = Device.byName(args[0]).orElseThrow().open();
             CompletionQueue cq = context.createCompletionQueue(16);      // before the PD: closed after its QPs
             ProtectionDomain pd = context.allocateProtectionDomain();
             MemoryRegion source = pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE));
             MemoryRegion target = pd.allocateMemory(4096, remoteWrite);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(1)) {
            QueuePair writer = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
            QueuePair owner = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq).create();
            GidEntry gid = context.gidTable().stream().filter(g -> g.type() == GidType.ROCE_V2).findFirst().orElseThrow();
            AddressVector self = AddressVector.ofGid(gid.gid(), gid.index(), 1);
            for (QueuePair[] ends : new QueuePair[][] {{writer, owner}, {owner, writer}}) {
                ends[0].initialize(1, remoteWrite);
                ends[0].readyToReceive(self, ends[1].number(), 0, context.queryPort(1).activeMtu());
                ends[0].readyToSend(0);
            }
            source.segment().setString(0, "written by RDMA");
            // The peer hands out target.address() and target.rkey(); here both ends are in one process.
            writer.postSend(sends.clear().rdmaWrite(1, target.address(), target.rkey()).gather(source, 0, 16).signaled());
            while (cq.poll(completions) == 0) {
                Thread.onSpinWait();
            }
            System.out.println(completions.status(0) + ": target holds \"" + target.segment().getString(0) + "\"");
        }
    }
}
