package io.rdma4j.benchmarks;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.QueuePairType;
import java.lang.foreign.Arena;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The control path's rates, beside {@code src/main/c/registration.c} (the same loops in C): memory registrations
 * ({@link ProtectionDomain#registerMemory} + close of one buffer of 4 KiB, 64 KiB, 1 MiB and 64 MiB) and RC queue
 * pairs (create + close) per second on one device. First WARMUP registrations of 4 KiB and WARMUP queue pairs, and
 * a wait for the JIT to finish compiling what they made hot ({@link JitQuiet}, at most 30 s), then each loop runs
 * unmeasured for SECONDS and is counted for SECONDS, the clock read once per iteration as the C loop
 * reads it. The count matters, not the time: the JIT compiles a method once it has run some thousand times, and
 * under emulation, where the interpreted path of a queue pair takes milliseconds, eight seconds were not enough.
 * Prints {@code register SIZE RATE} and {@code queue-pair 0 RATE} lines, as the C program does.
 *
 * <pre>
 * registration rxe0 [SECONDS [WARMUP]]    (defaults 2 and 10000)
 * </pre>
 */
public final class Registration {

    private static final long[] SIZES = {4096, 65536, 1 << 20, 64 << 20};
    private static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private Registration() {
    }

    /** Measures on the device named first; prints one line per loop. */
    public static void main(String[] args) throws InterruptedException {
        if (args.length < 1) {
            System.err.println("usage: registration DEVICE [SECONDS [WARMUP]]");
            System.exit(2);
        }
        run(args[0], args.length > 1 ? Double.parseDouble(args[1]) : 2,
                args.length > 2 ? Integer.parseInt(args[2]) : 10_000, System.out);
    }

    /** Measures on {@code deviceName}; prints one line per loop to {@code out}. */
    static void run(String deviceName, double seconds, int warmup, PrintStream out) throws InterruptedException {
        Device device = Device.byName(deviceName).orElseThrow(() -> new IllegalArgumentException("no device "
                + deviceName + " (devices: " + Device.list() + ")"));
        try (Context context = device.open();
             ProtectionDomain pd = context.allocateProtectionDomain();
             CompletionQueue cq = context.createCompletionQueue(32);
             Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(SIZES[SIZES.length - 1], 4096).fill((byte) 1);
            QueuePairCapabilities caps = new QueuePairCapabilities(16, 16, 1, 1, 0);
            Runnable queuePair = () -> pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq)
                    .capabilities(caps).create().close();
            MemorySegment first = buffer.asSlice(0, SIZES[0]);
            for (int i = 0; i < warmup; i++) {
                pd.registerMemory(first, ACCESS).close();
                queuePair.run();
            }
            JitQuiet.await(Duration.ofSeconds(30));
            for (long size : SIZES) {
                MemorySegment slice = buffer.asSlice(0, size);
                print(out, "register", size, rate(() -> pd.registerMemory(slice, ACCESS).close(), seconds));
            }
            print(out, "queue-pair", 0, rate(queuePair, seconds));
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

    private static void print(PrintStream out, String what, long size, double rate) {
        out.printf(Locale.ROOT, "%s %d %.1f%n", what, size, rate);
        out.flush();
    }
}
