package io.rdma4j.examples;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.function.Function;

/**
 * What the examples' {@code main} methods share: {@code --help}, bad options and failures reported as their C tools
 * report them (a message, the usage, an exit code).
 */
final class CommandLine {

    /** Runs an example with parsed options. */
    @FunctionalInterface
    interface Example<O> {
        void run(O options) throws InterruptedException, IOException;
    }

    private CommandLine() {
    }

    /** The value of the option at {@code args[i - 1]}: {@code args[i]}, which must be there. */
    static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    /** The address {@code name} names: a literal or a host name. */
    static InetAddress host(String name) {
        try {
            return InetAddress.getByName(name);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host " + name);
        }
    }

    /** The number that is the value of the option at {@code args[i - 1]}, which must lie in {@code min..max}. */
    static long number(String[] args, int i, long min, long max) {
        String v = value(args, i);
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(args[i - 1] + ": not a number: " + v);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(args[i - 1] + " is " + min + ".." + max + ", not " + v);
        }
        return n;
    }

    /**
     * Prints {@code usage} for {@code --help}; parses {@code args}, and on {@link IllegalArgumentException} prints
     * the message and the usage and exits with {@code badOptionsExit}; runs the example, and on a
     * {@link RuntimeException} or {@link IOException} prints "{@code name} failed: message" and exits with
     * {@code failureExit}.
     */
    static <O> void run(String name, String usage, String[] args, Function<String[], O> parse, int badOptionsExit,
                        int failureExit, Example<O> example) throws InterruptedException {
        if (Arrays.asList(args).contains("--help")) {
            System.out.println(usage);
            return;
        }
        O options;
        try {
            options = parse.apply(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.out.println(usage);
            System.exit(badOptionsExit);
            return;
        }
        try {
            example.run(options);
        } catch (RuntimeException | IOException e) {
            System.err.println(name + " failed: " + e.getMessage());
            System.exit(failureExit);
        }
    }
}
