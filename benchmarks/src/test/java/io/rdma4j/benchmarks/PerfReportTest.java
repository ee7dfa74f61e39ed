package io.rdma4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The lab benchmark's arithmetic and parsing, without a device: perftest's statistics, its output, the options. */
class PerfReportTest {

    /** Real output of perftest 4.5's ib_send_lat -U (shortened) and ib_read_bw in the lab. */
    private static final String SEND_LAT = """
             #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   \
            99% percentile[usec]   99.9% percentile[usec]\s
            #, usec
            1, 989.273
            2, 53.1486
            3, 26.7095
            ---------------------------------------------------------------------------------------
             #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   \
            99% percentile[usec]   99.9% percentile[usec]\s
             2       2000          9.97           355.69       18.12    	       20.76       	20.26  		159.97  	\
            	353.18\s
            ---------------------------------------------------------------------------------------
            """;
    private static final String READ_BW = """
             #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
             4096       1000             37.47              35.92  		   0.009195
            ---------------------------------------------------------------------------------------
            """;

    @Test
    void perftestsLatencyRowIsReadByColumnNameWithTheUnsortedValues() {
        PerftestOutput out = PerftestOutput.parse(SEND_LAT);
        assertEquals(18.12, out.value("t_typical[usec]").orElseThrow());
        assertEquals(159.97, out.value("99% percentile[usec]").orElseThrow());
        assertEquals(353.18, out.value("99.9% percentile[usec]").orElseThrow());
        assertEquals(List.of(989.273, 53.1486, 26.7095), out.unsorted());
    }

    @Test
    void perftestsBandwidthRowIsReadByColumnName() {
        PerftestOutput out = PerftestOutput.parse(READ_BW);
        assertEquals(35.92, out.value("BW average[MB/sec]").orElseThrow());
        assertEquals(37.47, out.value("BW peak[MB/sec]").orElseThrow());
        assertEquals(0.009195, out.value("MsgRate[Mpps]").orElseThrow());
    }

