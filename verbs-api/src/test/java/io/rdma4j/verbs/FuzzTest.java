package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The bounded fuzz run of CI: {@link Fuzzer} in a JVM of its own per seed, so that a JVM crash fails this test with
 * the seed and the crash report's summary instead of ending the suite. {@code RDMA4J_FUZZ_SECONDS} and
 * {@code RDMA4J_FUZZ_SEEDS} make longer runs ({@code src/test/lab/rdma-lab fuzz}).
 */
@Tag("device")
class FuzzTest {

    @Test
    void randomCallSequencesFromThreeThreadsEndInResultsOrDocumentedExceptions() throws Exception {
        int seconds = Integer.parseInt(System.getenv().getOrDefault("RDMA4J_FUZZ_SECONDS", "20"));
        int seeds = Integer.parseInt(System.getenv().getOrDefault("RDMA4J_FUZZ_SEEDS", "2"));
        long base = Long.parseLong(System.getenv().getOrDefault("RDMA4J_FUZZ_SEED", "" + System.nanoTime() % 100_000));
        for (long seed = base; seed < base + seeds; seed++) {
            run(seed, seconds);
        }
    }

    private static void run(long seed, int seconds) throws IOException, InterruptedException {
        Path crashReport = Files.createTempFile("rdma4j-fuzz-hs_err-", ".log");
        Files.delete(crashReport);
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:ErrorFile=" + crashReport, "-cp", classPath(),
                Fuzzer.class.getName(), Long.toString(seed), Integer.toString(seconds), "3"))
                .redirectErrorStream(true).start();
        String out;
        boolean ended = p.waitFor(seconds + 120L, TimeUnit.SECONDS);
        if (!ended) {
            new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(p.pid()), "Thread.print").inheritIO().start()
                    .waitFor(30, TimeUnit.SECONDS);
            p.destroyForcibly().waitFor();
        }
        out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String crash = Files.exists(crashReport) ? summary(Files.readAllLines(crashReport)) : "";
        System.out.println(out.lines().filter(l -> l.startsWith("fuzz")).reduce("", (a, b) -> a + b + "\n"));
        assertTrue(ended, "seed " + seed + ": the fuzzer hung (thread dump above)\n" + out);
        assertTrue(crash.isEmpty(), "seed " + seed + ": the JVM crashed:" + crash + "\n" + tail(out));
        assertEquals(0, p.exitValue(), "seed " + seed + ":\n" + tail(out));
    }

    /** The crash report's header and its native and Java stacks: where it crashed, and the call that led there. */
    private static String summary(List<String> report) {
        StringBuilder kept = new StringBuilder();
        boolean stack = false;
        for (int i = 0; i < report.size(); i++) {
            String line = report.get(i);
            if (line.startsWith("Native frames:") || line.startsWith("Java frames:")) {
                stack = true;
            } else if (line.isBlank()) {
                stack = false;
            }
            if (i < 12 || stack) {
                kept.append('\n').append(line);
            }
        }
        return kept.toString();
    }

    private static String tail(String out) {
        List<String> lines = out.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    /** This test's class path: the launcher's class loader's (JUnit's console launcher), else java.class.path. */
    private static String classPath() {
        StringBuilder path = new StringBuilder();
        if (FuzzTest.class.getClassLoader() instanceof URLClassLoader loader) {
            for (java.net.URL url : loader.getURLs()) {
                try {
                    path.append(Path.of(url.toURI())).append(File.pathSeparator);
                } catch (URISyntaxException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return path + System.getProperty("java.class.path");
    }
}
