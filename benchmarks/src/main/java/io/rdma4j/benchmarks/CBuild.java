package io.rdma4j.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The C side of the benchmarks, built where they run: this jar carries the sources ({@code c/*.c}); gcc and
 * libibverbs-dev's headers turn them into the stub provider, the C loops and the cycle counter.
 */
final class CBuild {

    private CBuild() {
    }

    /** Copies the jar's {@code c/NAME} into {@code folder} and returns the copy. */
    static Path source(Path folder, String name) throws IOException {
        Files.createDirectories(folder);
        Path target = folder.resolve(name);
        try (InputStream in = CBuild.class.getResourceAsStream("/c/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the benchmarks jar carries no c/" + name);
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }

    /** Runs gcc with {@code args}. */
    static void gcc(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("gcc"));
        command.addAll(List.of(args));
        run(command);
    }

    /** Runs {@code command} to its end (at most 10 minutes) and returns its output; fails unless it exits 0. */
    static String run(List<String> command) throws IOException, InterruptedException {
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
