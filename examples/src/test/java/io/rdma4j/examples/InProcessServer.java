package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/** An example's server side run in the test's JVM, against which a C tool connects once it listens. */
final class InProcessServer {

    /** The example's run method. */
    @FunctionalInterface
    interface Run {
        void run() throws InterruptedException;
    }

    /**
     * Runs each task on a thread of its own: a run that hangs and fails its test must not hold up the next test's
     * (the common pool has a single thread on the lab's two vCPUs: a hung client there once failed the test after).
     */
    static final Executor OWN_THREAD = task -> Thread.ofPlatform().daemon().name("example-run").start(task);

    private InProcessServer() {
    }

    /** The device under test ({@code RDMA4J_TEST_DEVICE}: rxe0 or siw0 in the lab). */
    static String testDevice() {
        return environment("RDMA4J_TEST_DEVICE");
    }

    /** The test device's IP address ({@code RDMA4J_TEST_ADDRESS}). */
    static String testAddress() {
        return environment("RDMA4J_TEST_ADDRESS");
    }

    /** The environment variable {@code name}, which the lab sets; fails the test when it is unset. */
    static String environment(String name) {
        String value = System.getenv(name);
        return value != null ? value : fail(name + " is not set (src/test/lab/rdma-lab sets it: `test` for the device"
                + " tests, `faults` for the two-host tests)");
    }

    /** A port from {@code base} that two test JVMs on one machine would not both pick. */
    static String port(int base) {
        return Integer.toString(base + (int) (ProcessHandle.current().pid() % 1000));
    }

    /** What {@code command} (bash) printed on this host, whatever its exit code. */
    static String output(String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("bash", "-c", command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), command);
        return out;
    }

    /** Every thread of this JVM with its stack: where a stalled in-process server waits. */
    static String threads() {
        StringBuilder all = new StringBuilder();
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            all.append(thread).append('\n');
            for (StackTraceElement frame : stack) {
                all.append("    at ").append(frame).append('\n');
            }
        });
        return all.toString();
    }

    /**
     * A C {@code tool}'s client did not finish within {@code seconds} against the in-process server {@code serving}
     * (which printed to {@code out}); its output is in {@code said}. Gathers the kernel's sockets, queue pairs and ids
     * and this JVM's threads while the client still runs, kills it, and waits (60 s) for the server to end, as the
     * client's death ends its waits. If the client had no answer yet ({@code answered} of its output) and the server's
     * socket holds unread bytes on siw, it is siw's accept race ({@link #unreadSockets}): skips with that reason.
     * Otherwise fails with all of it and how the server ended.
     */
    static void clientStalled(String tool, int seconds, Process client, Path said, String port,
                              CompletableFuture<Void> serving, ByteArrayOutputStream out, Predicate<String> answered)
            throws IOException, InterruptedException, ExecutionException {
        String state = output("ss -tanoi; rdma resource show qp; rdma resource show cm_id");
        String unread = unreadSockets(port);
        String threads = threads();
        client.destroyForcibly().waitFor();
        String c = Files.readString(said, StandardCharsets.US_ASCII);
        String why = tool + " did not finish within " + seconds + " s\n--- " + tool + " said\n" + c
                + "--- the Java server said\n" + out.toString(StandardCharsets.US_ASCII)
                + "--- sockets, queue pairs and ids\n" + state + "--- this JVM's threads while the client still ran\n"
                + threads;
        String ended;
        try {
            ended = serving.handle((done, failed) -> {
                if (failed == null) {
                    return "done";
                }
                StringWriter trace = new StringWriter();
                failed.printStackTrace(new PrintWriter(trace));
                return trace.toString();
            }).get(60, TimeUnit.SECONDS);
        } catch (TimeoutException hang) {
            fail(why + "--- and the Java server did not end within 60 s of the client's death");
            return;
        }
        why += "--- the Java server's end\n" + ended;
        if (!answered.test(c) && !unread.isEmpty() && testDevice().startsWith("siw")) {
            System.out.println(why);
            abort("siw's accept race: " + tool + "'s first message stayed unread in the accepted socket (" + unread
                    + ")");
        }
        fail(why);
    }

    /**
     * The established sockets on local {@code port} that hold unread bytes, as {@code ss} prints them (Recv-Q first),
     * one per line; empty if none. On siw that is its accept race (README, "What the providers lack"):
     * {@code siw_accept} sends the MPA reply before it hands the socket to the queue pair and ignores data that arrives
     * in between, so a client's first message, sent at once, can stay unread in the server's socket. The Java clients
     * nudge the server when it stays silent ({@code Connection.nudgePeer}); the C tools do not.
     */
    static String unreadSockets(String port) throws IOException, InterruptedException {
        return output("ss -tnH state established '( sport = :" + port + " )'").lines().map(String::strip)
                .filter(l -> !l.isEmpty() && Long.parseLong(l.split("\\s+")[0]) > 0)
                .collect(Collectors.joining("\n"));
    }

    /**
     * Starts {@code run} on another thread and returns once it called the listening hook that {@code hook}
     * installs; the future completes when the server returns.
     */
    static CompletableFuture<Void> start(Consumer<Runnable> hook, Run run) throws InterruptedException {
        CountDownLatch listening = new CountDownLatch(1);
        hook.accept(listening::countDown);
        CompletableFuture<Void> serving = CompletableFuture.runAsync(() -> {
            try {
                run.run();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, OWN_THREAD);
        assertTrue(listening.await(60, TimeUnit.SECONDS) || serving.isDone(), "the Java server listens");
        return serving;
    }
}
