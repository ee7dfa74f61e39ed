package io.rdma4j.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.OptionalDouble;
import java.util.stream.Stream;

/**
 * The CPU's cycle counter ({@code src/main/c/cycles.c}), the clock perftest uses, so that {@link Perf} times each
 * iteration as perftest does and both are converted to microseconds the same way ({@link #perMicrosecond()}). The
 * library is the file named by {@value #LIBRARY_PROPERTY} (LabBench builds it once), else built with gcc into a
 * temporary folder. Thread-safe.
 */
final class Cycles {

    /** The system property naming a built {@code libcycles.so}. */
    static final String LIBRARY_PROPERTY = "rdma4j.cycles";

    // A read of the counter is nanoseconds: critical(false) spares it the thread-state transition.
    private static final MethodHandle READ = Linker.nativeLinker().downcallHandle(
            SymbolLookup.libraryLookup(library(), Arena.global()).findOrThrow("rdma4j_cycles"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG), Linker.Option.critical(false));

    private Cycles() {
    }

    /** The counter now. */
    static long now() {
        try {
            return (long) READ.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Cycles per microsecond, by perftest's rule ({@code get_cpu_mhz}): {@code /proc/cpuinfo}'s "cpu MHz" if a
     * sample against the clock agrees within 2%, else the sample. The sample is the median of 11 ratios over 5 ms
     * each (about 60 ms): a median, not perftest's least squares, because a JVM's other threads can preempt this one
     * between reading the two clocks, which a fit over few points does not survive.
     */
    static double perMicrosecond() {
        double[] ratios = new double[11];
        for (int i = 0; i < ratios.length; i++) {
            long startCycles = now();
            long start = System.nanoTime();
            long end;
            do {
                end = System.nanoTime();
            } while (end - start < 5_000_000L);
            ratios[i] = (now() - startCycles) / ((end - start) / 1000.0);
        }
        Arrays.sort(ratios);
        double sample = ratios[ratios.length / 2];
        OptionalDouble proc = cpuinfoMegahertz();
        return proc.isPresent() && Math.abs(proc.getAsDouble() - sample) / proc.getAsDouble() <= 0.02
                ? proc.getAsDouble() : sample;
    }

    /** The first "cpu MHz" of {@code /proc/cpuinfo}, if there is one. */
    private static OptionalDouble cpuinfoMegahertz() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(l -> l.startsWith("cpu MHz")).findFirst()
                    .map(l -> OptionalDouble.of(Double.parseDouble(l.substring(l.indexOf(':') + 1).trim())))
                    .orElse(OptionalDouble.empty());
        } catch (IOException | NumberFormatException e) {
            return OptionalDouble.empty();
        }
    }

    /** Builds {@code libcycles.so} into {@code folder} and returns it. */
    static Path build(Path folder) throws IOException, InterruptedException {
        Path source = CBuild.source(folder, "cycles.c");
        Path library = folder.resolve("libcycles.so");
        CBuild.gcc("-O2", "-Wall", "-shared", "-fPIC", "-o", library.toString(), source.toString());
        return library;
    }

    private static Path library() {
        String named = System.getProperty(LIBRARY_PROPERTY);
        if (named != null) {
            return Path.of(named);
        }
        try {
            Path folder = Files.createTempDirectory("rdma4j-cycles");
            folder.toFile().deleteOnExit();
            Path library = build(folder);
            library.toFile().deleteOnExit();
            folder.resolve("cycles.c").toFile().deleteOnExit();
            return library;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building libcycles.so", e);
        }
    }
}
