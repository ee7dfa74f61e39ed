package io.rdma4j.examples;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * The examples jar's entry point: {@code java -jar rdma4j-examples.jar <example> [options]}. Each example speaks
 * the options and the wire protocol of the rdma-core tool it is named after, so either end can be the C tool.
 */
public final class Main {

    /** An example's entry point. */
    @FunctionalInterface
    private interface Example {
        void run(String[] args) throws Exception;
    }

    private record Entry(String description, Example main) {
    }

    private static final Map<String, Entry> EXAMPLES = new TreeMap<>(Map.of(
            "echo", new Entry("16-byte echo over rdma_cm (librdmacm's rdma_server and rdma_client)", Echo::main),
            "kv", new Entry("key-value service on rdma4j messaging: PUT/GET messages, large values by READ (Java at"
                    + " both ends)", Kv::main),
            "rc-pingpong", new Entry("RC SEND ping-pong, QPs connected by hand (ibv_rc_pingpong)", RcPingPong::main),
            "rping", new Entry("RDMA READ/WRITE ping over rdma_cm (librdmacm's rping)", Rping::main),
            "srq-pingpong", new Entry("RC SEND ping-pong of many QPs on a shared receive queue (ibv_srq_pingpong)",
                    SrqPingPong::main),
            "ud-pingpong", new Entry("UD datagram ping-pong through address handles (ibv_ud_pingpong)",
                    UdPingPong::main),
            "write-bw", new Entry("RDMA WRITE bandwidth over rdma_cm, progress every second (Java at both ends)",
                    WriteBw::main)));

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
            System.out.println("usage: java -jar rdma4j-examples.jar <example> [options]   (<example> --help for its"
                    + " options)");
            System.out.println("examples:");
            EXAMPLES.forEach((name, entry) -> System.out.printf("  %-12s %s%n", name, entry.description()));
            return;
        }
        Entry entry = EXAMPLES.get(args[0]);
        if (entry == null) {
            System.err.println("no example '" + args[0] + "'; examples: " + EXAMPLES.keySet());
            System.exit(2);
            return;
        }
        entry.main().run(Arrays.copyOfRange(args, 1, args.length));
    }
}
