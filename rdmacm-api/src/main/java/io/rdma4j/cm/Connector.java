package io.rdma4j.cm;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * The active side of a reliable connection, in one blocking call: resolve the address and the route, create a
 * protection domain, completion queue and queue pair on the device the address resolved to, connect with the
 * options' private data, and return the established {@link Connection}. Works on InfiniBand, RoCE and iWARP alike
 * (librdmacm moves the queue pair through its states). Usable from virtual threads: every wait is a bounded
 * {@code poll(2)}. On siw (Linux 6.1) a lone small message sent at once after connecting can stay unread at the
 * passive side, which may not yet have handed its socket to the queue pair, until more data arrives; a zero-length
 * RDMA WRITE sent when no answer comes is such data ({@link Connection#nudgePeer}; README, "What the providers
 * lack").
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
     *                request and answer; its clock starts once librdmacm is loaded. A step that finds it used up
     *                fails naming itself and this timeout
     * @throws ConnectionException  if a step ends in a failure event (ADDRESS_ERROR, ROUTE_ERROR, REJECTED with the
     *                              peer's reason and private data, UNREACHABLE, CONNECT_ERROR), its librdmacm call
     *                              fails at once, or it times out
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws io.rdma4j.verbs.VerbException if a verb fails (e.g. the queue pair's sizes exceed the device's)
     */
    public static Connection connect(InetSocketAddress remote, ConnectionOptions options, Duration timeout)
            throws InterruptedException {
        Objects.requireNonNull(remote, "remote");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(timeout, "timeout");
        try (Connection.Builder parts = new Connection.Builder(options, EventChannel.create(), timeout,
                "connect timeout")) {
            CmId id = parts.channel.createId(PortSpace.TCP);
            parts.id = id;
            String resolveAddress = "resolve address " + remote;
            Connection.Builder.Wait address = parts.budget(resolveAddress, CmEventType.ADDRESS_RESOLVED,
                    options.resolveTimeout(), "resolve timeout");
            parts.step(resolveAddress, () -> id.resolveAddress(options.source(), remote, address.atLeastAMillisecond()));
            parts.await(CmEventType.ADDRESS_RESOLVED, resolveAddress, address);
            String resolveRoute = "resolve route to " + remote;
            Connection.Builder.Wait route = parts.budget(resolveRoute, CmEventType.ROUTE_RESOLVED,
                    options.resolveTimeout(), "resolve timeout");
            parts.step(resolveRoute, () -> id.resolveRoute(route.atLeastAMillisecond()));
            parts.await(CmEventType.ROUTE_RESOLVED, resolveRoute, route);
            String connect = "connect to " + remote;
            parts.createQueuePair(connect);
            Connection.Builder.Wait established = parts.budget(connect, CmEventType.ESTABLISHED, null, null);
            parts.step(connect, () -> id.connect(options.parameters()));
            return parts.build(parts.await(CmEventType.ESTABLISHED, connect, established));
        }
    }
}
