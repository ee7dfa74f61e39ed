package io.rdma4j.benchmarks;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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
        Path provider = CBuild.source(folder, "stub-provider.c");
        Path loops = CBuild.source(folder, "stub-loops.c");
        Path verbs = folder.resolve("libibverbs.so.1");
        CBuild.gcc("-O2", "-Wall", "-shared", "-fPIC", "-fvisibility=hidden", "-Wl,-soname,libibverbs.so.1", "-o",
                verbs.toString(), provider.toString());
        CBuild.gcc("-shared", "-fPIC", "-x", "c", "/dev/null", "-Wl,-soname,librdmacm.so.1", "-o",
                folder.resolve("librdmacm.so.1").toString());
        CBuild.gcc("-O2", "-Wall", "-o", folder.resolve("stub-loops").toString(), loops.toString(), verbs.toString(),
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
        return CBuild.run(List.of(folder.resolve("stub-loops").toString(), Long.toString(iterations),
                Integer.toString(rounds)));
    }
}
