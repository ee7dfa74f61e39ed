package io.rdma4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host benchmark's short run, in {@code ./mvnw verify}: the stub builds, C and rdma4j run every case through
 * it, and rdma4j's data path allocates no object per operation (JMH's {@code gc.alloc.rate.norm} under 8 bytes
 * per operation: the smallest object is 16; such short runs show up to about one byte of warm-up and profiler noise,
 * which the full run's longer iterations bring to hundredths). Times are printed, not judged: the full run reports
 * them.
 */
class HostBenchSmokeTest {

    @Test
    void everyCaseRunsInCAndJavaAndTheDataPathAllocatesNothing(@TempDir Path folder) throws Exception {
        List<HostBench.Row> rows = HostBench.run(folder, 1, true);
        System.out.println(HostBench.table(rows));
        assertEquals(HostBench.CASES, rows.stream().map(HostBench.Row::name).toList());
        for (HostBench.Row row : rows) {
            assertTrue(row.c().median() > 0 && row.plain().median() > 0 && row.critical().median() > 0, row::toString);
            if (HostBench.DATA_PATH.contains(row.name())) {
                assertTrue(row.plainBytes() < 8 && row.criticalBytes() < 8, () -> "allocates: " + row);
            }
        }
    }
}
