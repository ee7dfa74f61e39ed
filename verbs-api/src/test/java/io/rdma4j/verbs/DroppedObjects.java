package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.NativeResource;
import java.util.List;
import java.util.Set;

/**
 * Drops objects unclosed under a protection domain and context that stay open, as an application that forgets to
 * close its per-request regions does: regions of 4 KiB, queue pairs, completion queues each with its own channel (a
 * file descriptor each), regions of 1 MiB. After every 20 it collects garbage and lets the Cleaner catch up, so
 * that what is live stays bounded (siw gives one context only about 70 live queue pairs, and then fails
 * {@code ibv_create_qp} without setting errno). Waits until the Cleaner has closed them all, then prints what it
 * dropped, what the Cleaner closed, and what the kernel still holds of this process.
 * Run by {@link DroppedObjectsTest} in a JVM of its own (the warnings and the count are per process).
 *
 * <pre>DroppedObjects REGIONS QUEUE_PAIRS QUEUES BIG_REGIONS</pre>
 */
public final class DroppedObjects {

    private DroppedObjects() {
    }

    public static void main(String[] args) throws Exception {
        int regions = Integer.parseInt(args[0]);
        int queuePairs = Integer.parseInt(args[1]);
        int queues = Integer.parseInt(args[2]);
        int bigRegions = Integer.parseInt(args[3]);
        try (Context context = TestDevice.open();
             CompletionQueue kept = context.createCompletionQueue(16);
             ProtectionDomain pd = context.allocateProtectionDomain()) {
            long dropped = 0;
            for (int i = 0; i < regions; i++) {
                pd.allocateMemory(4096, Set.of(Access.LOCAL_WRITE));
                collectEvery20(++dropped);
            }
            for (int i = 0; i < queuePairs; i++) {
                pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(kept).create();
                collectEvery20(++dropped);
            }
            for (int i = 0; i < queues; i++) {
                context.createCompletionQueue(4, context.createCompletionChannel(), 0);
                dropped += 2;
                // Counted in pairs: every 20 objects is every 10th queue.
                collectEvery20(dropped);
            }
            for (int i = 0; i < bigRegions; i++) {
                pd.allocateMemory(1 << 20, Set.of(Access.LOCAL_WRITE));
                collectEvery20(++dropped);
            }
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (NativeResource.leaksReclaimed() < dropped && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(100);
            }
            System.out.println("dropped " + dropped + ", closed by the Cleaner " + NativeResource.leaksReclaimed());
            for (String kind : List.of("mr", "qp", "cq")) {
                System.out.println("kernel " + kind + " " + LeftoverResourcesTest.ours(kind).size());
            }
            System.out.println("open descriptors " + openDescriptors());
        }
    }

    /** Every 20 objects: a collection, then up to 10 s for the Cleaner to close all but the last 20 dropped. */
    private static void collectEvery20(long dropped) throws InterruptedException {
        if (dropped % 20 != 0) {
            return;
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        do {
            System.gc();
            Thread.sleep(5);
        } while (NativeResource.leaksReclaimed() < dropped - 20 && System.nanoTime() < deadline);
    }

    private static long openDescriptors() throws java.io.IOException {
        try (var fds = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
