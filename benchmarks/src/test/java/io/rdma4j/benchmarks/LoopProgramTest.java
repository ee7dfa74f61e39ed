package io.rdma4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** LoopProgram against a shell script that plays a registration program: it says ready, then answers one loop. */
class LoopProgramTest {

    @TempDir
    Path raw;

    /** A program that warms up, reads one loop and answers it with {@code answer} after the loop's name. */
    private LoopProgram answering(String answer) throws IOException {
        String script = "echo ready; read loop; echo \"$loop " + answer + "\"; cat > /dev/null";
        return LoopProgram.start(List.of("sh", "-c", script), raw.resolve("out.txt"));
    }

    @Test
    void aRateIsTheNumberAfterTheLoopsName() throws Exception {
        try (LoopProgram program = answering("1234.5")) {
            program.awaitReady(30);
            assertEquals(1234.5, program.rate("register 4096", 30));
            program.finish(30);
        }
        assertEquals("ready\nregister 4096 1234.5\n", Files.readString(raw.resolve("out.txt")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "0.00", "-3", "NaN", "Infinity", "fast", ""})
    void aRateThatIsNotAPositiveNumberIsAFailure(String answer) throws Exception {
        try (LoopProgram program = answering(answer)) {
            program.awaitReady(30);
            IOException e = assertThrows(IOException.class, () -> program.rate("queue-pair 0", 30));
            assertTrue(e.getMessage().startsWith("answered \"queue-pair 0 " + answer), e.getMessage());
        }
    }
}
