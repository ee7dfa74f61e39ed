package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The bounded fuzz run of CI: {@link Fuzzer} in a JVM of its own per seed, so that a JVM crash fails this test with
 * the seed and the crash report's summary instead of ending the suite. {@code RDMA4J_FUZZ_SECONDS} and
 * {@code RDMA4J_FUZZ_SEEDS} make longer runs ({@code src/test/lab/rdma-lab fuzz}).
 */
@Tag("device")
class FuzzTest {

    @Test
    void randomCallSequencesFromThreeThreadsEndInResultsOrDocumentedExceptions() throws Exception {
        int seconds = Integer.parseInt(System.getenv().getOrDefault("RDMA4J_FUZZ_SECONDS", "20"));
        int seeds = Integer.parseInt(System.getenv().getOrDefault("RDMA4J_FUZZ_SEEDS", "2"));
        long base = Long.parseLong(System.getenv().getOrDefault("RDMA4J_FUZZ_SEED", "" + System.nanoTime() % 100_000));
        for (long seed = base; seed < base + seeds; seed++) {
            run(seed, seconds);
        }
    }

    private static void run(long seed, int seconds) throws IOException, InterruptedException {
        TestJvm.Result fuzz = TestJvm.run(Fuzzer.class, Duration.ofSeconds(seconds + 120L), List.of(),
                Long.toString(seed), Integer.toString(seconds), "3");
        System.out.println(fuzz.output().lines().filter(l -> l.startsWith("fuzz")).reduce("", (a, b) -> a + b + "\n"));
        assertTrue(!fuzz.hung(), "seed " + seed + ": the fuzzer hung (thread dump above)\n" + fuzz.output());
        assertTrue(fuzz.crash().isEmpty(), "seed " + seed + ": the JVM crashed:" + fuzz.crash() + "\n" + fuzz.tail());
        assertEquals(0, fuzz.exitCode(), "seed " + seed + ":\n" + fuzz.tail());
    }
}
