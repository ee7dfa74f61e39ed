package io.rdma4j.verbs;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A test program in a JVM of its own, on this test's class path: so that a JVM crash fails the test with the crash
 * report's summary instead of ending the suite, a hang with a thread dump, and so that process-wide state (logs,
 * counters) starts fresh.
 */
final class TestJvm {

    /** What the program did: its exit code (-1 if it hung), its output, and the crash report's summary if it crashed. */
    record Result(int exitCode, String output, String crash) {

        boolean hung() {
            return exitCode == -1;
        }

        /** The last 40 lines of the output, for messages. */
        String tail() {
            List<String> lines = output.lines().toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        }
    }

    private TestJvm() {
    }

    /** Runs {@code main} with {@code args}, at most {@code limit}; a hang prints a thread dump and is ended. */
    static Result run(Class<?> main, Duration limit, List<String> jvmOptions, String... args)
            throws IOException, InterruptedException {
        Path crashReport = Files.createTempFile("rdma4j-test-jvm-hs_err-", ".log");
        Files.delete(crashReport);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "--enable-native-access=ALL-UNNAMED", "-XX:ErrorFile=" + crashReport));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath(), main.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        // Read while it runs: a full pipe would stop the program.
        var output = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(output unreadable: " + e + ")";
            }
        });
        boolean ended = p.waitFor(limit.toSeconds(), TimeUnit.SECONDS);
        if (!ended) {
            new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(p.pid()), "Thread.print").inheritIO().start()
                    .waitFor(30, TimeUnit.SECONDS);
            p.destroyForcibly().waitFor();
        }
        String out = output.join();
        String crash = Files.exists(crashReport) ? summary(Files.readAllLines(crashReport)) : "";
        return new Result(ended ? p.exitValue() : -1, out, crash);
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

    /** This test's class path: the launcher's class loader's (JUnit's console launcher), else java.class.path. */
    private static String classPath() {
        StringBuilder path = new StringBuilder();
        if (TestJvm.class.getClassLoader() instanceof URLClassLoader loader) {
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
