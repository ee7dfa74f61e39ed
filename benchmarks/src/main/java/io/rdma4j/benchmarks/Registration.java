package io.rdma4j.benchmarks;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.QueuePairType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The control path's rates, beside {@code src/main/c/registration.c} (the same loops in C): memory registrations
 * ({@link ProtectionDomain#registerMemory} + close of one buffer of 4 KiB, 64 KiB, 1 MiB and 64 MiB) and RC queue
 * pairs (create + close) per second on one device. Each loop runs unmeasured for SECONDS (the JIT's compiling
 * takes seconds under emulation), then is counted for SECONDS, the clock read once per iteration as the C loop
 * reads it. Prints {@code register SIZE RATE} and
 * {@code queue-pair 0 RATE} lines, as the C program does.
 *
 * <pre>
 * registration rxe0 [SECONDS]    (default 2)
 * </pre>
 */
public final class Registration {

    private static final long[] SIZES = {4096, 65536, 1 << 20, 64 << 20};
    private static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private Registration() {
    }

    /** Measures on the device named first; prints one line per loop. */
    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: registration DEVICE [SECONDS]");
            System.exit(2);
        }
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2;
        Device device = Device.byName(args[0]).orElseThrow(() -> new IllegalArgumentException("no device "
                + args[0] + " (devices: " + Device.list() + ")"));
        try (Context context = device.open();
             ProtectionDomain pd = context.allocateProtectionDomain();
             CompletionQueue cq = context.createCompletionQueue(32);
             Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(SIZES[SIZES.length - 1], 4096).fill((byte) 1);
            for (long size : SIZES) {
                MemorySegment slice = buffer.asSlice(0, size);
                print("register", size, rate(() -> pd.registerMemory(slice, ACCESS).close(), seconds));
            }
            QueuePairCapabilities caps = new QueuePairCapabilities(16, 16, 1, 1, 0);
            print("queue-pair", 0, rate(() -> pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq)
                    .capabilities(caps).create().close(), seconds));
        }
    }

    /** Runs {@code op} for {@code seconds} unmeasured, then counts it for {@code seconds}. */
    private static double rate(Runnable op, double seconds) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            op.run();
        }
        long start = System.nanoTime();
        end = start + (long) (seconds * 1e9);
        long n = 0;
        long t;
        do {
            op.run();
            n++;
        } while ((t = System.nanoTime()) < end);
        return n / ((t - start) / 1e9);
    }

    private static void print(String what, long size, double rate) {
        System.out.printf(Locale.ROOT, "%s %d %.1f%n", what, size, rate);
        System.out.flush();
    }
}
