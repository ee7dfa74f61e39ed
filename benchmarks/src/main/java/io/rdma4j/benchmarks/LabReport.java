package io.rdma4j.benchmarks;

import io.rdma4j.benchmarks.LabBench.Sample;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * LabBench's tables: per device, comparison and metric the median of the rounds for C and for Java, the ratio
 * Java/C (the median of the ratios of the runs made back to back: the emulator's speed drifts between them), each
 * side's spread (lowest to highest round, as ± % of its median), the control's C again/C (the median and range of
 * the rounds' ratios of C's two runs) and the target with whether it is met; the warm-up curves as the mean of each
 * block of 1,000 iterations; the failures. Markdown and CSV.
 */
final class LabReport {

    private static final int BLOCK = 1000;

    /** One row per device, comparison and metric, in the order the samples came. */
    private final List<Row> table = new ArrayList<>();
    private final Map<String, List<Double>> curves;
    private final List<String> failures;
    private final String environment;
    private final int rounds;

    LabReport(List<Sample> samples, Map<String, List<Double>> curves, List<String> failures, String environment,
              int rounds) {
        Map<String, List<Sample>> rows = new LinkedHashMap<>();
        for (Sample s : samples) {
            rows.computeIfAbsent(s.device() + "\u0000" + s.what() + "\u0000" + s.metric(), k -> new ArrayList<>())
                    .add(s);
        }
        for (List<Sample> row : rows.values()) {
            double[] c = values(row, "C");
            double[] java = values(row, "Java");
            double[] control = pairRatios(row, LabBench.C_AGAIN);
            table.add(new Row(row.getFirst(), median(c), median(java), median(pairRatios(row, "Java")), spread(c),
                    spread(java), c.length, java.length, median(control), min(control), max(control)));
        }
        this.curves = curves;
        this.failures = failures;
        this.environment = environment;
        this.rounds = rounds;
    }

    /**
     * One table row; {@code ratio} is the median of its pairs' Java/C, {@code control} of their C again/C, with its
     * lowest and highest (NaN without control runs).
     */
    private record Row(Sample first, double c, double java, double ratio, double cSpread, double javaSpread,
                       int cRounds, int javaRounds, double control, double controlLow, double controlHigh) {

        /** Whether the target is met: Java/C at most the target where lower is better, at least where higher is. */
        String met() {
            if (Double.isNaN(first.target()) || Double.isNaN(ratio)) {
                return "";
            }
            return (first.higherIsBetter() ? ratio >= first.target() : ratio <= first.target()) ? "yes" : "NO";
        }

        String target() {
            return Double.isNaN(first.target()) ? "" : (first.higherIsBetter() ? "≥ " : "≤ ")
                    + String.format(Locale.ROOT, "%.2f", first.target());
        }
    }

    String markdown(LocalDate date) {
        StringBuilder md = new StringBuilder();
        md.append("# rdma4j against C in the lab, ").append(date).append("\n\n");
        md.append("Made by `src/test/lab/rdma-lab perf` (").append(rounds).append(rounds == 1 ? " round" : " rounds")
                .append(", C and Java back to back in one boot, alternating which goes first). Environment: ")
                .append(environment).append("\n\n");
        md.append(String.format(Locale.ROOT, """
                C is perftest (`ib_*_lat`, `ib_*_bw` with `-R`) and `registration.c`; Java is rdma4j's `Perf` (the \
                same loops and options, the same cycle counter and the same statistics) and `Registration`. C and Java \
                are each the median of the rounds; spread is lowest to highest round as ± %% of that median; runs are \
                the rounds (or windows) that measured something, each side's (a run that failed is under Failures); \
                Java/C is the median of each round's own Java/C (the emulator's speed drifts from run to run, and only \
                runs made back to back compare). C again is perftest run once more right after each latency and \
                bandwidth pair: C again/C, the median of the rounds' ratios of C's two runs with their lowest and \
                highest, is what the emulator's drift alone does to a ratio of two runs of one program. Java's runs do \
                unmeasured iterations first (`-w`: %,d for latency, %,d requests of at most 4 KiB for bandwidth, all \
                retired and the JVM's compiler threads idle before the clock starts); perftest has no such option, and \
                its first iterations are in its figures. The warm-up table shows what the JIT costs from the first \
                iteration. Both registration programs first register 4 KiB and create a queue pair %,d times each and \
                run each loop %.1f s, unmeasured (Java then waits for its compiler threads to go idle); then, held \
                open together on one CPU, they count each loop in windows of %.1f s, C's and Java's alternating, %d of \
                each per round (which goes first alternates too), and after each such pair a window of a second \
                registration.c, the control: the control path's values are the median of the windows, its spread \
                lowest to highest window, its Java/C the median of each window's Java/C with the C window next to it, \
                and its C again/C likewise. All register a buffer kept in 4 KiB pages.

                """, LabBench.LATENCY_WARMUP, LabBench.BANDWIDTH_WARMUP, LabBench.REGISTRATION_WARMUP,
                LabBench.REGISTRATION_SECONDS, LabBench.REGISTRATION_SECONDS, LabBench.REGISTRATION_WINDOWS));
        section(md, "Latency (µs, lower is better)", "µs");
        section(md, "Bandwidth (MB/s = 2^20 bytes/s) and message rate (Mpps), higher is better", "MB/s", "Mpps");
        section(md, "Control path: operations per second, higher is better", "ops/s");
        warmup(md);
        md.append("## Failures\n\n");
        if (failures.isEmpty()) {
            md.append("None: every run exited 0 and no JVM crashed.\n");
        } else {
            for (String f : failures) {
                md.append("- ").append(f).append('\n');
            }
        }
        return md.toString();
    }

    private void section(StringBuilder md, String title, String... units) {
        md.append("## ").append(title).append("\n\n");
        List<String> wanted = List.of(units);
        List<Row> rows = table.stream().filter(r -> wanted.contains(r.first().unit())).toList();
        if (rows.isEmpty()) {
            md.append("Not measured.\n\n");
            return;
        }
        md.append("| device | test | metric | C | Java | Java/C | C spread | Java spread | runs C/Java | C again/C (range)"
                        + " | target | met |\n")
                .append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
        for (Row r : rows) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %.2f | %s | %s | %d/%d | %s | %s | %s |%n",
                    r.first().device(), r.first().what(), r.first().metric(), number(r.c()), number(r.java()),
                    r.ratio(), percent(r.cSpread()), percent(r.javaSpread()), r.cRounds(), r.javaRounds(), control(r),
                    r.target(), r.met()));
        }
        md.append('\n');
    }

    private void warmup(StringBuilder md) {
        md.append("## Warm-up: 64-byte SEND ping-pong from the first iteration (mean µs per 1,000 iterations)\n\n");
        if (curves.isEmpty()) {
            md.append("Not measured.\n\n");
            return;
        }
        List<String> names = new ArrayList<>(curves.keySet());
        md.append("| iterations | ").append(String.join(" | ", names)).append(" |\n|---|")
                .append("---:|".repeat(names.size())).append('\n');
        int blocks = curves.values().stream().mapToInt(c -> c.size() / BLOCK).max().orElse(0);
        for (int b = 0; b < blocks; b++) {
            md.append(String.format(Locale.ROOT, "| %,d–%,d |", b * BLOCK + 1, (b + 1) * BLOCK));
            for (String name : names) {
                List<Double> curve = curves.get(name);
                md.append(' ').append(curve.size() >= (b + 1) * BLOCK ? number(mean(curve, b)) : "").append(" |");
            }
            md.append('\n');
        }
        md.append('\n');
        for (String name : names) {
            md.append("- ").append(name).append(": ").append(steadiness(curves.get(name))).append('\n');
        }
        md.append('\n');
    }

    /**
     * From which block on no block is more than 10% slower than the steady state (the mean of the last 5 blocks), and
     * from which block on the median of no three neighbouring blocks is: under emulation single slow blocks come and
     * go in C's curves as in Java's, and each resets the first criterion, not the second. Slower only: what a warm-up
     * costs is time, and a block faster than the steady state is the emulator's level switching (C's curves switch
     * between levels ~2x apart without a JIT), not a program still warming up.
     */
    static String steadiness(List<Double> curve) {
        int blocks = curve.size() / BLOCK;
        if (blocks < 6) {
            return "too short to tell";
        }
        double[] means = new double[blocks];
        for (int b = 0; b < blocks; b++) {
            means[b] = mean(curve, b);
        }
        double steady = 0;
        for (int b = blocks - 5; b < blocks; b++) {
            steady += means[b] / 5;
        }
        double[] medians = new double[blocks];
        for (int b = 0; b < blocks; b++) {
            int first = Math.clamp(b - 1, 0, blocks - 3);
            medians[b] = median(Arrays.copyOfRange(means, first, first + 3));
        }
        return String.format(Locale.ROOT, "steady state %s µs; at most 10%% slower from iteration %,d on (every"
                + " block), from %,d on (the median of three neighbouring blocks)", number(steady),
                atMostTenPercentSlowerFrom(means, steady) * BLOCK + 1,
                atMostTenPercentSlowerFrom(medians, steady) * BLOCK + 1);
    }

    /** The first index from which no value exceeds {@code steady} by more than 10%. */
    private static int atMostTenPercentSlowerFrom(double[] values, double steady) {
        int from = values.length;
        while (from > 0 && values[from - 1] <= 1.10 * steady) {
            from--;
        }
        return from;
    }

    String csv(LocalDate date) {
        StringBuilder csv = new StringBuilder("date,environment,device,test,metric,unit,c,java,java_over_c,"
                + "c_spread,java_spread,c_rounds,java_rounds,target,met,c_again_over_c,c_again_over_c_low,"
                + "c_again_over_c_high\n");
        for (Row r : table) {
            csv.append(String.format(Locale.ROOT,
                    "%s,\"%s\",%s,%s,%s,%s,%s,%s,%.4f,%.4f,%.4f,%d,%d,%s,%s,%.4f,%.4f,%.4f%n", date,
                    environment.replace("\"", "'"), r.first().device(), r.first().what(), r.first().metric(),
                    r.first().unit(), r.c(), r.java(), r.ratio(), r.cSpread(), r.javaSpread(), r.cRounds(),
                    r.javaRounds(), Double.isNaN(r.first().target()) ? "" : r.first().target(), r.met(), r.control(),
                    r.controlLow(), r.controlHigh()));
        }
        return csv.toString();
    }

    private static double mean(List<Double> curve, int block) {
        double sum = 0;
        for (int i = block * BLOCK; i < (block + 1) * BLOCK; i++) {
            sum += curve.get(i);
        }
        return sum / BLOCK;
    }

    /**
     * {@code side}/C of each pair of runs made back to back (see {@link Sample#pair}); a pair missing either side is
     * left out.
     */
    private static double[] pairRatios(List<Sample> row, String side) {
        Map<String, double[]> pairs = new LinkedHashMap<>();
        for (Sample s : row) {
            double[] cAndSide = pairs.computeIfAbsent(s.pair(), k -> new double[] {Double.NaN, Double.NaN});
            if (s.side().equals("C")) {
                cAndSide[0] = s.value();
            } else if (s.side().equals(side)) {
                cAndSide[1] = s.value();
            }
        }
        return pairs.values().stream().mapToDouble(cAndSide -> cAndSide[1] / cAndSide[0])
                .filter(r -> !Double.isNaN(r)).toArray();
    }

    /** The control's cell: C again/C's median and, from two rounds on, its range; empty without control runs. */
    private static String control(Row r) {
        if (Double.isNaN(r.control())) {
            return "";
        }
        return r.controlLow() == r.controlHigh() ? String.format(Locale.ROOT, "%.2f", r.control())
                : String.format(Locale.ROOT, "%.2f (%.2f–%.2f)", r.control(), r.controlLow(), r.controlHigh());
    }

    private static double[] values(List<Sample> samples, String side) {
        return samples.stream().filter(s -> s.side().equals(side)).mapToDouble(Sample::value).toArray();
    }

    private static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    private static double min(double[] values) {
        return Arrays.stream(values).min().orElse(Double.NaN);
    }

    private static double max(double[] values) {
        return Arrays.stream(values).max().orElse(Double.NaN);
    }

    /** Half the range as a fraction of the median. */
    private static double spread(double[] v) {
        return v.length < 2 ? Double.NaN : (max(v) - min(v)) / 2 / median(v);
    }

    private static String percent(double fraction) {
        return Double.isNaN(fraction) ? "" : String.format(Locale.ROOT, "± %.0f%%", fraction * 100);
    }

    private static String number(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        return String.format(Locale.ROOT, v >= 100 ? "%,.0f" : v >= 1 ? "%.2f" : "%.4f", v);
    }
}
