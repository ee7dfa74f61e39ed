package io.rdma4j.benchmarks;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * {@link Perf}'s options: perftest's names, defaults and rules for the options both tools share, so that one
 * command line means the same to {@code ib_write_bw} and to {@code perf write_bw}. Immutable.
 *
 * @param test              which of perftest's tests
 * @param server            the server's address (client), or {@code null} (server: listens on all addresses)
 * @param port              {@code -p}, default 18515
 * @param size              {@code -s}, bytes per message (default 2 for latency, 65536 for bandwidth)
 * @param iterations        {@code -n} (default 1000 for latency, 5000 for bandwidth)
 * @param txDepth           {@code -t}, requests in flight (default 1 for latency, 128 for bandwidth; never above
 *                          {@code -n})
 * @param cqModeration      {@code -Q}, one signaled request every this many (default 100; 1 above 8192 bytes unless
 *                          given; never above the TX depth)
 * @param rxDepth           {@code -r}, receives posted ahead for SEND tests (default 512)
 * @param inlineSize        {@code -I}, messages up to this size are sent inline (default 0: perftest enables inline
 *                          only for devices it knows, and rxe and siw are not among them)
 * @param outstandingReads  {@code -o}, RDMA READs in flight each way (default 16)
 * @param unsorted          {@code -U}, print every iteration's latency in order (latency tests)
 * @param warmup            {@code -w} (rdma4j's own; perftest has none for these tests), iterations run before
 *                          the measured ones and left out of the report (default 0): the JIT's compiling is then
 *                          done before the clock starts. A bandwidth test's warm-up requests carry at most 4 KiB.
 *                          Both sides must be given the same.
 */
record PerfOptions(Test test, InetAddress server, int port, int size, int iterations, int txDepth, int cqModeration,
                   int rxDepth, int inlineSize, int outstandingReads, boolean unsorted, int warmup) {

    /** perftest's six basic tests, by their program names without {@code ib_}. */
    enum Test {
        SEND_LAT, WRITE_LAT, READ_LAT, SEND_BW, WRITE_BW, READ_BW;

        boolean latency() {
            return this == SEND_LAT || this == WRITE_LAT || this == READ_LAT;
        }

        boolean sends() {
            return this == SEND_LAT || this == SEND_BW;
        }

        boolean reads() {
            return this == READ_LAT || this == READ_BW;
        }

        /** Whether the server only waits for the client to finish: the peer of its READs or WRITEs. */
        boolean passiveServer() {
            return this == READ_LAT || this == READ_BW || this == WRITE_BW;
        }

        /** The name Perf takes: {@code send_lat} for SEND_LAT. */
        String command() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The perftest program: {@code ib_send_lat} for SEND_LAT. */
        String perftest() {
            return "ib_" + command();
        }

        static Test of(String name) {
            for (Test t : values()) {
                if (t.name().equalsIgnoreCase(name)) {
                    return t;
                }
            }
            throw new IllegalArgumentException("unknown test " + name + " (send_lat, write_lat, read_lat, send_bw,"
                    + " write_bw, read_bw)");
        }
    }

    static final String USAGE = """
            perf TEST [options]              server: waits for one client
            perf TEST [options] SERVER       client: connects to SERVER
            TEST: send_lat write_lat read_lat send_bw write_bw read_bw (as perftest's ib_TEST)
            \t-p port\t\tdefault 18515
            \t-s size\t\tbytes per message (default 2 for latency tests, 65536 for bandwidth tests)
            \t-n iters\titerations (default 1000 for latency tests, 5000 for bandwidth tests)
            \t-t depth\trequests in flight (default 1 for latency tests, 128 for bandwidth tests)
            \t-Q count\tone signaled request every COUNT (default 100; 1 for messages above 8192 bytes)
            \t-r depth\treceives posted ahead in SEND tests (default 512)
            \t-I size\t\tsend messages up to SIZE bytes inline (default 0)
            \t-o reads\tRDMA READs in flight (default 16)
            \t-U\t\tprint every iteration's latency in order
            \t-w iters\twarm-up iterations before the measured ones, of at most 4 KiB in bandwidth tests (default 0;
            \t\t\tgive both sides the same)""";

    /** Parses perftest-style arguments. */
    static PerfOptions parse(String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("which test? (send_lat, write_lat, read_lat, send_bw, write_bw,"
                    + " read_bw)");
        }
        Test test = Test.of(args[0]);
        InetAddress server = null;
        int port = 18515;
        int size = test.latency() ? 2 : 65536;
        int iterations = test.latency() ? 1000 : 5000;
        int txDepth = test.latency() ? 1 : 128;
        Integer cqModeration = null;
        int rxDepth = 512;
        int inlineSize = 0;
        int outstandingReads = 16;
        boolean unsorted = false;
        int warmup = 0;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "-p" -> port = number(args, ++i, 1, 65535);
                case "-s" -> size = number(args, ++i, 1, 1 << 30);
                case "-n" -> iterations = number(args, ++i, 5, 100_000_000);
                case "-t" -> txDepth = number(args, ++i, 1, 8192);
                case "-Q" -> cqModeration = number(args, ++i, 1, 1024);
                case "-r" -> rxDepth = number(args, ++i, 1, 8192);
                case "-I" -> inlineSize = number(args, ++i, 0, 4096);
                case "-o" -> outstandingReads = number(args, ++i, 1, 255);
                case "-U" -> unsorted = true;
                case "-w" -> warmup = number(args, ++i, 0, 100_000_000);
                default -> {
                    if (args[i].startsWith("-") || server != null) {
                        throw new IllegalArgumentException("unknown option " + args[i]);
                    }
                    server = host(args[i]);
                }
            }
        }
        // perftest: never more in flight than iterations; no moderation for messages above 8192 bytes unless asked
        // for, and never above the TX depth.
        txDepth = Math.min(txDepth, iterations);
        int moderation = cqModeration != null ? cqModeration : size > 8192 ? 1 : 100;
        return new PerfOptions(test, server, port, size, iterations, txDepth, Math.min(moderation, txDepth), rxDepth,
                inlineSize, outstandingReads, unsorted, warmup);
    }

    /** Warm-up and measured iterations. */
    int total() {
        return warmup + iterations;
    }

    boolean isServer() {
        return server == null;
    }

    private static InetAddress host(String name) {
        try {
            return InetAddress.getByName(name);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host " + name);
        }
    }

    private static int number(String[] args, int i, int min, int max) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        int n;
        try {
            n = Integer.parseInt(args[i]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(args[i - 1] + ": not a number: " + args[i]);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(args[i - 1] + " is " + min + ".." + max + ", not " + args[i]);
        }
        return n;
    }
}
