package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** The examples jar's entry point run in a JVM of its own, as a user runs it: its exit code and both outputs. */
final class ExampleProcess {

    record Result(int exit, String out, String err) {
        String all() {
            return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    private ExampleProcess() {
    }

    /**
     * Runs {@code java … Main args}, behind {@code wrapper} (e.g. {@code bash -c 'ulimit -l 64; exec "$@"' --});
     * the JVM's own warnings are left out of {@code err}.
     */
    static Result run(List<String> wrapper, String... args) throws IOException, InterruptedException {
        return run(Duration.ofSeconds(60), wrapper, args);
    }

    /** {@link #run(List, String...)}, failing if the process runs longer than {@code timeout}. */
    static Result run(Duration timeout, List<String> wrapper, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(wrapper);
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", classPath(), Main.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        // Small outputs: reading one stream to its end cannot block the other.
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS), String.join(" ", command));
        return new Result(p.exitValue(), out, err.lines().filter(l -> !l.startsWith("WARNING"))
                .collect(Collectors.joining("\n")));
    }

    /** This test's class path: the launcher's class loader's (JUnit's console launcher), else java.class.path. */
    private static String classPath() {
        StringBuilder path = new StringBuilder();
        if (ExampleProcess.class.getClassLoader() instanceof URLClassLoader loader) {
            for (URL url : loader.getURLs()) {
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
