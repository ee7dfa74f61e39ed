package io.rdma4j.benchmarks;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;

/**
 * A latency test's result, computed from the cycle counter at each iteration's post exactly as perftest's
 * {@code print_report_lat} computes it, so that the two tools' rows mean the same: the deltas between consecutive
 * posts (divided by 2 for a ping-pong, whose iteration is a round trip), sorted, without the 2 largest; the median,
 * the 99% and 99.9% entries. Immutable.
 *
 * @param size        bytes per message
 * @param iterations  iterations run
 * @param min         the smallest delta, µs
 * @param max         the largest delta kept (perftest's {@code delta[measure_cnt]}), µs
 * @param median      µs (perftest's t_typical)
 * @param average     µs
 * @param stdev       µs
 * @param p99         µs
 * @param p999        µs
 */
record LatencyReport(int size, int iterations, double min, double max, double median, double average, double stdev,
                     double p99, double p999) {

    /** perftest's header line, which LabBench parses in both tools' output. */
    static final String HEADER = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
            + "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    /** perftest drops the slowest iterations (LAT_MEASURE_TAIL). */
    private static final int TAIL = 2;

    /**
     * The report of {@code posted} (cycle counter at each post), {@code roundTrip} for tests whose iteration is a
     * round trip (SEND and WRITE ping-pong; a READ's iteration is its own round trip).
     */
    static LatencyReport of(int size, long[] posted, boolean roundTrip, double cyclesPerMicrosecond) {
        double quotient = cyclesPerMicrosecond * (roundTrip ? 2 : 1);
        long[] delta = deltas(posted);
        Arrays.sort(delta);
        int n = delta.length - TAIL;
        if (n < 2) {
            throw new IllegalArgumentException("a latency report needs at least " + (TAIL + 3) + " iterations, not "
                    + posted.length);
        }
        double median = ((n - 1) % 2 != 0 ? (delta[n / 2] + delta[n / 2 - 1]) / 2 : delta[n / 2]) / quotient;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += delta[i] / quotient;
        }
        double average = sum / n;
        double squares = 0;
        for (int i = 0; i < n; i++) {
            double d = average - delta[i] / quotient;
            squares += d * d;
        }
        return new LatencyReport(size, posted.length, delta[0] / quotient, delta[n] / quotient, median, average,
                Math.sqrt(squares / n), delta[(int) Math.ceil(n * 0.99)] / quotient,
                delta[(int) Math.ceil(n * 0.999)] / quotient);
    }

    /** Prints every iteration's latency in order, as perftest's {@code -U} does ("#, usec", then "i, µs"). */
    static void printUnsorted(PrintStream out, long[] posted, boolean roundTrip, double cyclesPerMicrosecond) {
        double quotient = cyclesPerMicrosecond * (roundTrip ? 2 : 1);
        long[] delta = deltas(posted);
        StringBuilder lines = new StringBuilder("#, usec\n");
        for (int i = 0; i < delta.length; i++) {
            lines.append(i + 1).append(", ").append(String.format(Locale.ROOT, "%g", delta[i] / quotient))
                    .append('\n');
        }
        out.print(lines);
    }

    /** perftest's header and this report's row. */
    void print(PrintStream out) {
        out.println(HEADER);
        out.printf(Locale.ROOT, " %-7d %-10d    %-7.2f        %-7.2f      %-7.2f          %-7.2f          %-7.2f"
                        + "        %-7.2f                %-7.2f%n", size, iterations, min, max, median, average, stdev,
                p99, p999);
    }

    private static long[] deltas(long[] posted) {
        long[] delta = new long[posted.length - 1];
        for (int i = 0; i < delta.length; i++) {
            delta[i] = posted[i + 1] - posted[i];
        }
        return delta;
    }
}
