package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A parent does not keep its children reachable: what the program drops unclosed is closed by the Cleaner, with a
 * warning, while its protection domain and context live on (before, 10,000 dropped regions stayed registered until
 * their domain closed). In a JVM of its own ({@link DroppedObjects}).
 */
@Tag("device")
class DroppedObjectsTest {

    private static final int REGIONS = 10_000;
    private static final int QUEUE_PAIRS = 1_000;
    private static final int QUEUES = 300;
    private static final int BIG_REGIONS = 500;

    @Test
    void droppedRegionsQueuePairsAndQueuesAreClosedWhileTheirParentsLive() throws Exception {
        TestJvm.Result run = TestJvm.run(DroppedObjects.class, Duration.ofMinutes(10), List.of("-Xmx1g"),
                Integer.toString(REGIONS), Integer.toString(QUEUE_PAIRS), Integer.toString(QUEUES),
                Integer.toString(BIG_REGIONS));
        assertTrue(!run.hung() && run.crash().isEmpty(), "hung or crashed:" + run.crash() + "\n" + run.tail());
        assertEquals(0, run.exitCode(), run.tail());
        List<String> lines = run.output().lines().toList();
        long dropped = REGIONS + QUEUE_PAIRS + 2L * QUEUES + BIG_REGIONS;
        assertTrue(lines.contains("dropped " + dropped + ", closed by the Cleaner " + dropped), run.tail());
        assertTrue(lines.contains("kernel mr 0"), "every dropped region deregistered:\n" + run.tail());
        assertTrue(lines.contains("kernel qp 0"), "every dropped queue pair destroyed:\n" + run.tail());
        assertTrue(lines.contains("kernel cq 1"), "only the kept completion queue left:\n" + run.tail());
        long descriptors = lines.stream().filter(l -> l.startsWith("open descriptors ")).findFirst()
                .map(l -> Long.parseLong(l.substring("open descriptors ".length()))).orElseThrow();
        assertTrue(descriptors < QUEUES / 2, "the dropped channels' descriptors are closed: " + descriptors + " open");
        // One warning each for the first 20, then a summary at each power of two: never 12,100 lines.
        assertEquals(20, lines.stream().filter(l -> l.contains("was never closed; closing it now")).count(),
                run.tail());
        assertTrue(lines.stream().anyMatch(l -> l.contains("objects so far were never closed and have been closed"
                + " when dropped")), run.tail());
        assertTrue(lines.stream().noneMatch(l -> l.contains("could not be closed")), run.tail());
        System.out.println(lines.stream().filter(l -> l.startsWith("dropped") || l.startsWith("kernel")
                || l.startsWith("open descriptors")).toList());
    }
}
