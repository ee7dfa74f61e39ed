package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * Two connected queue pairs of one type on the test device, in one process: a {@link #client} and a
 * {@link #server}, each with its own CQ, in one protection domain. On RoCE they are connected by hand
 * (addressed by the RoCE v2 GID of the test address, through rxe's loopback); on iWARP through rdma_cm
 * ({@link IwarpConnector}).
 */
final class ConnectedPair implements AutoCloseable {

    static final Set<Access> REMOTE_ACCESS =
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);

    final Context context;
    final ProtectionDomain pd;
    final CompletionQueue clientCq;
    final CompletionQueue serverCq;
    final QueuePair client;
    final QueuePair server;
    /** The server's shared receive queue, or {@code null}. */
    final SharedReceiveQueue srq;
    private final IwarpConnector connector;

    private ConnectedPair(Context context, QueuePairType type, UnaryOperator<QueuePair.Builder> clientSetup,
                          UnaryOperator<QueuePair.Builder> serverSetup, CompletionChannel channel,
                          UnaryOperator<QueuePairAttributes> clientReadyToSend, boolean sharedReceiveQueue) {
        this.context = context;
        this.pd = context.allocateProtectionDomain();
        this.srq = sharedReceiveQueue ? pd.createSharedReceiveQueue(16, 1) : null;
        this.clientCq = context.createCompletionQueue(64, channel, 0);
        this.serverCq = context.createCompletionQueue(64, channel, 0);
        QueuePairCapabilities caps = QueuePairCapabilities.defaults().withSendQueue(32).withReceiveQueue(32)
                .withSendScatterGather(2).withReceiveScatterGather(2).withInlineData(64);
        this.client = clientSetup.apply(pd.queuePair(type).completionQueue(clientCq).capabilities(caps)).create();
        QueuePair.Builder serverBuilder = pd.queuePair(type).completionQueue(serverCq).capabilities(caps);
        if (srq != null) {
            serverBuilder.sharedReceiveQueue(srq);
        }
        this.server = serverSetup.apply(serverBuilder).create();
        this.connector = connect(context, client, server, clientReadyToSend);
        if (connector == null) {
            // siw does not report QP states (siw_query_qp leaves qp_state 0), so only RoCE can check them.
            assertEquals(QueuePairState.READY_TO_SEND, client.state());
            assertEquals(QueuePairState.READY_TO_SEND, server.state());
        }
    }

    /**
     * Connects two RESET queue pairs of {@code context}: by hand on RoCE (the client moving to RTS with
     * {@code clientReadyToSend} applied), through rdma_cm on iWARP.
     *
     * @return the rdma_cm connection to close when done (iWARP), or {@code null}
     */
    static IwarpConnector connect(Context context, QueuePair client, QueuePair server,
                                  UnaryOperator<QueuePairAttributes> clientReadyToSend) {
        client.initialize(1, REMOTE_ACCESS);
        server.initialize(1, REMOTE_ACCESS);
        if (context.device().transport() == Transport.IWARP) {
            IwarpConnector connector = new IwarpConnector();
            connector.connect(client, server, TestDevice.address());
            return connector;
        }
        AddressVector self = AddressVector.ofGid(gid(context).gid(), gid(context).index(), 1);
        Mtu mtu = context.queryPort(1).activeMtu();
        client.readyToReceive(self, server.number(), 0, mtu);
        server.readyToReceive(self, client.number(), 0, mtu);
        client.modify(clientReadyToSend.apply(client.readyToSendAttributes(0)));
        server.readyToSend(0);
        return null;
    }

    /** An RC pair with default queue pairs. */
    static ConnectedPair reliable(Context context) {
        return new ConnectedPair(context, QueuePairType.RELIABLE_CONNECTED, b -> b, b -> b, null, a -> a, false);
    }

    /** A UC pair with default queue pairs (RoCE: iWARP has only RC). */
    static ConnectedPair unreliable(Context context) {
        return new ConnectedPair(context, QueuePairType.UNRELIABLE_CONNECTED, b -> b, b -> b, null, a -> a, false);
    }

    /** An RC pair whose client moves to RTS with {@code clientReadyToSend} applied (RoCE only). */
    static ConnectedPair reliable(Context context, UnaryOperator<QueuePairAttributes> clientReadyToSend) {
        return new ConnectedPair(context, QueuePairType.RELIABLE_CONNECTED, b -> b, b -> b, null, clientReadyToSend, false);
    }

    /** An RC pair whose queue pairs are set up further by the two operators, and whose CQs use {@code channel}. */
    static ConnectedPair reliable(Context context, UnaryOperator<QueuePair.Builder> client,
                                  UnaryOperator<QueuePair.Builder> server, CompletionChannel channel) {
        return new ConnectedPair(context, QueuePairType.RELIABLE_CONNECTED, client, server, channel, a -> a, false);
    }

    /** An RC pair whose server takes its receives from a shared receive queue ({@link #srq}) in the pair's PD. */
    static ConnectedPair withSharedReceiveQueue(Context context) {
        return new ConnectedPair(context, QueuePairType.RELIABLE_CONNECTED, b -> b, b -> b, null, a -> a, true);
    }

    /** The RoCE v2 GID entry of the test address (rxe loopback goes through it). */
    static GidEntry gid(Context context) {
        InetAddress address = TestDevice.address();
        return context.gidTable().stream()
                .filter(g -> g.type() == GidType.ROCE_V2 && g.asInetAddress().equals(address))
                .findFirst()
                .orElseGet(() -> fail("no RoCE v2 GID for " + address + " in " + context.gidTable()));
    }

    /** Polls {@code cq} until {@code expected} completions arrived (or fails after 10 s). */
    static WorkCompletions await(CompletionQueue cq, WorkCompletions into, int expected) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        int n = 0;
        while (n == 0) {
            n = cq.poll(into);
            if (n == 0 && System.nanoTime() > deadline) {
                fail("no completion within 10 s");
            }
        }
        assertEquals(expected, n, "completions polled at once");
        return into;
    }

    @Override
    public void close() {
        if (connector != null) {
            connector.close();
        }
        pd.close();
        clientCq.close();
        serverCq.close();
    }
}
