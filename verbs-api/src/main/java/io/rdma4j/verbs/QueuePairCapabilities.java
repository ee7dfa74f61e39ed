package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.ibv_qp_cap;
import java.lang.foreign.MemorySegment;

/**
 * The sizes of a queue pair's work queues ({@code struct ibv_qp_cap}): asked for when it is created
 * ({@link QueuePair.Builder#capabilities}), and what the provider granted afterwards ({@link QueuePair#capabilities()},
 * often more). Start from {@link #defaults()} and change what differs:
 *
 * <pre>{@code
 * QueuePairCapabilities.defaults().withSendQueue(128).withReceiveQueue(512).withInlineData(64)
 * }</pre>
 *
 * <p>Immutable and thread-safe: each {@code with} method returns a new value.
 */
public final class QueuePairCapabilities {

    private static final QueuePairCapabilities DEFAULTS = new QueuePairCapabilities(16, 16, 1, 1, 0);

    private final int maxSendWorkRequests;
    private final int maxReceiveWorkRequests;
    private final int maxSendScatterGather;
    private final int maxReceiveScatterGather;
    private final int maxInlineData;

    private QueuePairCapabilities(int maxSendWorkRequests, int maxReceiveWorkRequests, int maxSendScatterGather,
                                  int maxReceiveScatterGather, int maxInlineData) {
        this.maxSendWorkRequests = maxSendWorkRequests;
        this.maxReceiveWorkRequests = maxReceiveWorkRequests;
        this.maxSendScatterGather = maxSendScatterGather;
        this.maxReceiveScatterGather = maxReceiveScatterGather;
        this.maxInlineData = maxInlineData;
    }

    /** 16 send and 16 receive requests, one scatter/gather entry each, no inline data. */
    public static QueuePairCapabilities defaults() {
        return DEFAULTS;
    }

    /** With room for {@code requests} outstanding send requests ({@code max_send_wr}). */
    public QueuePairCapabilities withSendQueue(int requests) {
        return new QueuePairCapabilities(notNegative("max_send_wr", requests), maxReceiveWorkRequests,
                maxSendScatterGather, maxReceiveScatterGather, maxInlineData);
    }

    /** With room for {@code requests} outstanding receive requests ({@code max_recv_wr}; 0 with a shared queue). */
    public QueuePairCapabilities withReceiveQueue(int requests) {
        return new QueuePairCapabilities(maxSendWorkRequests, notNegative("max_recv_wr", requests),
                maxSendScatterGather, maxReceiveScatterGather, maxInlineData);
    }

    /** With {@code entries} gather entries per send request ({@code max_send_sge}). */
    public QueuePairCapabilities withSendScatterGather(int entries) {
        return new QueuePairCapabilities(maxSendWorkRequests, maxReceiveWorkRequests,
                notNegative("max_send_sge", entries), maxReceiveScatterGather, maxInlineData);
    }

    /** With {@code entries} scatter entries per receive request ({@code max_recv_sge}; 0 with a shared queue). */
    public QueuePairCapabilities withReceiveScatterGather(int entries) {
        return new QueuePairCapabilities(maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather,
                notNegative("max_recv_sge", entries), maxInlineData);
    }

    /** With {@code bytes} of inline data per send request ({@code max_inline_data}). */
    public QueuePairCapabilities withInlineData(int bytes) {
        return new QueuePairCapabilities(maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather,
                maxReceiveScatterGather, notNegative("max_inline_data", bytes));
    }

    private static int notNegative(String field, int value) {
        if (value < 0) {
            throw new IllegalArgumentException("ibv_qp_cap." + field + " cannot be negative: " + value);
        }
        return value;
    }

    /** {@code max_send_wr}: outstanding send requests. */
    public int maxSendWorkRequests() {
        return maxSendWorkRequests;
    }

    /** {@code max_recv_wr}: outstanding receive requests (0 with a shared receive queue). */
    public int maxReceiveWorkRequests() {
        return maxReceiveWorkRequests;
    }

    /** {@code max_send_sge}: gather entries per send request. */
    public int maxSendScatterGather() {
        return maxSendScatterGather;
    }

    /** {@code max_recv_sge}: scatter entries per receive request. */
    public int maxReceiveScatterGather() {
        return maxReceiveScatterGather;
    }

    /** {@code max_inline_data}: bytes a send request may carry inline. */
    public int maxInlineData() {
        return maxInlineData;
    }

    void writeTo(MemorySegment cap) {
        ibv_qp_cap.max_send_wr(cap, maxSendWorkRequests);
        ibv_qp_cap.max_recv_wr(cap, maxReceiveWorkRequests);
        ibv_qp_cap.max_send_sge(cap, maxSendScatterGather);
        ibv_qp_cap.max_recv_sge(cap, maxReceiveScatterGather);
        ibv_qp_cap.max_inline_data(cap, maxInlineData);
    }

    static QueuePairCapabilities readFrom(MemorySegment cap) {
        return new QueuePairCapabilities(ibv_qp_cap.max_send_wr(cap), ibv_qp_cap.max_recv_wr(cap),
                ibv_qp_cap.max_send_sge(cap), ibv_qp_cap.max_recv_sge(cap), ibv_qp_cap.max_inline_data(cap));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof QueuePairCapabilities c && c.maxSendWorkRequests == maxSendWorkRequests
                && c.maxReceiveWorkRequests == maxReceiveWorkRequests && c.maxSendScatterGather == maxSendScatterGather
                && c.maxReceiveScatterGather == maxReceiveScatterGather && c.maxInlineData == maxInlineData;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(maxSendWorkRequests, maxReceiveWorkRequests, maxSendScatterGather,
                maxReceiveScatterGather, maxInlineData);
    }

    /** E.g. {@code send 16 x 1 SGE, receive 16 x 1 SGE, inline 0 B}. */
    @Override
    public String toString() {
        return "send " + maxSendWorkRequests + " x " + maxSendScatterGather + " SGE, receive " + maxReceiveWorkRequests
                + " x " + maxReceiveScatterGather + " SGE, inline " + maxInlineData + " B";
    }
}
