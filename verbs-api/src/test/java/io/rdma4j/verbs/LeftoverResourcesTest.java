package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.verbs.internal.NativeResource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs after every other device test class: nothing that the suite (or rdma4j behind it) created may still exist
 * on the device, as the kernel's resource tracking ({@code rdma resource show}) sees it; and a forgotten object is
 * closed by its Cleaner.
 */
@Tag("device")
@Order(Integer.MAX_VALUE)
class LeftoverResourcesTest {

    /**
     * Each object of the tree is closed by its Cleaner (whichever runs first closes what is under it) and counted as
     * a leak; the warnings' wording and their rate limit are {@link DroppedObjectsTest}'s, in a JVM of its own,
     * since this JVM has reported its first leaks in full long before.
     */
    @Test
    void aForgottenTreeOfObjectsIsClosedByItsCleaners() throws Exception {
        long before = NativeResource.leaksReclaimed();
        forgetATree();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((NativeResource.leaksReclaimed() == before || !ours("mr").isEmpty() || !ours("pd").isEmpty())
                && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(100);
        }
        assertTrue(NativeResource.leaksReclaimed() > before, "reported as dropped unclosed");
        assertEquals(List.of(), ours("mr"), "the region deregistered");
        assertEquals(List.of(), ours("pd"), "the protection domain deallocated");
    }

    /** A context with a protection domain and a region, none of them reachable once this returns. */
    private static void forgetATree() {
        TestDevice.open().allocateProtectionDomain().allocateMemory(4096, Set.of());
    }

    @Test
    void theSuiteLeftNothingOnTheDevice() throws IOException, InterruptedException {
        try (Context context = TestDevice.open(); ProtectionDomain pd = context.allocateProtectionDomain()) {
            assertEquals(1, ours("pd").size(), "the check sees " + pd + " of this process: " + ours("pd"));
        }
        for (String kind : List.of("cm_id", "qp", "cq", "mr", "pd")) {
            assertEquals(List.of(), ours(kind), "leftover " + kind + " on " + TestDevice.device().name());
        }
    }

    /**
     * The lines of {@code rdma resource show KIND} for the test device and this process. The kernel records the
     * creating thread's id as "pid", and a JVM's threads are not its main process, so every thread id counts.
     */
    static List<String> ours(String kind) throws IOException, InterruptedException {
        String device = TestDevice.device().name();
        Set<String> pids;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            pids = tasks.map(t -> "pid " + t.getFileName() + " ").collect(Collectors.toSet());
        }
        Process p = new ProcessBuilder("rdma", "resource", "show", kind).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "rdma resource show " + kind);
        assertEquals(0, p.exitValue(), out);
        return out.lines()
                .filter(l -> l.startsWith("dev " + device + " ") || l.startsWith("link " + device + "/"))
                .filter(l -> pids.stream().anyMatch((l + " ")::contains))
                .toList();
    }
}
