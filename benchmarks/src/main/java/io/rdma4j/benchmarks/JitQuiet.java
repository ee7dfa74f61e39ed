package io.rdma4j.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * Waits, after a warm-up, until this JVM's JIT compiler threads have stopped working: their CPU time (Linux's
 * {@code /proc/self/task}) unchanged for half a second. Under emulation a C2 compilation of a hot loop takes
 * seconds, and a benchmark pinned to one CPU shares that CPU with the compiler threads: a measurement that starts
 * while they still compile what the warm-up queued is partly a measurement of the compiler. (The JVM's own counter,
 * {@code CompilationMXBean.getTotalCompilationTime}, moves only when a compilation ends.)
 */
final class JitQuiet {

    private static final long QUIET_NANOS = Duration.ofMillis(500).toNanos();

    private JitQuiet() {
    }

    /** Waits until the compiler threads are quiet, or {@code max} has passed; returns how long it waited. */
    static Duration await(Duration max) throws InterruptedException {
        long start = System.nanoTime();
        long busy = compilerTicks();
        long quietSince = start;
        while (System.nanoTime() - quietSince < QUIET_NANOS && System.nanoTime() - start < max.toNanos()) {
            Thread.sleep(50);
            long now = compilerTicks();
            if (now != busy) {
                busy = now;
                quietSince = System.nanoTime();
            }
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** The CPU time (clock ticks) of the threads named {@code C1/C2 CompilerThread*} so far; 0 if unreadable. */
    static long compilerTicks() {
        long ticks = 0;
        List<Path> tasks;
        try (Stream<Path> list = Files.list(Path.of("/proc/self/task"))) {
            tasks = list.toList();
        } catch (IOException e) {
            return 0;
        }
        for (Path task : tasks) {
            try {
                if (!Files.readString(task.resolve("comm")).contains("CompilerThre")) {
                    continue;
                }
                String stat = Files.readString(task.resolve("stat"));
                // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
            } catch (IOException | RuntimeException e) {
                // the thread ended meanwhile
            }
        }
        return ticks;
    }
}
