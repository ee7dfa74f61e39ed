package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A JVM that forks children while RDMA traffic runs on registered memory keeps every byte on both sides, and its
 * children run: rdma4j sets fork protection up before its first verb ({@link Device#forkSafety()}). The children
 * are real {@code fork()}s ({@code jdk.lang.Process.launchMechanism=FORK}) of a JVM of their own.
 */
@Tag("device")
class ForkDuringTrafficTest {

    @Test
    void childrenStartedDuringTrafficLeaveEveryByteIntact() throws Exception {
        TestJvm.Result run = TestJvm.run(ForkDuringTraffic.class, Duration.ofMinutes(5),
                List.of("-Djdk.lang.Process.launchMechanism=FORK"), "100");
        assertTrue(!run.hung() && run.crash().isEmpty(), "hung or crashed:" + run.crash() + "\n" + run.tail());
        String line = run.output().lines().filter(l -> l.startsWith("fork: ")).findFirst().orElse(run.tail());
        System.out.println(line);
        assertEquals(0, run.exitCode(), run.tail());
        assertTrue(line.startsWith("fork: 100 of 100 children exited 0, ") && line.contains(" rounds of traffic intact,")
                && line.endsWith("launch mechanism FORK"), line);
        assertTrue(!line.contains("fork safety UNPROTECTED"), line);
    }
}
