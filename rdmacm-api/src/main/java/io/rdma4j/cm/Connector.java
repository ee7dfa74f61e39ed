package io.rdma4j.cm;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * The active side of a reliable connection, in one blocking call: resolve the address and the route, create a
 * protection domain, completion queue and queue pair on the device the address resolved to, connect with the
 * options' private data, and return the established {@link Connection}. Works on InfiniBand, RoCE and iWARP alike
 * (librdmacm moves the queue pair through its states). Usable from virtual threads: every wait is a bounded
 * {@code poll(2)}.
 *
 * <pre>{@code
 * try (Connection c = Connector.connect(new InetSocketAddress("192.0.2.1", 7471), ConnectionOptions.defaults(),
 *         Duration.ofSeconds(5))) {
 *     RemoteBuffer peer = RemoteBuffer.fromBytes(c.peerPrivateData());
 *     // post RDMA WRITEs to peer.address() with peer.rkey() on c.queuePair(), poll c.completionQueue()
 * }
 * }</pre>
 */
public final class Connector {

    private Connector() {
    }

    /**
     * Connects to {@code remote}.
     *
     * @param timeout the whole connect: resolution (each step also bounded by the options' resolve timeout),
     *                request and answer
     * @throws ConnectionException  if a step ends in a failure event (ADDRESS_ERROR, ROUTE_ERROR, REJECTED with the
     *                              peer's reason and private data, UNREACHABLE, CONNECT_ERROR) or times out
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws io.rdma4j.verbs.RdmaException if a verb fails (e.g. the queue pair's sizes exceed the device's)
     */
    public static Connection connect(InetSocketAddress remote, ConnectionOptions options, Duration timeout)
            throws InterruptedException {
        Objects.requireNonNull(remote, "remote");
        Objects.requireNonNull(options, "options");
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Connection.Builder parts = new Connection.Builder(options, EventChannel.create())) {
            parts.id = parts.channel.createId(PortSpace.TCP);
            Duration step = min(options.resolveTimeout(), deadline);
            parts.id.resolveAddress(options.source(), remote, step);
            parts.await(CmEventType.ADDRESS_RESOLVED, "resolve address " + remote, step);
            step = min(options.resolveTimeout(), deadline);
            parts.id.resolveRoute(step);
            parts.await(CmEventType.ROUTE_RESOLVED, "resolve route to " + remote, step);
            parts.createQueuePair();
            parts.id.connect(options.parameters());
            CmEvent established = parts.await(CmEventType.ESTABLISHED, "connect to " + remote,
                    min(timeout, deadline));
            return parts.build(established);
        }
    }

    /** {@code limit}, or what is left until {@code deadline} if that is less (at least 1 ms). */
    static Duration min(Duration limit, long deadline) {
        long left = Math.max(1_000_000, deadline - System.nanoTime());
        return left < limit.toNanos() ? Duration.ofNanos(left) : limit;
    }
}
