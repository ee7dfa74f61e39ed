package io.rdma4j.verbs;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;

/**
 * RDMA traffic that checks every byte while the same JVM starts child processes: RDMA WRITEs and SENDs of a pattern
 * that changes every round, each checked where it landed, on a reliable pair of queue pairs, while the main thread
 * starts and reaps children through {@code ProcessBuilder}. Run by {@link ForkDuringTrafficTest} in a JVM of its own
 * with {@code -Djdk.lang.Process.launchMechanism=FORK}, so that each child is a real {@code fork()} of a process
 * with registered memory in use. Prints one {@code fork:} line; exits 0 only if every child and every byte was right.
 *
 * <pre>ForkDuringTraffic CHILDREN</pre>
 */
public final class ForkDuringTraffic {

    private static final int SIZE = 64 * 1024;

    private ForkDuringTraffic() {
    }

    public static void main(String[] args) throws Exception {
        int children = Integer.parseInt(args[0]);
        try (Context context = TestDevice.open();
             ConnectedPair pair = ConnectedPair.reliable(context);
             MemoryRegion source = pair.pd.allocateMemory(SIZE, ConnectedPair.REMOTE_ACCESS);
             MemoryRegion target = pair.pd.allocateMemory(2L * SIZE, ConnectedPair.REMOTE_ACCESS)) {
            AtomicReference<String> broken = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean spawning = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicLong rounds = new java.util.concurrent.atomic.AtomicLong();
            Thread traffic = Thread.ofPlatform().name("traffic").start(() -> {
                try (SendWorkRequests sends = new SendWorkRequests(2, 1);
                     ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
                     WorkCompletions completions = new WorkCompletions(4)) {
                    // At least 50 rounds, and on for as long as children are being started.
                    for (long round = 0; (round < 50 || spawning.get()) && broken.get() == null; round++) {
                        fill(source, round);
                        pair.server.postReceive(receives.clear().add(round).scatter(target, SIZE, SIZE));
                        pair.client.postSend(sends.clear()
                                .rdmaWrite(1, target.address(), target.rkey()).gather(source, 0, SIZE).signaled()
                                .send(2).gather(source, 0, SIZE).signaled());
                        ConnectedPair.await(pair.clientCq, completions, 2);
                        ConnectedPair.await(pair.serverCq, completions, 1);
                        String wrong = check(target, 0, round, "RDMA WRITE");
                        wrong = wrong != null ? wrong : check(target, SIZE, round, "SEND");
                        wrong = wrong != null ? wrong : check(source, 0, round, "the source");
                        if (wrong != null) {
                            broken.set("round " + round + ": " + wrong);
                        }
                        rounds.set(round + 1);
                    }
                } catch (RuntimeException e) {
                    broken.set("traffic failed: " + e);
                }
            });
            int ok = 0;
            for (int i = 0; i < children; i++) {
                Process child = new ProcessBuilder("true").start();
                if (child.waitFor() == 0) {
                    ok++;
                }
            }
            spawning.set(false);
            traffic.join();
            System.out.println("fork: " + ok + " of " + children + " children exited 0, " + rounds.get()
                    + " rounds of traffic " + (broken.get() == null ? "intact" : "BROKEN: " + broken.get())
                    + ", fork safety " + Device.forkSafety() + ", launch mechanism "
                    + System.getProperty("jdk.lang.Process.launchMechanism"));
            System.exit(ok == children && broken.get() == null ? 0 : 1);
        }
    }

    /** Writes round {@code round}'s pattern: every long its index and the round. */
    private static void fill(MemoryRegion region, long round) {
        for (long i = 0; i < SIZE / Long.BYTES; i++) {
            region.segment().set(ValueLayout.JAVA_LONG, i * Long.BYTES, round << 32 | i);
        }
    }

    /** The first long at {@code offset} that is not round {@code round}'s pattern, described, or null. */
    private static String check(MemoryRegion region, long offset, long round, String what) {
        for (long i = 0; i < SIZE / Long.BYTES; i++) {
            long seen = region.segment().get(ValueLayout.JAVA_LONG, offset + i * Long.BYTES);
            if (seen != (round << 32 | i)) {
                return what + ": long " + i + " is 0x" + Long.toHexString(seen) + ", not 0x"
                        + Long.toHexString(round << 32 | i);
            }
        }
        return null;
    }
}
