package io.rdma4j.examples;

import io.rdma4j.verbs.Mtu;
import java.util.Map;

/**
 * The options of rdma-core's {@code ibv_rc_pingpong}, {@code ibv_ud_pingpong} and {@code ibv_srq_pingpong}, with
 * their short and long names and each tool's defaults. Not every tool takes every option: {@code -m} is RC and SRQ
 * only, {@code -q} SRQ only; an option the tool lacks is refused as the C tool refuses it (usage, exit 1).
 *
 * @param server the server's host name (the one operand), or null to be the server
 */
record PingPongOptions(String device, int ibPort, int gidIndex, int size, int iters, int rxDepth, int tcpPort,
                       int serviceLevel, boolean events, boolean validate, Mtu mtu, int queuePairs, String server) {

    /** What differs between the three tools: their name, defaults and extra options. */
    record Tool(String name, int size, int rxDepth, boolean takesMtu, boolean takesQueuePairs) {
        static final Tool RC = new Tool("ibv_rc_pingpong", 4096, 500, true, false);
        static final Tool UD = new Tool("ibv_ud_pingpong", 1024, 500, false, false);
        static final Tool SRQ = new Tool("ibv_srq_pingpong", 4096, 500, true, true);
    }

    private static final Map<String, String> LONG_NAMES = Map.ofEntries(Map.entry("--port", "-p"),
            Map.entry("--ib-dev", "-d"), Map.entry("--ib-port", "-i"), Map.entry("--size", "-s"),
            Map.entry("--mtu", "-m"), Map.entry("--num-qp", "-q"), Map.entry("--rx-depth", "-r"),
            Map.entry("--iters", "-n"), Map.entry("--sl", "-l"), Map.entry("--events", "-e"),
            Map.entry("--gid-idx", "-g"), Map.entry("--chk", "-c"));

    static PingPongOptions parse(Tool tool, String... args) {
        String device = null;
        String server = null;
        int ibPort = 1;
        int gidIndex = -1;
        int size = tool.size();
        int iters = 1000;
        int rxDepth = tool.rxDepth();
        int tcpPort = 18515;
        int serviceLevel = 0;
        boolean events = false;
        boolean validate = false;
        Mtu mtu = Mtu.MTU_1024;
        int queuePairs = tool.takesQueuePairs() ? 16 : 1;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String value = null;
            if (arg.startsWith("--") && arg.contains("=")) {
                value = arg.substring(arg.indexOf('=') + 1);
                arg = arg.substring(0, arg.indexOf('='));
            }
            String option = LONG_NAMES.getOrDefault(arg, arg);
            if ((option.equals("-m") && !tool.takesMtu()) || (option.equals("-q") && !tool.takesQueuePairs())) {
                throw new IllegalArgumentException(tool.name() + " has no option " + arg);
            }
            switch (option) {
                case "-e" -> events = true;
                case "-c" -> validate = true;
                case "-p", "-d", "-i", "-s", "-m", "-q", "-r", "-n", "-l", "-g" -> {
                    if (value == null) {
                        if (i + 1 >= args.length) {
                            throw new IllegalArgumentException(arg + " needs a value");
                        }
                        value = args[++i];
                    }
                    switch (option) {
                        case "-p" -> tcpPort = range(arg, value, 0, 65535);
                        case "-d" -> device = value;
                        case "-i" -> ibPort = range(arg, value, 1, 255);
                        case "-s" -> size = range(arg, value, 1, Integer.MAX_VALUE);
                        case "-m" -> mtu = mtu(value);
                        case "-q" -> queuePairs = range(arg, value, 1, 255); // below ibv_srq_pingpong's MAX_QP
                        case "-r" -> rxDepth = range(arg, value, 1, Integer.MAX_VALUE);
                        case "-n" -> iters = range(arg, value, 1, Integer.MAX_VALUE);
                        case "-l" -> serviceLevel = range(arg, value, 0, 15);
                        default -> gidIndex = range(arg, value, 0, 255);
                    }
                }
                default -> {
                    if (arg.startsWith("-") || server != null) {
                        throw new IllegalArgumentException(arg.startsWith("-") ? "unknown option " + arg
                                : "one server name only, not " + server + " and " + arg);
                    }
                    server = arg;
                }
            }
        }
        if (queuePairs > rxDepth) {
            // ibv_srq_pingpong's own check: every QP needs a receive in the shared queue.
            throw new IllegalArgumentException("rx_depth " + rxDepth + " is too small for " + queuePairs
                    + " QPs -- must have at least one receive per QP.");
        }
        return new PingPongOptions(device, ibPort, gidIndex, size, iters, rxDepth, tcpPort, serviceLevel, events,
                validate, mtu, queuePairs, server);
    }

    /** The usage text of the tool, as the C tool prints it. */
    static String usage(Tool tool) {
        return "Usage:\n"
                + "  " + tool.name() + "            start a server and wait for connection\n"
                + "  " + tool.name() + " <host>     connect to server at <host>\n\n"
                + "Options:\n"
                + "  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n"
                + "  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n"
                + "  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n"
                + "  -s, --size=<size>      size of message to exchange (default " + tool.size() + ")\n"
                + (tool.takesMtu() ? "  -m, --mtu=<size>       path MTU (default 1024)\n" : "")
                + (tool.takesQueuePairs() ? "  -q, --num-qp=<num>     number of QPs to use (default 16)\n" : "")
                + "  -r, --rx-depth=<dep>   number of receives to post at a time (default " + tool.rxDepth() + ")\n"
                + "  -n, --iters=<iters>    number of exchanges (default 1000)\n"
                + "  -l, --sl=<sl>          service level value\n"
                + "  -e, --events           sleep on CQ events (default poll)\n"
                + "  -g, --gid-idx=<gid index> local port gid index\n"
                + "  -c, --chk              validate received buffer";
    }

    private static int range(String option, String value, int min, int max) {
        long n;
        try {
            n = Long.decode(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": not a number: " + value);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(option + " is " + min + ".." + max + ", not " + value);
        }
        return (int) n;
    }

    /** {@code pp_mtu_to_enum}: 256, 512, 1024, 2048 or 4096. */
    private static Mtu mtu(String value) {
        return switch (value) {
            case "256" -> Mtu.MTU_256;
            case "512" -> Mtu.MTU_512;
            case "1024" -> Mtu.MTU_1024;
            case "2048" -> Mtu.MTU_2048;
            case "4096" -> Mtu.MTU_4096;
            default -> throw new IllegalArgumentException("-m: the MTU is 256, 512, 1024, 2048 or 4096, not " + value);
        };
    }
}
