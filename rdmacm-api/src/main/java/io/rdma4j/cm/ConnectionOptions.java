package io.rdma4j.cm;

import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.internal.FieldRange;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * How {@link Connector} and {@link Acceptor} set up a connection: queue sizes, private data, RDMA READ depth,
 * retries, timeouts of the resolution steps, and whether connections share a protection domain or completion
 * queue. Immutable and thread-safe; build one with {@link #builder()}.
 *
 * @param capabilities        the queue pair's sizes (default 16/16 requests, 1/1 SGE, no inline data)
 * @param completionQueueSize the completion queue's entries when the connection makes its own (default: both
 *                            queues' depths)
 * @param privateData         sent with the connect request or the accept (limits: {@link CmId#connect},
 *                            {@link CmId#accept})
 * @param readDepth           RDMA READs/atomics in flight each way (responder resources and initiator depth)
 * @param retryCount          transport retries, 0..7 (default 6: see {@link ConnectionParameters#defaults()})
 * @param rnrRetryCount       receiver-not-ready retries, 0..7 (default 7: forever)
 * @param ackTimeout          the queue pair's local ACK timeout code, 0..31: 4.096 µs × 2^code (default 17, about
 *                            0.54 s: with 6 retries a vanished peer is reported within about 4 s, while a peer
 *                            stalled for a moment is not; {@link CmId#setAckTimeout}). InfiniBand/RoCE only
 * @param protectionDomain    a protection domain on the id's context to share, or {@code null} for one per
 *                            connection
 * @param completionQueue     a completion queue on the id's context to share, or {@code null} for one per
 *                            connection
 * @param source              the local address to connect from, or {@code null} for any
 * @param resolveTimeout      for address and route resolution each (default 2 s)
 * @param establishTimeout    how long {@link Acceptor#accept} waits, after accepting a request, for the connection
 *                            to be established: the client's RTU on InfiniBand/RoCE, MPA's exchange on iWARP
 *                            (default 10 s)
 * @param disconnectTimeout   how long {@link Connection#close()} waits for the peer's DISCONNECTED (default 1 s)
 * @param completionEvents    whether the connection's own completion queue gets a completion channel, so that
 *                            {@link Connection#awaitCompletions} waits without spinning (default false: poll)
 * @param onQueuePair         called with the new queue pair before the connect request or the accept is sent:
 *                            post the first receives here. iWARP ends a connection whose peer sends before a
 *                            receive is posted (InfiniBand/RoCE retry), so a peer that sends at once needs this
 */
public record ConnectionOptions(QueuePairCapabilities capabilities, int completionQueueSize, byte[] privateData,
                                int readDepth, int retryCount, int rnrRetryCount, int ackTimeout,
                                ProtectionDomain protectionDomain,
                                CompletionQueue completionQueue, InetSocketAddress source, Duration resolveTimeout,
                                Duration establishTimeout, Duration disconnectTimeout, boolean completionEvents,
                                Consumer<QueuePair> onQueuePair) {

    /** Checks the values. */
    public ConnectionOptions {
        Objects.requireNonNull(capabilities, "capabilities");
        Objects.requireNonNull(resolveTimeout, "resolveTimeout");
        Objects.requireNonNull(establishTimeout, "establishTimeout");
        Objects.requireNonNull(disconnectTimeout, "disconnectTimeout");
        Objects.requireNonNull(onQueuePair, "onQueuePair");
        if (completionEvents && completionQueue != null) {
            throw new IllegalArgumentException("completionEvents is for the connection's own completion queue; the"
                    + " shared one given has its own channel or none");
        }
        if (completionQueueSize < 1) {
            throw new IllegalArgumentException("completionQueueSize must be at least 1, not " + completionQueueSize);
        }
        // The connection parameters check the rest, with their field names.
        FieldRange.check("ackTimeout", ackTimeout, 0, 31);
        privateData = privateData.clone();
        parameters(privateData, readDepth, retryCount, rnrRetryCount);
    }

    /** The defaults. */
    public static ConnectionOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A copy of the private data. */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** What connect or accept announces. */
    ConnectionParameters parameters() {
        return parameters(privateData, readDepth, retryCount, rnrRetryCount);
    }

    /** The parameters of these values (the compact constructor checks with it before the fields exist). */
    private static ConnectionParameters parameters(byte[] privateData, int readDepth, int retryCount,
                                                   int rnrRetryCount) {
        return ConnectionParameters.defaults().withPrivateData(privateData).withReadDepth(readDepth, readDepth)
                .withRetries(retryCount, rnrRetryCount);
    }

    /** Builds {@link ConnectionOptions}. Not thread-safe. */
    public static final class Builder {
        private QueuePairCapabilities capabilities = new QueuePairCapabilities(16, 16, 1, 1, 0);
        private int completionQueueSize;
        private byte[] privateData = new byte[0];
        private int readDepth = 1;
        private int retryCount = 6;
        private int rnrRetryCount = 7;
        private int ackTimeout = 17;
        private ProtectionDomain protectionDomain;
        private CompletionQueue completionQueue;
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

        /** Shares {@code pd} (on the ids' context) between connections. */
        public Builder protectionDomain(ProtectionDomain pd) {
            protectionDomain = pd;
            return this;
        }

        /** Shares {@code cq} (on the ids' context) between connections, for both queues. */
        public Builder completionQueue(CompletionQueue cq) {
            completionQueue = cq;
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

        /** The options. */
        public ConnectionOptions build() {
            int cq = completionQueueSize > 0 ? completionQueueSize
                    : capabilities.maxSendWorkRequests() + capabilities.maxReceiveWorkRequests();
            return new ConnectionOptions(capabilities, cq, privateData, readDepth, retryCount, rnrRetryCount,
                    ackTimeout, protectionDomain, completionQueue, source, resolveTimeout, establishTimeout, disconnectTimeout,
                    completionEvents, onQueuePair);
        }
    }
}
