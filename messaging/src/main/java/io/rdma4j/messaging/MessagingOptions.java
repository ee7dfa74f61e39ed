package io.rdma4j.messaging;

import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.verbs.internal.FieldRange;
import java.time.Duration;
import java.util.Objects;

/**
 * The sizes of a {@link MessageChannel}: its receive buffers and how many of them the peer may fill before it must
 * wait for credit, its send buffers, and the connection options underneath (retries, timeouts, private data for
 * the application). Build with {@link #builder()}; every value has a default and is checked when built, in a
 * message that names it. Immutable and thread-safe.
 */
public final class MessagingOptions {

    /** The largest receive buffer: a message's length travels in a completion's 32-bit byte count. */
    static final int MAX_RECEIVE_BUFFER = 1 << 30;
    /** The largest message: a RENDEZVOUS names its buffer in a {@link io.rdma4j.cm.RemoteBuffer}'s 32-bit length. */
    static final int MAX_MESSAGE = 1 << 30;
    private static final int DEFAULT_MAX_MESSAGE = 16 << 20;

    private final int receiveBufferSize;
    private final int receiveCredits;
    private final int controlWindow;
    private final int sendBuffers;
    private final int inlineSize;
    private final int operationsInFlight;
    private final int maxMessageSize;
    private final Duration closeTimeout;
    private final ConnectionOptions connection;

    private MessagingOptions(Builder b) {
        this.receiveBufferSize = FieldRange.check("receiveBufferSize", b.receiveBufferSize, Header.RENDEZVOUS_BYTES,
                MAX_RECEIVE_BUFFER);
        this.receiveCredits = FieldRange.check("receiveCredits", b.receiveCredits, 1, 1 << 16);
        this.controlWindow = FieldRange.check("controlWindow", b.controlWindow, 2, 1 << 10);
        this.sendBuffers = FieldRange.check("sendBuffers", b.sendBuffers, 1, 1 << 16);
        this.inlineSize = FieldRange.check("inlineSize", b.inlineSize, 0, 1 << 10);
        this.operationsInFlight = FieldRange.check("operationsInFlight", b.operationsInFlight, 1, 1 << 12);
        this.maxMessageSize = b.maxMessageSize == DEFAULT_MAX_MESSAGE
                ? Math.max(DEFAULT_MAX_MESSAGE, receiveBufferSize - Header.BYTES)
                : FieldRange.check("maxMessageSize", b.maxMessageSize, receiveBufferSize - Header.BYTES, MAX_MESSAGE);
        this.closeTimeout = Objects.requireNonNull(b.closeTimeout, "closeTimeout");
        if (closeTimeout.isNegative()) {
            throw new IllegalArgumentException("closeTimeout is negative: " + closeTimeout);
        }
        this.connection = Objects.requireNonNull(b.connection, "connection");
    }

    /**
     * The defaults: 4 KiB receive buffers, 32 credits, 32 send buffers, 64 bytes inline, 16 operations in flight,
     * messages up to 16 MiB (or a receive buffer less its header, if that is more), 5 s for a close to deliver.
     */
    public static MessagingOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** The size of each receive buffer, header included: the largest message is this less 16 bytes. */
    public int receiveBufferSize() {
        return receiveBufferSize;
    }

    /** How many messages the peer may send before this side's application releases one (the data receives). */
    public int receiveCredits() {
        return receiveCredits;
    }

    /** How many credit messages may be in flight to the peer unacknowledged (receives reserved for them). */
    public int controlWindow() {
        return controlWindow;
    }

    /** Registered send buffers: copied messages in flight at once. */
    public int sendBuffers() {
        return sendBuffers;
    }

    /** Messages up to this many bytes (header included) are sent inline, where the device allows. */
    public int inlineSize() {
        return inlineSize;
    }

    /** One-sided operations (READ, WRITE, atomics) in flight at once; more wait for one to complete. */
    public int operationsInFlight() {
        return operationsInFlight;
    }

    /**
     * The largest message this side receives (and announces to the peer). Those beyond a receive buffer travel by
     * rendezvous: the peer's copy is READ into a registered buffer of this side.
     */
    public int maxMessageSize() {
        return maxMessageSize;
    }

    /**
     * How long {@link MessageChannel#close()} waits for what was sent to reach the peer (each SEND acknowledged by
     * the peer's device, each large message READ by the peer) before it disconnects.
     */
    public Duration closeTimeout() {
        return closeTimeout;
    }

    /** The connection's options underneath (the layer sets the queue pair, queues and its own private data). */
    public ConnectionOptions connection() {
        return connection;
    }

    /** Builds {@link MessagingOptions}. Not thread-safe. */
    public static final class Builder {
        private int receiveBufferSize = 4096;
        private int receiveCredits = 32;
        private int controlWindow = 4;
        private int sendBuffers = 32;
        private int inlineSize = 64;
        private int operationsInFlight = 16;
        private int maxMessageSize = DEFAULT_MAX_MESSAGE;
        private Duration closeTimeout = Duration.ofSeconds(5);
        private ConnectionOptions connection = ConnectionOptions.defaults();

        private Builder() {
        }

        /** The size of each receive buffer, header (16 bytes) included; at least 32 (a rendezvous's header). */
        public Builder receiveBufferSize(int bytes) {
            receiveBufferSize = bytes;
            return this;
        }

        /** The data receives posted for the peer: its credits. */
        public Builder receiveCredits(int count) {
            receiveCredits = count;
            return this;
        }

        /** The receives reserved for the peer's credit messages, at least 2. */
        public Builder controlWindow(int count) {
            controlWindow = count;
            return this;
        }

        /** The registered send buffers. */
        public Builder sendBuffers(int count) {
            sendBuffers = count;
            return this;
        }

        /** The largest message, header included, to send inline; 0 for none. */
        public Builder inlineSize(int bytes) {
            inlineSize = bytes;
            return this;
        }

        /** The one-sided operations in flight at once (the send queue keeps room for them). */
        public Builder operationsInFlight(int count) {
            operationsInFlight = count;
            return this;
        }

        /** The largest message this side receives, at least a receive buffer less its header; up to 1 GiB. */
        public Builder maxMessageSize(int bytes) {
            maxMessageSize = bytes;
            return this;
        }

        /**
         * How long a close waits for what was sent to reach the peer before it disconnects (default 5 s; zero: it
         * disconnects at once, and what is still in flight may be lost).
         */
        public Builder closeTimeout(Duration timeout) {
            closeTimeout = timeout;
            return this;
        }

        /** The connection's options: retries, timeouts, the application's private data. */
        public Builder connection(ConnectionOptions options) {
            connection = options;
            return this;
        }

        /** Checks and builds. */
        public MessagingOptions build() {
            return new MessagingOptions(this);
        }
    }
}