    @Test
    void aZeroFromAFailedClockCalibrationIsNoMeasurement() {
        // ib_read_bw on siw0 in the lab, 2026-12-06: "Correlation coefficient r^2: 0.847271 < 0.9", then this row.
        PerftestOutput out = PerftestOutput.parse("""
                Correlation coefficient r^2: 0.847271 < 0.9
                 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
                 1048576    100              0.00               0.00   		   0.000000
                """);
        assertEquals(0.0, out.value("BW average[MB/sec]").orElseThrow());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> out.measurement("BW average[MB/sec]"));
        assertEquals("BW average[MB/sec] is 0.0, not a measurement", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> out.measurement("MsgRate[Mpps]"));
        assertEquals(1048576.0, out.measurement("#bytes").orElseThrow());
        assertTrue(out.measurement("t_typical[usec]").isEmpty());
        assertEquals(35.92, PerftestOutput.parse(READ_BW).measurement("BW average[MB/sec]").orElseThrow());
    }

    @Test
    void outputWithoutAResultRowIsAnErrorShowingTheOutput() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PerftestOutput.parse("Couldn't connect to 192.0.2.1:18515\n"));
        assertTrue(e.getMessage().contains("Couldn't connect"), e.getMessage());
    }

    @Test
    void perfsOwnReportIsReadBackAsPerftestsIs() {
        long[] posted = new long[1000];
        for (int i = 1; i < posted.length; i++) {
            posted[i] = posted[i - 1] + 2000 + (i == 500 ? 1_000_000 : 0) + (i % 10 == 0 ? 400 : 0);
        }
        LatencyReport report = LatencyReport.of(64, posted, true, 1000.0);
        // Round trips of 2000 cycles at 1000 cycles/µs are 1 µs one way; every tenth is 1.2 µs; one outlier dropped.
        assertEquals(1.0, report.median());
        assertEquals(1.2, report.p99(), 1e-9);
        assertEquals(1.0, report.min());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        PerftestOutput out = PerftestOutput.parse(bytes.toString(StandardCharsets.UTF_8));
        assertEquals(1.0, out.value("t_typical[usec]").orElseThrow());
        assertEquals(1.2, out.value("99% percentile[usec]").orElseThrow());
        assertEquals(64.0, out.value("#bytes").orElseThrow());
    }

    @Test
    void medianOfAnEvenCountAveragesTheMiddleTwoAsPerftestDoes() {
        // 7 iterations: 6 deltas, 2 dropped, 4 kept (10, 20, 30, 40 cycles): perftest's median is (20 + 30) / 2.
        long[] posted = {0, 10, 30, 60, 100, 1100, 3100};
        assertEquals(25.0, LatencyReport.of(8, posted, false, 1.0).median());
    }

    @Test
    void optionsFollowPerftestsDefaultsAndRules() {
        PerfOptions lat = PerfOptions.parse("send_lat");
        assertEquals(2, lat.size());
        assertEquals(1000, lat.iterations());
        assertEquals(1, lat.cqModeration(), "moderation is capped at the TX depth of 1");
        assertTrue(lat.isServer());
        PerfOptions bw = PerfOptions.parse("write_bw", "-s", "1048576", "-w", "10", "127.0.0.1");
        assertEquals(1, bw.cqModeration(), "no moderation above 8192 bytes unless asked for");
        assertEquals(5010, bw.total());
        assertEquals(100, PerfOptions.parse("write_bw", "-s", "4096").cqModeration());
        PerfOptions few = PerfOptions.parse("write_bw", "-s", "4096", "-n", "100", "-w", "100");
        assertEquals(100, few.txDepth(), "as perftest: no more in flight than -n");
        assertEquals(100, few.cqModeration());
        assertEquals("ib_read_bw", PerfOptions.Test.READ_BW.perftest());
        assertThrows(IllegalArgumentException.class, () -> PerfOptions.parse("atomic_lat"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PerfOptions.parse("send_lat", "-n", "3"));
        assertEquals("-n is 5..100000000, not 3", e.getMessage());
    }

    @Test
    void onlyNamesOnePartInLowerCase() {
        assertEquals(LabBench.Part.BANDWIDTH, LabBench.Part.named("bandwidth"));
        assertEquals(LabBench.Part.REGISTRATION, LabBench.Part.named("registration"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LabBench.Part.named("LATENCY"));
        assertEquals("--only takes latency, bandwidth or registration, not LATENCY", e.getMessage());
    }

    @Test
    void caseKeepsTheNamedCasesOfTheParts() {
        Set<LabBench.Part> bandwidth = EnumSet.of(LabBench.Part.BANDWIDTH);
        assertEquals(12, LabBench.cases(bandwidth, false, Set.of()).size());
        assertEquals(List.of(new LabBench.Case(PerfOptions.Test.SEND_BW, 65536, 1000),
                        new LabBench.Case(PerfOptions.Test.READ_BW, 64, 20_000)),
                LabBench.cases(bandwidth, false, Set.of("read_bw 64", "send_bw 65536")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LabBench.cases(bandwidth, true, Set.of("read_bw 64", "send_lat 64")));
        assertEquals("--case: no case [read_bw 64, send_lat 64] among [write_bw 4096, send_bw 4096, read_bw 4096]",
                e.getMessage());
    }

    @Test
    void reportTablesCarryMediansRatiosSpreadsTargetsAndFailures() {
        List<LabBench.Sample> samples = new ArrayList<>();
        // Each round's C, Java and C again ran back to back; round 3's Java failed (no sample), round 4's C.
        double[][] rounds = {{10, 11, 9}, {11, 11.5, 12.1}, {12, Double.NaN, 12}, {Double.NaN, 13, 20}, {13, 14, 13}};
        List<String> sides = List.of("C", "Java", LabBench.C_AGAIN);
        for (int round = 0; round < rounds.length; round++) {
            for (int side = 0; side < sides.size(); side++) {
                if (!Double.isNaN(rounds[round][side])) {
                    samples.add(new LabBench.Sample("rxe0", "ib_send_lat 64 B", "median", "µs", false, 1.05,
                            "round " + round, sides.get(side), rounds[round][side]));
                }
            }
        }
        samples.add(new LabBench.Sample("siw0", "ib_write_bw 4 KiB", "bandwidth", "MB/s", true, 0.98, "round 1", "C",
                50));
        samples.add(new LabBench.Sample("siw0", "ib_write_bw 4 KiB", "bandwidth", "MB/s", true, 0.98, "round 1",
                "Java", 49.5));
        LabReport report = new LabReport(samples, Map.of("rxe0 Java", Collections.nCopies(6000,
                12.0)), List.of("1-siw0-read_bw-4096-Java: THE JVM CRASHED (raw/x.txt)"), "QEMU tcg", 3);
        String md = report.markdown(LocalDate.of(2026, 12, 3));
        // Medians 11.5 and 12.25 (1.065 apart), but Java/C is the median of the three whole pairs' 1.1, 1.045, 1.077.
        // C again/C: 0.9, 1.1, 1.0 and 1.0 (round 3 has no C to divide by): median 1.0, from 0.9 to 1.1.
        // Four runs of each side: the row says so (a failed run is no sample).
        assertTrue(md.contains("| rxe0 | ib_send_lat 64 B | median | 11.50 | 12.25 | 1.08 | ± 13% | ± 12% | 4/4 | "
                + "1.00 (0.90–1.10) | ≤ 1.05 | NO |"), md);
        assertTrue(md.contains(
                "| siw0 | ib_write_bw 4 KiB | bandwidth | 50.00 | 49.50 | 0.99 |  |  | 1/1 |  | ≥ 0.98 | yes |"), md);
        assertTrue(md.contains("- 1-siw0-read_bw-4096-Java: THE JVM CRASHED"), md);
        assertTrue(md.contains("higher is better\n\nNot measured.\n"), "a part left out (--only) says so: " + md);
        assertTrue(md.contains(
                "rxe0 Java: steady state 12.00 µs; at most 10% slower from iteration 1 on (every block), from 1 on"), md);
        String csv = report.csv(LocalDate.of(2026, 12, 3));
        assertTrue(csv.contains("2026-12-03,\"QEMU tcg\",rxe0,ib_send_lat 64 B,median,µs,11.5,12.25,1.0769,"), csv);
        assertTrue(csv.contains(",1.05,NO,1.0000,0.9000,1.1000\n"), csv);
        assertTrue(csv.contains(",0.98,yes,NaN,NaN,NaN\n"), "a row without control runs: " + csv);
        assertEquals(3, csv.lines().count());
    }

    @Test
    void warmupCurveNamesTheIterationFromWhichItStaysAtMostTenPercentSlowerWithAndWithoutSingleSlowBlocks() {
        List<Double> curve = new ArrayList<>();
        for (int i = 0; i < 15_000; i++) {
            // Slow until 3,000, then one slow block, 6,001-7,000, as the emulator's noise makes them, and fast blocks
            // (the emulator's faster level) from 8,001 to 10,000, which are no warm-up.
            curve.add(i < 3000 || (i >= 6000 && i < 7000) ? 50.0 : i >= 8000 && i < 10_000 ? 12.0 : 20.0);
        }
        assertEquals("steady state 20.00 µs; at most 10% slower from iteration 7,001 on (every block), from 3,001 on"
                + " (the median of three neighbouring blocks)", LabReport.steadiness(curve));
        assertEquals("too short to tell", LabReport.steadiness(curve.subList(0, 5000)));
    }

    @Test
    void aStallReportNamesWhatTcpHoldsForTheConnection() {
        // /proc/net/tcp of the lab guest: a listener, then both ends of 198.51.100.1:21008 <-> :51232.
        List<String> table = List.of(
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
                "   0: 00000000:5210 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1171 1",
                "   1: 016433C6:5210 016433C6:C820 01 00000000:00000020 00:00000000 00000000     0        0 1225 1",
                "   2: 016433C6:C820 016433C6:5210 01 00000044:00000000 00:00000000 00000000     0        0 1226 1");
        assertEquals(" (its TCP connection: 32 bytes received and not read, 0 not sent)",
                PerfEndpoint.tcpQueues(table, 21008, 51232));
        assertEquals(" (its TCP connection: 0 bytes received and not read, 68 not sent)",
                PerfEndpoint.tcpQueues(table, 51232, 21008));
        assertEquals("", PerfEndpoint.tcpQueues(table, 21008, 1));
    }
}
