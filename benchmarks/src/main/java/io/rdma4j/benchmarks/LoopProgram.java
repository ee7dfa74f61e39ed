package io.rdma4j.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A registration program held open ({@code registration.c} or {@link Registration}): it warms up, says
 * {@code ready}, then counts one loop per line it is sent and answers with that loop's rate. Its output is copied,
 * line by line, to a file under LabBench's {@code raw/}. Not thread-safe: one caller sends and reads.
 */
final class LoopProgram implements AutoCloseable {

    /** What the reader thread queues once the program's output ends. */
    private static final String END = "\u0000end";

    private final Process process;
    private final Path output;
    private final Writer commands;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private LoopProgram(Process process, Path output) {
        this.process = process;
        this.output = output;
        this.commands = process.outputWriter(StandardCharsets.UTF_8);
        Thread reader = new Thread(this::copyOutput, "output of " + output.getFileName());
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code command}, its output (and errors) copied to {@code output}. */
    static LoopProgram start(List<String> command, Path output) throws IOException {
        return new LoopProgram(new ProcessBuilder(command).redirectErrorStream(true).start(), output);
    }

    private void copyOutput() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); Writer copy = Files.newBufferedWriter(output)) {
            for (String line; (line = in.readLine()) != null; ) {
                copy.write(line);
                copy.write('\n');
                copy.flush();
                lines.add(line);
            }
        } catch (IOException e) {
            lines.add("output unreadable: " + e);
        } finally {
            lines.add(END);
        }
    }

    /**
     * Waits for {@code ready}.
     *
     * @throws IOException if the program ended or said something else first, or stayed silent for {@code seconds}
     */
    void awaitReady(long seconds) throws IOException, InterruptedException {
        String line = next(seconds);
        if (!line.equals("ready")) {
            throw failure("said \"" + line + "\" instead of ready");
        }
    }

    /**
     * Counts the loop that {@code loop} names ({@code register SIZE}, {@code queue-pair 0}) and returns its rate.
     *
     * @throws IOException if the program ended or answered something else (a rate that is not a positive number too:
     *     a loop that counted nothing would put a ratio of 0 or infinity in the table), or stayed silent for
     *     {@code seconds}
     */
    double rate(String loop, long seconds) throws IOException, InterruptedException {
        commands.write(loop + "\n");
        commands.flush();
        String line = next(seconds);
        double rate;
        try {
            rate = line.startsWith(loop + " ") ? Double.parseDouble(line.substring(loop.length() + 1)) : Double.NaN;
        } catch (NumberFormatException e) {
            rate = Double.NaN;
        }
        if (!(rate > 0 && Double.isFinite(rate))) {
            throw failure("answered \"" + line + "\" to " + loop);
        }
        return rate;
    }

    private String next(long seconds) throws IOException, InterruptedException {
        String line = lines.poll(seconds, TimeUnit.SECONDS);
        if (line == null) {
            throw failure("said nothing for " + seconds + " s");
        }
        if (line.equals(END)) {
            throw failure("ended");
        }
        return line;
    }

    private IOException failure(String what) throws InterruptedException {
        boolean crashed = false;
        if (!process.isAlive()) {
            process.waitFor();
            try {
                crashed = LabBench.crashed(Files.readString(output));
            } catch (IOException unreadable) {
                // the message below names the file
            }
        }
        return new IOException((crashed ? "THE JVM CRASHED: " : "") + what + " (" + output + ")");
    }

    /**
     * Ends the program's input and waits up to {@code seconds} for it to exit 0.
     *
     * @throws IOException if it exited otherwise or had to be killed
     */
    void finish(long seconds) throws IOException, InterruptedException {
        commands.close();
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new IOException("did not exit within " + seconds + " s (" + output + ")");
        }
        if (process.exitValue() != 0) {
            throw failure("exited " + process.exitValue());
        }
    }

    /** Kills the program if it still runs (without waiting for it, if this thread is interrupted). */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                process.destroyForcibly().waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
