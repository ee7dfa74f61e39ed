package io.rdma4j.cm;

import io.rdma4j.verbs.Context;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The passive side of reliable connections: a listening id that yields established {@link Connection}s. Each
 * accepted connection gets an event channel of its own ({@code rdma_migrate_id}), so one thread accepts and one
 * (virtual) thread per connection waits for that connection's events. Its queue pair is the id's own, created on
 * the device the request arrived on and moved to RTS by librdmacm; the options' private data goes with the
 * accept. The options are given per accept, so that a server can advertise a buffer registered in a shared
 * protection domain made on {@link #context()}.
 *
 * <pre>{@code
 * try (Acceptor acceptor = Acceptor.listen(new InetSocketAddress("192.0.2.1", 7471), 16)) {
 *     ProtectionDomain pd = acceptor.context().allocateProtectionDomain();
 *     MemoryRegion buffer = pd.allocateMemory(1 << 20, EnumSet.of(LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ));
 *     ConnectionOptions options = ConnectionOptions.builder().protectionDomain(pd)
 *             .privateData(RemoteBuffer.of(buffer).toBytes()).build();
 *     while (running) {
 *         acceptor.accept(options, Duration.ofSeconds(1)).ifPresent(c -> Thread.startVirtualThread(() -> serve(c)));
 *     }
 * }
 * }</pre>
 *
 * <p>Lifetime: {@link #close()} stops listening; connections already accepted stay open. Thread-safety:
 * {@link #accept} may be called from several threads (one request goes to one of them); close from any thread.
 */
public final class Acceptor implements AutoCloseable {

    private final EventChannel channel;
    private final CmId listener;

    private Acceptor(EventChannel channel, CmId listener) {
        this.channel = channel;
        this.listener = listener;
    }

    /**
     * Binds to {@code local} (port 0 picks one) and listens ({@code rdma_bind_addr}, {@code rdma_listen}).
     *
     * @throws io.rdma4j.verbs.VerbException if binding or listening fails (EADDRINUSE, EADDRNOTAVAIL: no RDMA
     *                                        device has that address)
     */
    public static Acceptor listen(InetSocketAddress local, int backlog) {
        Objects.requireNonNull(local, "local");
        EventChannel channel = EventChannel.create();
        try {
            CmId listener = channel.createId(PortSpace.TCP);
            listener.bind(local);
            listener.listen(backlog);
            return new Acceptor(channel, listener);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** The address it listens on, with the port it was given. */
    public InetSocketAddress localAddress() {
        return new InetSocketAddress(listener.localAddress().getAddress(), listener.localPort());
    }

    /**
     * The context of the device it listens on, when bound to a device's address: create the protection domain or
     * completion queue to share between connections here
     * ({@link ConnectionOptions.Builder#protectionDomain(io.rdma4j.verbs.ProtectionDomain)}).
     *
     * @throws IllegalStateException when listening on the wildcard address
     */
    public Context context() {
        return listener.context();
    }

    /**
     * Waits up to {@code timeout} for a connect request, accepts it with {@code options} and waits (up to the
     * options' {@linkplain ConnectionOptions#establishTimeout() establish timeout}) until it is established.
     *
     * @return the connection, or empty if no request came within {@code timeout}
     * @throws ConnectionException  if the request's connection failed to establish, or its transport cannot carry
     *                              the options' private data (it is rejected and closed; keep accepting)
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws IllegalStateException if the acceptor is closed
     */
    public Optional<Connection> accept(ConnectionOptions options, Duration timeout) throws InterruptedException {
        Objects.requireNonNull(options, "options");
        long deadline = System.nanoTime() + timeout.toNanos();
        CmEvent request;
        do {
            long left = deadline - System.nanoTime();
            Optional<CmEvent> event = left <= 0 ? Optional.empty() : channel.next(Duration.ofNanos(left));
            if (event.isEmpty()) {
                return Optional.empty();
            }
            request = event.get();
            if (request.type() == CmEventType.DEVICE_REMOVAL) {
                throw ConnectionException.failed("listen on " + localAddress(), request);
            }
        } while (request.type() != CmEventType.CONNECT_REQUEST);
        return Optional.of(establish(request, options));
    }

    private Connection establish(CmEvent request, ConnectionOptions options) throws InterruptedException {
        CmId id = request.id();
        String step = "accept from " + id.peerAddress();
        try (Connection.Builder parts = new Connection.Builder(options, EventChannel.create(),
                options.establishTimeout(), "establish timeout")) {
            id.migrate(parts.channel);
            parts.id = id;
            parts.createQueuePair(step);
            Connection.Builder.Wait wait = parts.budget(step, CmEventType.ESTABLISHED, null, null);
            parts.step(step, () -> {
                try {
                    id.accept(options.parameters());
                } catch (IllegalArgumentException notForThisTransport) {
                    // The limit depends on the request's transport: this request fails, the acceptor goes on.
                    throw ConnectionException.failed(step, notForThisTransport);
                }
            });
            CmEvent established = parts.await(CmEventType.ESTABLISHED, step, wait);
            // The application reads what the peer sent with its request, not the (empty) data of ESTABLISHED.
            return parts.build(new CmEvent(established.type(), established.rawType(), established.status(), id, null,
                    request.privateData(), request.peerParameters().orElse(null), null));
        } catch (RuntimeException | InterruptedException e) {
            if (id.state() == CmIdState.CONNECT_REQUEST) {
                id.reject();
            }
            throw e;
        }
    }

    /** Stops listening (closes the listening id and its channel). Idempotent. */
    @Override
    public void close() {
        channel.close();
    }
}
