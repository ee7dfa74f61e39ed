package io.rdma4j.cm;

import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.internal.FieldRange;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * How {@link Connector} and {@link Acceptor} set up a connection: queue sizes, private data, RDMA READ depth,
 * retries, timeouts of the resolution steps, and whether connections share a protection domain or completion
 * queue. Build one with {@link #builder()} (every option has a default), or change one with {@link #toBuilder()}.
 * Each value is checked when built, in a message that names the option. Immutable and thread-safe.
 */
public final class ConnectionOptions {

    private final QueuePairCapabilities capabilities;
    private final int completionQueueSize;
    private final byte[] privateData;
    private final int readDepth;
    private final int retryCount;
    private final int rnrRetryCount;
    private final int ackTimeout;
    private final Function<Context, ProtectionDomain> protectionDomain;
    private final Function<Context, CompletionQueue> completionQueue;
    private final InetSocketAddress source;
    private final Duration resolveTimeout;
    private final Duration establishTimeout;
    private final Duration disconnectTimeout;
    private final boolean completionEvents;
    private final Consumer<QueuePair> onQueuePair;

    /** Checks the builder's values, each named as the builder's method is. */
    private ConnectionOptions(Builder b) {
        this.capabilities = Objects.requireNonNull(b.capabilities, "capabilities");
        this.completionQueueSize = b.completionQueueSize > 0 ? b.completionQueueSize
                : b.capabilities.maxSendWorkRequests() + b.capabilities.maxReceiveWorkRequests();
        if (b.completionQueueSize < 0 || completionQueueSize < 1) {
            throw new IllegalArgumentException("completionQueueSize must be at least 1, not " + b.completionQueueSize);
        }
        this.privateData = b.privateData.clone();
        this.readDepth = FieldRange.unsigned8("readDepth", b.readDepth);
        this.retryCount = FieldRange.check("retryCount", b.retryCount, 0, 7);
        this.rnrRetryCount = FieldRange.check("rnrRetryCount", b.rnrRetryCount, 0, 7);
        this.ackTimeout = FieldRange.check("ackTimeout", b.ackTimeout, 0, 31);
        this.protectionDomain = b.protectionDomain;
        this.completionQueue = b.completionQueue;
        this.source = b.source;
        this.resolveTimeout = Objects.requireNonNull(b.resolveTimeout, "resolveTimeout");
        this.establishTimeout = Objects.requireNonNull(b.establishTimeout, "establishTimeout");
        this.disconnectTimeout = Objects.requireNonNull(b.disconnectTimeout, "disconnectTimeout");
        this.completionEvents = b.completionEvents;
        this.onQueuePair = Objects.requireNonNull(b.onQueuePair, "onQueuePair");
        if (completionEvents && completionQueue != null) {
            throw new IllegalArgumentException("completionEvents is for the connection's own completion queue; the"
                    + " shared one given has its own channel or none");
        }
        parameters(); // the private data's limit, with its name
    }

    /** The defaults. */
    public static ConnectionOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder with these options, to change some of them. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.capabilities = capabilities;
        b.completionQueueSize = completionQueueSize;
        b.privateData = privateData;
        b.readDepth = readDepth;
        b.retryCount = retryCount;
        b.rnrRetryCount = rnrRetryCount;
        b.ackTimeout = ackTimeout;
        b.protectionDomain = protectionDomain;
        b.completionQueue = completionQueue;
        b.source = source;
        b.resolveTimeout = resolveTimeout;
        b.establishTimeout = establishTimeout;
        b.disconnectTimeout = disconnectTimeout;
        b.completionEvents = completionEvents;
        b.onQueuePair = onQueuePair;
        return b;
    }

    /** The queue pair's sizes (default 16/16 requests, 1/1 SGE, no inline data). */
    public QueuePairCapabilities capabilities() {
        return capabilities;
    }

    /** The completion queue's entries when the connection makes its own (default: both queues' depths). */
    public int completionQueueSize() {
        return completionQueueSize;
    }

    /**
     * A copy of the private data: sent with the connect request or the accept (limits: {@link CmId#connect},
     * {@link CmId#accept}).
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** RDMA READs/atomics in flight each way (responder resources and initiator depth). */
    public int readDepth() {
        return readDepth;
    }

    /** Transport retries, 0..7 (default 6: see {@link ConnectionParameters#defaults()}). */
    public int retryCount() {
        return retryCount;
    }

    /** Receiver-not-ready retries, 0..7 (default 7: forever). */
    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /**
     * The queue pair's local ACK timeout code, 0..31: 4.096 µs × 2^code (default 17, about 0.54 s: with 6 retries
     * a vanished peer is reported within about 4 s, while a peer stalled for a moment is not; {@link
     * CmId#setAckTimeout}). InfiniBand/RoCE only.
     */
    public int ackTimeout() {
        return ackTimeout;
    }

    /**
     * The protection domain to share on {@code context} (the device the connection's id resolved to), or
     * {@code null} for one of the connection's own.
     *
     * @throws IllegalArgumentException if the one given is on another device's context
     */
    public ProtectionDomain protectionDomain(Context context) {
        return protectionDomain == null ? null
                : onContext("protectionDomain", protectionDomain.apply(context), ProtectionDomain::context, context);
    }

    /**
     * The completion queue to share on {@code context}, or {@code null} for one of the connection's own.
     *
     * @throws IllegalArgumentException if the one given is on another device's context
     */
    public CompletionQueue completionQueue(Context context) {
        return completionQueue == null ? null
                : onContext("completionQueue", completionQueue.apply(context), CompletionQueue::context, context);
    }

    private static <T> T onContext(String option, T object, Function<T, Context> contextOf, Context context) {
        if (object == null) {
            throw new IllegalArgumentException(option + " gave no object for " + context);
        }
        if (contextOf.apply(object) != context) {
            throw new IllegalArgumentException(option + " gave " + object + " on " + contextOf.apply(object)
                    + ", but the connection's id is on " + context + ": share objects per device (the function form)");
        }
        return object;
    }

    /** The local address to connect from, or {@code null} for any. */
    public InetSocketAddress source() {
        return source;
    }

    /** How long address resolution and route resolution may take, each (default 2 s). */
    public Duration resolveTimeout() {
        return resolveTimeout;
    }

    /**
     * How long {@link Acceptor#accept} waits, after accepting a request, for the connection to be established: the
     * client's RTU on InfiniBand/RoCE, MPA's exchange on iWARP (default 10 s).
     */
    public Duration establishTimeout() {
        return establishTimeout;
    }

    /** How long {@link Connection#close()} waits for the peer's DISCONNECTED (default 1 s). */
    public Duration disconnectTimeout() {
        return disconnectTimeout;
    }

    /**
     * Whether the connection's own completion queue gets a completion channel, so that {@link
     * Connection#awaitCompletions} waits without spinning (default false: poll).
     */
    public boolean completionEvents() {
        return completionEvents;
    }

    /**
     * Called with the new queue pair before the connect request or the accept is sent: post the first receives
     * here. iWARP ends a connection whose peer sends before a receive is posted (InfiniBand/RoCE retry), so a peer
     * that sends at once needs this.
     */
    public Consumer<QueuePair> onQueuePair() {
        return onQueuePair;
    }

    /** What connect or accept announces. */
    ConnectionParameters parameters() {
        return ConnectionParameters.defaults().withPrivateData(privateData).withReadDepth(readDepth, readDepth)
                .withRetries(retryCount, rnrRetryCount);
    }

    /** Builds {@link ConnectionOptions}. Not thread-safe. */
    public static final class Builder {
        private QueuePairCapabilities capabilities = QueuePairCapabilities.defaults();
        private int completionQueueSize;
        private byte[] privateData = new byte[0];
        private int readDepth = 1;
        private int retryCount = 6;
        private int rnrRetryCount = 7;
        private int ackTimeout = 17;
        private Function<Context, ProtectionDomain> protectionDomain;
        private Function<Context, CompletionQueue> completionQueue;
        private InetSocketAddress source;
        private Duration resolveTimeout = Duration.ofSeconds(2);
        private Duration establishTimeout = Duration.ofSeconds(10);
        private Duration disconnectTimeout = Duration.ofSeconds(1);
        private boolean completionEvents;
        private Consumer<QueuePair> onQueuePair = qp -> { };

        private Builder() {
        }

        /** The queue pair's sizes. */
        public Builder capabilities(QueuePairCapabilities value) {
            capabilities = value;
            return this;
        }

        /** The entries of the connection's own completion queue. */
        public Builder completionQueueSize(int value) {
            completionQueueSize = value;
            return this;
        }

        /** The private data for the peer. */
        public Builder privateData(byte[] value) {
            privateData = value.clone();
            return this;
        }

        /** The bytes of {@code value} as private data. */
        public Builder privateData(MemorySegment value) {
            return privateData(ConnectionParameters.bytesOf(value));
        }

        /** RDMA READs/atomics in flight each way. */
        public Builder readDepth(int value) {
            readDepth = value;
            return this;
        }

        /** Transport and RNR retries. */
        public Builder retries(int retry, int rnrRetry) {
            retryCount = retry;
            rnrRetryCount = rnrRetry;
            return this;
        }

        /** The local ACK timeout code, 0..31 (4.096 µs × 2^code). */
        public Builder ackTimeout(int code) {
            ackTimeout = code;
            return this;
        }

        /** Shares {@code pd} (on the ids' context) between connections; {@code null} for one per connection. */
        public Builder protectionDomain(ProtectionDomain pd) {
            protectionDomain = pd == null ? null : context -> pd;
            return this;
        }

        /**
         * Shares a protection domain per device: {@code perDevice} is called with the context the connection's id
         * resolved to (when a client connects, the device is known only after address resolution) and returns one
         * on it.
         */
        public Builder protectionDomain(Function<Context, ProtectionDomain> perDevice) {
            protectionDomain = perDevice;
            return this;
        }

        /** Shares {@code cq} (on the ids' context) between connections, for both queues; {@code null} for one each. */
        public Builder completionQueue(CompletionQueue cq) {
            completionQueue = cq == null ? null : context -> cq;
            return this;
        }

        /** Shares a completion queue per device, as {@link #protectionDomain(Function)} does a protection domain. */
        public Builder completionQueue(Function<Context, CompletionQueue> perDevice) {
            completionQueue = perDevice;
            return this;
        }

        /** The local address to connect from. */
        public Builder source(InetSocketAddress value) {
            source = value;
            return this;
        }

        /** The timeout of address resolution and of route resolution, each. */
        public Builder resolveTimeout(Duration value) {
            resolveTimeout = value;
            return this;
        }

        /** How long the acceptor waits for an accepted connection to be established. */
        public Builder establishTimeout(Duration value) {
            establishTimeout = value;
            return this;
        }

        /** How long closing waits for the peer's DISCONNECTED. */
        public Builder disconnectTimeout(Duration value) {
            disconnectTimeout = value;
            return this;
        }

        /** Gives the connection's own completion queue a completion channel ({@link Connection#awaitCompletions}). */
        public Builder completionEvents(boolean value) {
            completionEvents = value;
            return this;
        }

        /** What to do with the new queue pair before connecting or accepting (post the first receives). */
        public Builder onQueuePair(Consumer<QueuePair> action) {
            onQueuePair = action;
            return this;
        }

        /**
         * The options.
         *
         * @throws IllegalArgumentException naming the option whose value is out of its range
         */
        public ConnectionOptions build() {
            return new ConnectionOptions(this);
        }
    }
}
