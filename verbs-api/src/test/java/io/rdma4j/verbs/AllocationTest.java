package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The data path allocates nothing: post a receive, post a send, poll both completions, 10,000 times. */
@Tag("device")
class AllocationTest {

    private static final int WARM_UP_ROUNDS = 20_000;
    private static final int MEASURED_ROUNDS = 10_000;

    /**
     * {@code com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes()}, reached reflectively because the
     * test module does not read jdk.management, and called through an exact handle so that the measurement itself
     * allocates nothing.
     */
    private static long allocatedBytes(MethodHandle counter, Object threads) {
        try {
            return (long) counter.invokeExact(threads);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    @Test
    void postAndPollAllocateNothing() throws ReflectiveOperationException {
        Object threads = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean")
                .invoke(null);
        MethodHandle counter = MethodHandles.publicLookup()
                .unreflect(Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes"))
                .asType(MethodType.methodType(long.class, Object.class));
        try (Context context = TestDevice.open();
             ConnectedPair pair = ConnectedPair.reliable(context);
             MemoryRegion memory = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(4)) {
            rounds(pair, memory, sends, receives, completions, WARM_UP_ROUNDS);
            long before = allocatedBytes(counter, threads);
            long checksum = rounds(pair, memory, sends, receives, completions, MEASURED_ROUNDS);
            long allocated = allocatedBytes(counter, threads) - before;
            assertEquals((long) MEASURED_ROUNDS * (MEASURED_ROUNDS - 1), checksum,
                    "every round completed with its own work request ids");
            assertEquals(0, allocated, allocated + " bytes allocated in " + MEASURED_ROUNDS + " rounds ("
                    + (double) allocated / MEASURED_ROUNDS + " per round)");
            assertTrue(completions.isSuccess(0));
        }
    }

    /** Returns the sum of the completed work request ids, so that the loop's work is observable. */
    private static long rounds(ConnectedPair pair, MemoryRegion memory, SendWorkRequests sends,
                               ReceiveWorkRequests receives, WorkCompletions completions, int count) {
        long sum = 0;
        for (int i = 0; i < count; i++) {
            receives.clear().add(i).scatter(memory, 0, 64);
            pair.server.postReceive(receives);
            sends.clear().send(i).gather(memory, 64, 64).signaled();
            pair.client.postSend(sends);
            sum += pollOne(pair.clientCq, completions);
            sum += pollOne(pair.serverCq, completions);
        }
        return sum;
    }

    private static long pollOne(CompletionQueue cq, WorkCompletions completions) {
        while (cq.poll(completions) == 0) {
            Thread.onSpinWait();
        }
        if (!completions.isSuccess(0)) {
            throw new AssertionError(completions.statusText(0));
        }
        return completions.workRequestId(0);
    }
}
