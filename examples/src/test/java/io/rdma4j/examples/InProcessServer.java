package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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

    /** How the server's run ended: "running", "done" or its exception's stack. */
    static String outcome(CompletableFuture<Void> serving) {
        if (!serving.isDone()) {
            return "running";
        }
        return serving.handle((done, failed) -> {
            if (failed == null) {
                return "done";
            }
            StringWriter trace = new StringWriter();
            failed.printStackTrace(new PrintWriter(trace));
            return trace.toString();
        }).join();
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
