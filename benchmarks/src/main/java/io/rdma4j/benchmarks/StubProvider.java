package io.rdma4j.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The stub of {@code src/main/c/stub-provider.c} in a folder: built with gcc from the C sources this jar carries,
 * and loaded into a JVM before rdma4j is, under the sonames rdma4j opens ({@code libibverbs.so.1}, and an empty
 * {@code librdmacm.so.1}): the dynamic linker hands a library already loaded under a soname to every later open by
 * that name, so rdma4j binds the stub's verbs. The folder also gets {@code stub-loops}, the C baseline.
 */
final class StubProvider {

    /** The system property that names the folder in a benchmark's JVM. */
    static final String FOLDER_PROPERTY = "rdma4j.stubProvider";

    private StubProvider() {
    }

    /** Builds the stub libraries and the C loops into {@code folder} (gcc, libibverbs-dev's headers). */
    static Path build(Path folder) throws IOException, InterruptedException {
        Files.createDirectories(folder);
        Path provider = source(folder, "stub-provider.c");
        Path loops = source(folder, "stub-loops.c");
        Path verbs = folder.resolve("libibverbs.so.1");
        gcc("-O2", "-Wall", "-shared", "-fPIC", "-fvisibility=hidden", "-Wl,-soname,libibverbs.so.1", "-o",
                verbs.toString(), provider.toString());
        gcc("-shared", "-fPIC", "-x", "c", "/dev/null", "-Wl,-soname,librdmacm.so.1", "-o",
                folder.resolve("librdmacm.so.1").toString());
        gcc("-O2", "-Wall", "-o", folder.resolve("stub-loops").toString(), loops.toString(), verbs.toString(),
                "-Wl,-rpath," + folder.toAbsolutePath());
        return folder;
    }

    /** In a benchmark's JVM: loads the stub named by {@link #FOLDER_PROPERTY} before rdma4j loads rdma-core. */
    static void loadIntoThisProcess() {
        String folder = System.getProperty(FOLDER_PROPERTY);
        if (folder == null) {
            throw new IllegalStateException("-D" + FOLDER_PROPERTY + " names no folder: run through HostBench");
        }
        SymbolLookup.libraryLookup(Path.of(folder, "librdmacm.so.1"), Arena.global());
        SymbolLookup.libraryLookup(Path.of(folder, "libibverbs.so.1"), Arena.global());
    }

    /** Runs the C loops ({@code stub-loops ITERATIONS ROUNDS}) and returns their output. */
    static String runLoops(Path folder, long iterations, int rounds) throws IOException, InterruptedException {
        return run(List.of(folder.resolve("stub-loops").toString(), Long.toString(iterations),
                Integer.toString(rounds)));
    }

    private static Path source(Path folder, String name) throws IOException {
        Path target = folder.resolve(name);
        try (InputStream in = StubProvider.class.getResourceAsStream("/c/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the benchmarks jar carries no c/" + name);
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }

    private static void gcc(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("gcc"));
        command.addAll(List.of(args));
        run(command);
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException(command.getFirst() + " could not be started (gcc and libibverbs-dev are"
                    + " needed: apt-get install gcc libibverbs-dev)", e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed:\n" + out);
        }
        return out;
    }
}
