package io.rdma4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class JitQuietTest {

    @Test
    void findsTheCompilerThreadsOfThisJvm() {
        // By the time a test runs, the JIT has compiled JUnit's and the JDK's hot methods: more than one clock tick.
        assertTrue(JitQuiet.compilerTicks() > 0, "no CPU time found for C1/C2 CompilerThread* in /proc/self/task");
    }

    @Test
    void waitsAtLeastTheQuietWindowAndAtMostTheLimit() throws InterruptedException {
        Duration quiet = JitQuiet.await(Duration.ofSeconds(30));
        assertTrue(quiet.toMillis() >= 500 && quiet.toMillis() < 31_000, quiet.toString());
        Duration limited = JitQuiet.await(Duration.ofMillis(100));
        assertTrue(limited.toMillis() < 400, limited.toString());
    }
}
