package io.rdma4j.messaging;

import io.rdma4j.verbs.Transport;

/**
 * What a {@link MessageChannel} can do, gathered from its device, port, queue pair and the peer's handshake, so that
 * an application need not look in {@code ibv_query_device}, {@code ibv_query_port} and the options itself. Immutable
 * and thread-safe.
 */
public final class ChannelCapabilities {

    private final Transport transport;
    private final boolean atomics;
    private final int maxMessageSize;
    private final int maxInlineData;
    private final long maxRemoteAccessSize;
    private final int operationsInFlight;

    ChannelCapabilities(Transport transport, boolean atomics, int maxMessageSize, int maxInlineData,
                        long maxRemoteAccessSize, int operationsInFlight) {
        this.transport = transport;
        this.atomics = atomics;
        this.maxMessageSize = maxMessageSize;
        this.maxInlineData = maxInlineData;
        this.maxRemoteAccessSize = maxRemoteAccessSize;
        this.operationsInFlight = operationsInFlight;
    }

    /** The device's transport: InfiniBand (and RoCE) or iWARP. */
    public Transport transport() {
        return transport;
    }

    /**
     * Whether compare-and-swap and fetch-and-add work: false where the device reports {@code atomic_cap} NONE (siw).
     */
    public boolean atomics() {
        return atomics;
    }

    /** Whether RDMA WRITE with immediate works: false on iWARP, whose wire protocol has no immediate data. */
    public boolean immediateData() {
        return transport != Transport.IWARP;
    }

    /**
     * The largest message {@link MessageChannel#send} takes: the peer's {@link MessagingOptions#maxMessageSize()}
     * (beyond its receive buffer, by rendezvous).
     */
    public int maxMessageSize() {
        return maxMessageSize;
    }

    /** The bytes the queue pair sends inline (header included), as the provider granted them. */
    public int maxInlineData() {
        return maxInlineData;
    }

    /** The most bytes one READ or WRITE moves: the port's {@code max_msg_sz}. */
    public long maxRemoteAccessSize() {
        return maxRemoteAccessSize;
    }

    /** The one-sided operations the channel keeps in flight at once (more wait for one to complete). */
    public int operationsInFlight() {
        return operationsInFlight;
    }

    @Override
    public String toString() {
        return "ChannelCapabilities(" + transport + ", atomics " + atomics + ", immediate data " + immediateData()
                + ", messages up to " + maxMessageSize + " bytes, inline " + maxInlineData + ", READ/WRITE up to "
                + maxRemoteAccessSize + " bytes, " + operationsInFlight + " operations in flight)";
    }
}
