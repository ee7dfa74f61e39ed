package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Waits until a C tool's rdma_cm id listens. The tools print nothing when they start listening, and a client that
 * connects too early and tries again can race the tool's single accept; the kernel's list of cm_ids
 * ({@code rdma resource show cm_id}) says when the listener is there.
 */
final class CListener {

    /** A question asked of a host (this one, or the peer of the two-host lab). */
    @FunctionalInterface
    interface Probe<T> {
        T ask() throws IOException, InterruptedException;
    }

    private CListener() {
    }

    /** Returns once {@code tool}, on this host, has a listening id on {@code port}. */
    static void await(Process tool, String port) throws IOException, InterruptedException {
        await(CListener::localCmIds, tool::isAlive, port, "the C tool");
    }

    /**
     * Returns once {@code cmIds} (the output of {@code rdma resource show cm_id}) shows a listener on {@code port};
     * fails if {@code alive} says the tool ended first, or after 60 s.
     */
    static void await(Probe<String> cmIds, Probe<Boolean> alive, String port, String tool)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String ids = cmIds.ask();
            if (ids.lines().anyMatch(l -> l.contains(" LISTEN ") && l.contains(":" + port + " "))) {
                return;
            }
            assertTrue(alive.ask(), () -> tool + " exited before it listened: " + ids);
            Thread.sleep(100);
        }
        fail("no rdma_cm listener of " + tool + " on port " + port + " within 60 s");
    }

    private static String localCmIds() throws IOException, InterruptedException {
        Process show = new ProcessBuilder("rdma", "resource", "show", "cm_id").redirectErrorStream(true).start();
        String ids = new String(show.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertTrue(show.waitFor(30, TimeUnit.SECONDS), "rdma resource show cm_id finishes");
        return ids;
    }
}
