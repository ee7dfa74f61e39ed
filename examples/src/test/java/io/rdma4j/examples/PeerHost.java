package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The other guest of the two-host lab, driven through a folder both guests share: each command is a shell script
 * that {@code src/test/lab/peer-agent} runs there, in order, leaving its output and exit code beside it.
 */
final class PeerHost {

    /** Numbers the commands of this JVM (every test makes a PeerHost of its own; the names must never repeat). */
    private static final AtomicInteger NEXT = new AtomicInteger();

    private final Path control;

    private PeerHost(Path control) {
        this.control = control;
    }

    /** The peer named by {@code RDMA4J_PEER_CONTROL}, the shared folder. */
    static PeerHost fromEnvironment() {
        return new PeerHost(Path.of(InProcessServer.environment("RDMA4J_PEER_CONTROL")));
    }

    /** Runs {@code script} on the peer and returns its output; fails unless it exits 0 within {@code timeout}. */
    String run(String script, Duration timeout) throws IOException, InterruptedException {
        String name = String.format("%05d-%d", NEXT.getAndIncrement(), ProcessHandle.current().pid());
        Path pending = control.resolve(name + ".tmp");
        Files.writeString(pending, script + "\n", StandardCharsets.UTF_8);
        Files.move(pending, control.resolve(name + ".cmd"), StandardCopyOption.ATOMIC_MOVE);
        Path rc = control.resolve(name + ".rc");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(rc) || Files.size(rc) == 0) {
            if (System.nanoTime() > deadline) {
                fail("the peer did not run '" + script + "' within " + timeout);
            }
            Thread.sleep(100);
        }
        String out = Files.readString(control.resolve(name + ".out"), StandardCharsets.UTF_8);
        assertEquals("0", Files.readString(rc, StandardCharsets.UTF_8).trim(), "on the peer: " + script + "\n" + out);
        return out;
    }

    /**
     * Starts {@code command} on the peer in the background as {@code name}: its output goes to {@link #log}, its
     * exit code to {@link #exitCode} once it ends, and {@link #kill} sends it SIGKILL.
     */
    void start(String name, String command) throws IOException, InterruptedException {
        Path base = control.resolve(name);
        run("rm -f " + base + ".exit; ( bash -c 'echo $$ > " + base + ".pid; exec " + command + "' > " + base
                + ".log 2>&1; echo $? > " + base + ".exit ) > /dev/null 2>&1 &", Duration.ofSeconds(30));
    }

    /** What {@code name} printed so far. */
    String log(String name) throws IOException {
        Path log = control.resolve(name + ".log");
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }

    /** Waits up to {@code timeout} for {@code name} to end; its exit code, or -1 if it still runs. */
    int exitCode(String name, Duration timeout) throws IOException, InterruptedException {
        Path exit = control.resolve(name + ".exit");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(exit) || Files.size(exit) == 0) {
            if (System.nanoTime() > deadline) {
                return -1;
            }
            Thread.sleep(100);
        }
        return Integer.parseInt(Files.readString(exit, StandardCharsets.UTF_8).trim());
    }

    /** Sends SIGKILL to {@code name} (and ends it for good, if a test failed while it ran). */
    void kill(String name) throws IOException, InterruptedException {
        signal(name, "KILL");
    }

    /** Sends SIGSTOP to {@code name}: it keeps its kernel objects but takes no more events until killed. */
    void suspend(String name) throws IOException, InterruptedException {
        signal(name, "STOP");
    }

    private void signal(String name, String signal) throws IOException, InterruptedException {
        run("kill -" + signal + " $(cat " + control.resolve(name) + ".pid) 2>/dev/null; true", Duration.ofSeconds(30));
    }

    /** Waits until {@code name} has an rdma_cm listener on {@code port} (the C tools print nothing when they do). */
    void awaitListener(String name, String port) throws IOException, InterruptedException {
        CListener.await(() -> run("rdma resource show cm_id", Duration.ofSeconds(30)),
                () -> exitCode(name, Duration.ZERO) == -1, port, name + " on the peer");
    }
}
