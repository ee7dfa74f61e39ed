package io.rdma4j.examples;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.AddressVector;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.GidEntry;
import io.rdma4j.verbs.LinkLayer;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.Mtu;
import io.rdma4j.verbs.PortAttributes;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Set;

/**
 * An RC ping-pong that speaks {@code ibv_rc_pingpong}'s protocol, so either end can be the C tool: the two sides
 * swap "LID:QPN:PSN:GID" over TCP, connect their QPs by hand, then bounce {@code size}-byte SENDs
 * {@code iters} times.
 *
 * <pre>
 * PingPong [-d DEVICE] [-i PORT] [-g GID_INDEX] [-s SIZE] [-n ITERS] [-r RX_DEPTH] [-p TCP_PORT] [SERVER]
 * </pre>
 */
public final class PingPong {

    /** How long the ping-pong waits without any completion before it gives up on the peer. */
    private static final long STALL_NANOS = 10_000_000_000L;

    /** {@code sizeof "0000:000000:000000:00000000000000000000000000000000"}: the C tool reads exactly this. */
    private static final int MESSAGE_SIZE = 52;
    private static final long RECEIVE_ID = 1;
    private static final long SEND_ID = 2;

    private final Options options;

    PingPong(Options options) {
        this.options = options;
    }

    /** The command-line options, with {@code ibv_rc_pingpong}'s defaults. */
    record Options(String device, int port, int gidIndex, int size, int iters, int rxDepth, int tcpPort,
                   String server) {

        static Options parse(String... args) {
            String device = null;
            String server = null;
            int port = 1;
            int gidIndex = -1;
            int size = 4096;
            int iters = 1000;
            int rxDepth = 500;
            int tcpPort = 18515;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "-d" -> device = args[++i];
                    case "-i" -> port = Integer.parseInt(args[++i]);
                    case "-g" -> gidIndex = Integer.parseInt(args[++i]);
                    case "-s" -> size = Integer.parseInt(args[++i]);
                    case "-n" -> iters = Integer.parseInt(args[++i]);
                    case "-r" -> rxDepth = Integer.parseInt(args[++i]);
                    case "-p" -> tcpPort = Integer.parseInt(args[++i]);
                    default -> server = args[i];
                }
            }
            return new Options(device, port, gidIndex, size, iters, rxDepth, tcpPort, server);
        }
    }

    /** The connection data the two sides swap. */
    record Destination(int lid, int qpn, int psn, byte[] gid) {

        String toWire() {
            return String.format("%04x:%06x:%06x:%s", lid, qpn, psn, HexFormat.of().formatHex(gid));
        }

        static Destination fromWire(String wire) {
            String[] f = wire.trim().split(":");
            return new Destination(Integer.parseInt(f[0], 16), Integer.parseInt(f[1], 16), Integer.parseInt(f[2], 16),
                    HexFormat.of().parseHex(f[3]));
        }

        /** Whether the GID's interface id is set, i.e. whether the C tool addresses by GID. */
        boolean global() {
            for (int i = 8; i < 16; i++) {
                if (gid[i] != 0) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Runs one side; prints the C tool's summary lines. */
    public static void main(String[] args) throws IOException {
        new PingPong(Options.parse(args)).run(System.out);
    }

    /** Runs one side to completion; returns the microseconds per iteration. */
    double run(java.io.PrintStream out) throws IOException {
        Device device = options.device() == null ? Device.list().getFirst()
                : Device.byName(options.device()).orElseThrow(() -> new IllegalArgumentException(
                        "no RDMA device " + options.device() + " among " + Device.list()));
        try (Context context = device.open();
             CompletionQueue cq = context.createCompletionQueue(options.rxDepth() + 1);
             ProtectionDomain pd = context.allocateProtectionDomain();
             MemoryRegion buffer = pd.allocateMemory(options.size(), Set.of(Access.LOCAL_WRITE));
             SendWorkRequests send = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receive = new ReceiveWorkRequests(1, 1);
             WorkCompletions completions = new WorkCompletions(2)) {
            buffer.segment().fill((byte) 0x7b);
            QueuePair qp = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(cq)
                    .capabilities(new QueuePairCapabilities(1, options.rxDepth(), 1, 1, 0)).create();
            qp.initialize(options.port(), Set.of());
            receive.clear().add(RECEIVE_ID).scatter(buffer, 0, options.size());
            for (int i = 0; i < options.rxDepth(); i++) {
                qp.postReceive(receive);
            }
            PortAttributes port = context.queryPort(options.port());
            if (port.linkLayer() != LinkLayer.ETHERNET && port.lid() == 0) {
                throw new IllegalStateException("the port has no LID");
            }
            byte[] gid = new byte[16];
            if (options.gidIndex() >= 0) {
                gid = context.gidTable().stream()
                        .filter(g -> g.port() == options.port() && g.index() == options.gidIndex())
                        .map(GidEntry::gid).findFirst()
                        .orElseThrow(() -> new IllegalArgumentException("no GID index " + options.gidIndex()));
            }
            Destination mine = new Destination(port.lid(), qp.number(), new SecureRandom().nextInt(1 << 24), gid);
            out.println("  local address:  " + mine.toWire());
            Destination remote = options.server() == null ? serve(qp, mine) : connect(qp, mine);
            out.println("  remote address: " + remote.toWire());
            send.clear().send(SEND_ID).gather(buffer, 0, options.size()).signaled();
            return bounce(qp, cq, send, receive, completions, options.server() != null, out);
        }
    }

    private Destination connect(QueuePair qp, Destination mine) throws IOException {
        try (Socket socket = new Socket(options.server(), options.tcpPort())) {
            write(socket.getOutputStream(), mine);
            Destination remote = read(socket.getInputStream());
            readyToSend(qp, mine, remote);
            socket.getOutputStream().write("done\0".getBytes(StandardCharsets.US_ASCII));
            return remote;
        }
    }

    private Destination serve(QueuePair qp, Destination mine) throws IOException {
        try (ServerSocket listener = new ServerSocket(options.tcpPort()); Socket socket = listener.accept()) {
            Destination remote = read(socket.getInputStream());
            readyToSend(qp, mine, remote);
            write(socket.getOutputStream(), mine);
            socket.getInputStream().read(new byte[MESSAGE_SIZE]);
            return remote;
        }
    }

    private void readyToSend(QueuePair qp, Destination mine, Destination remote) {
        AddressVector address = remote.global()
                ? new AddressVector(true, remote.gid(), options.gidIndex(), 1, 0, 0, remote.lid(), 0, 0, 0, options.port())
                : AddressVector.ofLid(remote.lid(), options.port());
        qp.readyToReceive(address, remote.qpn(), remote.psn(), Mtu.MTU_1024);
        qp.readyToSend(mine.psn());
    }

    /** The loop of {@code ibv_rc_pingpong}: the next SEND goes once the last one and a receive have completed. */
    private double bounce(QueuePair qp, CompletionQueue cq, SendWorkRequests send, ReceiveWorkRequests receive,
                          WorkCompletions completions, boolean client, java.io.PrintStream out) {
        int iters = options.iters();
        int receivesPosted = options.rxDepth();
        long pending = RECEIVE_ID;
        if (client) {
            qp.postSend(send);
            pending |= SEND_ID;
        }
        long start = System.nanoTime();
        long progress = start;
        boolean progressed = false;
        int idle = 0;
        int sent = 0;
        int received = 0;
        while (sent < iters || received < iters) {
            int n = cq.poll(completions);
            if (n > 0) {
                progressed = true;
            } else if (++idle == 1 << 16) {
                // The one departure from ibv_rc_pingpong, which waits forever: a peer that died while only a
                // receive was outstanding would never produce a completion here (a pending SEND would end in
                // RETRY_EXCEEDED). The clock is read only here: it costs microseconds under emulation.
                idle = 0;
                long now = System.nanoTime();
                if (progressed) {
                    progress = now;
                    progressed = false;
                } else if (now - progress > STALL_NANOS) {
                    throw new IllegalStateException("no completion for " + STALL_NANOS / 1_000_000_000
                            + " s after " + received + " receives: is the peer gone?");
                }
            }
            for (int i = 0; i < n; i++) {
                if (!completions.isSuccess(i)) {
                    throw new IllegalStateException("Failed status " + completions.statusText(i) + " for wr_id "
                            + completions.workRequestId(i));
                }
                long id = completions.workRequestId(i);
                if (id == SEND_ID) {
                    sent++;
                } else {
                    if (--receivesPosted <= 1) {
                        for (; receivesPosted < options.rxDepth(); receivesPosted++) {
                            qp.postReceive(receive);
                        }
                    }
                    received++;
                }
                pending &= ~id;
                if (sent < iters && pending == 0) {
                    qp.postSend(send);
                    pending = RECEIVE_ID | SEND_ID;
                }
            }
        }
        double micros = (System.nanoTime() - start) / 1_000.0;
        long bytes = (long) options.size() * iters * 2;
        out.printf("%d bytes in %.2f seconds = %.2f Mbit/sec%n", bytes, micros / 1e6, bytes * 8 / micros);
        out.printf("%d iters in %.2f seconds = %.2f usec/iter%n", iters, micros / 1e6, micros / iters);
        return micros / iters;
    }

    private static void write(OutputStream out, Destination destination) throws IOException {
        byte[] message = Arrays.copyOf(destination.toWire().getBytes(StandardCharsets.US_ASCII), MESSAGE_SIZE);
        out.write(message);
        out.flush();
    }

    private static Destination read(InputStream in) throws IOException {
        byte[] message = new byte[MESSAGE_SIZE];
        new DataInputStream(in).readFully(message);
        int end = 0;
        while (end < message.length && message[end] != 0) {
            end++;
        }
        return Destination.fromWire(new String(message, 0, end, StandardCharsets.US_ASCII));
    }
}
