package io.rdma4j.benchmarks;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.QueuePairType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The control path's rates, beside {@code src/main/c/registration.c} (the same loops in C): memory registrations
 * ({@link ProtectionDomain#registerMemory} + close of one buffer of 4 KiB, 64 KiB, 1 MiB and 64 MiB) and RC queue
 * pairs (create + close) per second on one device. First WARMUP registrations of 4 KiB and WARMUP queue pairs, then
 * each loop unmeasured for SECONDS through the counting loop itself (the count matters, not the time: the JIT
 * compiles a method once it has run some thousand times, and under emulation, where the interpreted path of a queue
 * pair takes milliseconds, eight seconds were not enough), and a wait for the JIT to finish compiling what they made
 * hot ({@link JitQuiet}, at most 30 s: its threads share the loops' CPU). Then prints {@code ready} and, for each
 * line {@code register SIZE} or {@code queue-pair 0} it reads, counts that loop for SECONDS, the clock read once per
 * iteration as the C loop reads it, and prints {@code register SIZE RATE} or {@code queue-pair 0 RATE}, as the C
 * program does. LabBench holds both programs open and alternates their windows: one program's rate differed up to 2x
 * between processes of one boot under emulation, C's as Java's, so only windows close in time compare.
 *
 * <pre>
 * printf 'register 4096\nqueue-pair 0\n' | registration rxe0 [SECONDS [WARMUP]]    (defaults 2 and 10000)
 * </pre>
 */
public final class Registration {

    private static final long[] SIZES = {4096, 65536, 1 << 20, 64 << 20};
    /** A line naming a loop: {@code register SIZE} (1 byte to 64 MiB) or {@code queue-pair 0}. */
    private static final Pattern LOOP = Pattern.compile("(register|queue-pair) (\\d{1,9})");
    /** Linux's {@code MADV_NOHUGEPAGE}. */
    private static final int MADV_NOHUGEPAGE = 15;
    private static final MethodHandle MADVISE = libc("madvise", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT), Errno.CAPTURE);
    private static final MethodHandle ALIGNED_ALLOC = libc("aligned_alloc",
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
    private static final MethodHandle FREE = libc("free", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
    private static final Duration JIT_QUIET_MAX = Duration.ofSeconds(30);
    private static final Set<Access> ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private Registration() {
    }

    /** Measures on the device named first; counts the loops that standard input names. */
    public static void main(String[] args) throws InterruptedException, IOException {
        if (args.length < 1) {
            System.err.println("usage: registration DEVICE [SECONDS [WARMUP]] < LOOPS");
            System.exit(2);
        }
        run(args[0], args.length > 1 ? Double.parseDouble(args[1]) : 2,
                args.length > 2 ? Integer.parseInt(args[2]) : 10_000,
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), System.out);
    }

    /**
     * Measures on {@code deviceName}: warms up, prints {@code ready} to {@code out}, then counts each loop that a line
     * of {@code loops} names and prints its rate, until {@code loops} ends.
     *
     * @throws IllegalArgumentException for a line that names no loop
     */
    static void run(String deviceName, double seconds, int warmup, BufferedReader loops, PrintStream out)
            throws InterruptedException, IOException {
        Device device = Device.byName(deviceName).orElseThrow(() -> new IllegalArgumentException("no device "
                + deviceName + " (devices: " + Device.list() + ")"));
        try (Context context = device.open();
             ProtectionDomain pd = context.allocateProtectionDomain();
             CompletionQueue cq = context.createCompletionQueue(32);
             Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = smallPages(SIZES[SIZES.length - 1], arena).fill((byte) 1);
            QueuePairCapabilities caps = QueuePairCapabilities.defaults();
            Runnable queuePair = () -> pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq)
                    .capabilities(caps).create().close();
            Runnable first = registration(pd, buffer.asSlice(0, SIZES[0]));
            for (int i = 0; i < warmup; i++) {
                first.run();
                queuePair.run();
            }
            // Through the counting loop itself, with the two operations it will count: compiled before "ready" (when
            // a loop of its own warmed up instead, the JIT compiled this one during the first counted windows, on
            // their CPU, and recompiled it when the queue pairs' windows brought it a second operation).
            for (long size : SIZES) {
                rate(registration(pd, buffer.asSlice(0, size)), seconds);
            }
            rate(queuePair, seconds);
            JitQuiet.await(JIT_QUIET_MAX);
            out.println("ready");
            out.flush();
            for (String line; (line = loops.readLine()) != null; ) {
                Matcher m = LOOP.matcher(line.strip());
                boolean register = m.matches() && m.group(1).equals("register");
                long size = m.matches() ? Long.parseLong(m.group(2)) : -1;
                if (register ? size < 1 || size > buffer.byteSize() : size != 0) {
                    throw new IllegalArgumentException("no loop \"" + line + "\" (register 1.."
                            + buffer.byteSize() + ", queue-pair 0)");
                }
                MemorySegment slice = buffer.asSlice(0, size);
                double rate = rate(register ? registration(pd, slice) : queuePair, seconds);
                out.printf(Locale.ROOT, "%s %d %.1f%n", m.group(1), size, rate);
                out.flush();
            }
        }
    }

    /**
     * {@code size} bytes in 4 KiB pages, freed with {@code arena}: {@code aligned_alloc} and
     * {@code madvise(MADV_NOHUGEPAGE)} before a page is touched, as registration.c allocates its buffer (an arena's
     * own memory comes zeroed, its pages already in place). Left to transparent huge pages, the lab's programs got
     * them in one process and not in the next, C and Java alike, and rxe registered 1 MiB and 64 MiB about twice as
     * fast in huge pages.
     */
    private static MemorySegment smallPages(long size, Arena arena) {
        try {
            MemorySegment memory = (MemorySegment) ALIGNED_ALLOC.invokeExact(4096L, size);
            if (memory.address() == 0) {
                throw new OutOfMemoryError("aligned_alloc of " + size + " bytes");
            }
            MemorySegment buffer = memory.reinterpret(size, arena, Registration::free);
            MemorySegment state = Errno.state();
            if ((int) MADVISE.invokeExact(state, buffer, size, MADV_NOHUGEPAGE) != 0) {
                throw new IllegalStateException("madvise(MADV_NOHUGEPAGE) failed: errno " + Errno.get(state));
            }
            return buffer;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static MethodHandle libc(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        Linker linker = Linker.nativeLinker();
        return linker.downcallHandle(linker.defaultLookup().findOrThrow(name), descriptor, options);
    }

    private static void free(MemorySegment memory) {
        try {
            FREE.invokeExact(memory);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** A registration + close of {@code slice}: one class for every size, so the counting loop sees two in all. */
    private static Runnable registration(ProtectionDomain pd, MemorySegment slice) {
        return () -> pd.registerMemory(slice, ACCESS).close();
    }

    /** Counts {@code op} for {@code seconds}; returns its rate per second. */
    private static double rate(Runnable op, double seconds) {
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long n = 0;
        long t;
        do {
            op.run();
            n++;
        } while ((t = System.nanoTime()) < end);
        return n / ((t - start) / 1e9);
    }

}
