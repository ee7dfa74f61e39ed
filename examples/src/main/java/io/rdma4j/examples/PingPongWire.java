package io.rdma4j.examples;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The TCP exchange of rdma-core's pingpong tools: each side sends one 52-byte "LID:QPN:PSN:GID" message per queue
 * pair (hex fields, NUL-padded). The client writes its messages, reads the server's and writes "done"; the server
 * reads the client's, connects its queue pairs, then writes its own and waits for "done". Also the "local address"
 * and "remote address" lines the tools print.
 */
final class PingPongWire {

    /** {@code sizeof "0000:000000:000000:00000000000000000000000000000000"}: the C tools read exactly this. */
    private static final int MESSAGE_SIZE = 52;
    /** How long the client waits for the server's TCP port to answer. */
    private static final int CONNECT_TIMEOUT_MILLIS = 10_000;

    /** Moves the queue pairs toward the peer's, once its destinations are known (the server does it before replying). */
    @FunctionalInterface
    interface Connect {
        void to(List<Destination> remote);
    }

    /** One queue pair's connection data. */
    record Destination(int lid, int qpn, int psn, byte[] gid) {

        String toWire() {
            return String.format("%04x:%06x:%06x:%s", lid, qpn, psn, HexFormat.of().formatHex(gid));
        }

        static Destination fromWire(String wire) {
            String[] f = wire.trim().split(":");
            if (f.length != 4 || f[3].length() != 32) {
                throw new IllegalStateException("the peer sent no pingpong address: '" + wire + "'");
            }
            return new Destination(Integer.parseInt(f[0], 16), Integer.parseInt(f[1], 16),
                    Integer.parseInt(f[2], 16), HexFormat.of().parseHex(f[3]));
        }

        /** Whether the GID's interface id is set: the C tools then address the peer by GID (RoCE), else by LID. */
        boolean global() {
            for (int i = 8; i < 16; i++) {
                if (gid[i] != 0) {
                    return true;
                }
            }
            return false;
        }

        /** The tools' line: {@code LID 0x0000, QPN 0x000011, PSN 0x123456, GID ::ffff:192.0.2.1}. */
        String describe() {
            return String.format("LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", lid, qpn, psn, ntop(gid));
        }
    }

    private PingPongWire() {
    }

    /**
     * Prints the local addresses, swaps destinations with the peer (as the client when {@code options.server()} is
     * set), prints the remote ones and returns them; {@code connect} has run on both sides when this returns.
     *
     * @param messages how many messages each side sends: one per queue pair, or a fixed number padded with zeros
     *                 ({@code ibv_srq_pingpong} always sends {@code MAX_QP}, 256)
     */
    static List<Destination> exchange(PingPongOptions options, List<Destination> mine, int messages, Connect connect,
                                      PrintStream out) throws IOException {
        mine.forEach(d -> out.println("  local address:  " + d.describe()));
        List<Destination> padded = new ArrayList<>(mine);
        while (padded.size() < messages) {
            padded.add(new Destination(0, 0, 0, new byte[16]));
        }
        List<Destination> remote;
        if (options.server() != null) {
            Socket socket = new Socket();
            try {
                // Bounded, unlike the C tools' connect(): a host that does not answer is an error in seconds.
                socket.connect(new InetSocketAddress(options.server(), options.tcpPort()), CONNECT_TIMEOUT_MILLIS);
            } catch (IOException failed) {
                socket.close();
                ConnectException e = new ConnectException("Couldn't connect to " + options.server() + ":"
                        + options.tcpPort() + " (" + failed.getMessage() + ")");
                e.initCause(failed);
                throw e;
            }
            try (socket) {
                write(socket.getOutputStream(), padded);
                remote = read(socket.getInputStream(), messages).subList(0, mine.size());
                socket.getOutputStream().write("done\0".getBytes(StandardCharsets.US_ASCII));
            }
            remote.forEach(d -> out.println("  remote address: " + d.describe()));
            connect.to(remote);
        } else {
            try (ServerSocket listener = new ServerSocket(options.tcpPort()); Socket socket = listener.accept()) {
                remote = read(socket.getInputStream(), messages).subList(0, mine.size());
                connect.to(remote);
                write(socket.getOutputStream(), padded);
                socket.getInputStream().read(new byte[MESSAGE_SIZE]);
            }
            remote.forEach(d -> out.println("  remote address: " + d.describe()));
        }
        return remote;
    }

    private static void write(OutputStream out, List<Destination> destinations) throws IOException {
        for (Destination d : destinations) {
            out.write(Arrays.copyOf(d.toWire().getBytes(StandardCharsets.US_ASCII), MESSAGE_SIZE));
        }
        out.flush();
    }

    private static List<Destination> read(InputStream in, int count) throws IOException {
        List<Destination> destinations = new ArrayList<>();
        DataInputStream data = new DataInputStream(in);
        for (int i = 0; i < count; i++) {
            byte[] message = new byte[MESSAGE_SIZE];
            data.readFully(message);
            int end = 0;
            while (end < message.length && message[end] != 0) {
                end++;
            }
            destinations.add(Destination.fromWire(new String(message, 0, end, StandardCharsets.US_ASCII)));
        }
        return destinations;
    }

    /** {@code inet_ntop(AF_INET6, gid)} as glibc writes it: IPv4-mapped as {@code ::ffff:a.b.c.d}, zeros compressed. */
    static String ntop(byte[] gid) {
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = (gid[2 * i] & 0xff) << 8 | gid[2 * i + 1] & 0xff;
        }
        boolean fiveZeros = groups[0] == 0 && groups[1] == 0 && groups[2] == 0 && groups[3] == 0 && groups[4] == 0;
        if (fiveZeros && (groups[5] == 0xffff || groups[5] == 0 && groups[6] != 0)) {
            // IPv4-mapped (RoCE v2 over IPv4) or IPv4-compatible: glibc writes the last 32 bits as a dotted quad.
            return String.format("::%s%d.%d.%d.%d", groups[5] == 0 ? "" : "ffff:", gid[12] & 0xff, gid[13] & 0xff,
                    gid[14] & 0xff, gid[15] & 0xff);
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is not compressed
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                s.append("::");
                i += bestLength - 1;
                continue;
            }
            if (!s.isEmpty() && s.charAt(s.length() - 1) != ':') {
                s.append(':');
            }
            s.append(Integer.toHexString(groups[i]));
        }
        return s.toString();
    }
}
