package io.rdma4j.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What LabBench reads from perftest's output and from {@link Perf}'s, which prints the same lines: the result
 * row under the last {@code #bytes} header, by column name ({@code t_typical[usec]}, {@code 99% percentile[usec]},
 * {@code BW average[MB/sec]}, {@code MsgRate[Mpps]}, …), and the per-iteration latencies of {@code -U}.
 *
 * @param columns   the result row's values by the header's column names, in order
 * @param unsorted  the {@code -U} latencies in iteration order (empty without {@code -U})
 */
record PerftestOutput(Map<String, Double> columns, List<Double> unsorted) {

    private static final Pattern UNSORTED = Pattern.compile("^\\s*\\d+, ([0-9.eE+-]+)\\s*$");

    /** Parses one run's standard output. */
    static PerftestOutput parse(String text) {
        String[] lines = text.split("\\R");
        int header = -1;
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].contains("#bytes")) {
                header = i;
            }
        }
        if (header < 0 || header + 1 >= lines.length) {
            throw new IllegalArgumentException("no result row (no '#bytes' header followed by a row) in:\n" + text);
        }
        List<String> names = columnNames(lines[header]);
        String[] values = lines[header + 1].trim().split("\\s+");
        if (values.length < names.size()) {
            throw new IllegalArgumentException("the result row has " + values.length + " values for "
                    + names.size() + " columns " + names + ": " + lines[header + 1]);
        }
        Map<String, Double> columns = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            try {
                columns.put(names.get(i), Double.parseDouble(values[i]));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("column " + names.get(i) + " is not a number: " + values[i]);
            }
        }
        List<Double> unsorted = new ArrayList<>();
        for (String line : lines) {
            Matcher m = UNSORTED.matcher(line);
            if (m.matches()) {
                unsorted.add(Double.parseDouble(m.group(1)));
            }
        }
        return new PerftestOutput(Map.copyOf(columns), List.copyOf(unsorted));
    }

    /** The value of {@code column}, if the row has it. */
    OptionalDouble value(String column) {
        Double v = columns.get(column);
        return v == null ? OptionalDouble.empty() : OptionalDouble.of(v);
    }

    /**
     * The value of {@code column} as a measurement, if the row has it.
     *
     * @throws IllegalArgumentException if it is not a positive number: no run measures a time or a rate of 0, and
     *                                  perftest prints 0.00 when its calibration of the CPU clock failed (its
     *                                  "Correlation coefficient r^2: ... < 0.9", seen once under emulation)
     */
    OptionalDouble measurement(String column) {
        OptionalDouble v = value(column);
        if (v.isPresent() && !(v.getAsDouble() > 0 && Double.isFinite(v.getAsDouble()))) {
            throw new IllegalArgumentException(column + " is " + v.getAsDouble() + ", not a measurement");
        }
        return v;
    }

    /**
     * The header's column names: words split at blanks, with perftest's two-word names joined again
     * ({@code BW peak[MB/sec]}, {@code 99% percentile[usec]}).
     */
    static List<String> columnNames(String header) {
        List<String> names = new ArrayList<>();
        String pending = null;
        for (String word : header.trim().split("\\s+")) {
            if (pending != null) {
                names.add(pending + " " + word);
                pending = null;
            } else if (word.equals("BW") || word.endsWith("%")) {
                pending = word;
            } else {
                names.add(word);
            }
        }
        return names;
    }
}
