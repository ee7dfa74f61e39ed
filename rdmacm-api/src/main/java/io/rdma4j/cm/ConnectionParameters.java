package io.rdma4j.cm;

import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.bindings.verbs.rdma_conn_param;
import io.rdma4j.verbs.internal.FieldRange;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * What {@link CmId#connect} and {@link CmId#accept} announce, and what a connection event reports of the peer
 * ({@code struct rdma_conn_param}). Start from {@link #defaults()} and change what differs with the {@code with}
 * methods. Every value is range-checked, with the field's name, so nothing is narrowed on its way to C. Immutable
 * and thread-safe.
 */
public final class ConnectionParameters {

    /** The most private data librdmacm's API can carry at all ({@code private_data_len} is a {@code uint8_t}). */
    public static final int MAX_PRIVATE_DATA = 255;

    private final int queuePairNumber;
    private final int responderResources;
    private final int initiatorDepth;
    private final int retryCount;
    private final int rnrRetryCount;
    private final boolean flowControl;
    private final boolean sharedReceiveQueue;
    private final byte[] privateData;

    /** Checks every field and copies the private data. */
    private ConnectionParameters(int queuePairNumber, int responderResources, int initiatorDepth, int retryCount,
                                 int rnrRetryCount, boolean flowControl, boolean sharedReceiveQueue,
                                 byte[] privateData) {
        this.queuePairNumber = FieldRange.bits("queuePairNumber", queuePairNumber, 24);
        this.responderResources = FieldRange.unsigned8("responderResources", responderResources);
        this.initiatorDepth = FieldRange.unsigned8("initiatorDepth", initiatorDepth);
        this.retryCount = FieldRange.check("retryCount", retryCount, 0, 7);
        this.rnrRetryCount = FieldRange.check("rnrRetryCount", rnrRetryCount, 0, 7);
        this.flowControl = flowControl;
        this.sharedReceiveQueue = sharedReceiveQueue;
        if (privateData.length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("privateData has " + privateData.length + " bytes; librdmacm carries at"
                    + " most " + MAX_PRIVATE_DATA);
        }
        this.privateData = privateData.clone();
    }

    /**
     * {@code qp_num}: the local QP's number (24 bits); ignored when the id has a queue pair of its own
     * ({@link CmId#createQueuePair}), whose number librdmacm sends. iWARP does not carry it: a peer's is 0 there.
     */
    public int queuePairNumber() {
        return queuePairNumber;
    }

    /** {@code responder_resources}: incoming RDMA READs/atomics this side accepts at once (0..255). */
    public int responderResources() {
        return responderResources;
    }

    /** {@code initiator_depth}: outgoing RDMA READs/atomics this side issues at once (0..255). */
    public int initiatorDepth() {
        return initiatorDepth;
    }

    /** {@code retry_count}: transport retries (0..7) before a send fails with RETRY_EXCEEDED. */
    public int retryCount() {
        return retryCount;
    }

    /** {@code rnr_retry_count}: receiver-not-ready retries (0..7, 7 = forever). */
    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /** {@code flow_control}: whether the local QP's receive queue generates end-to-end flow-control credits. */
    public boolean flowControl() {
        return flowControl;
    }

    /** {@code srq}: whether the local QP takes its receives from a shared receive queue. */
    public boolean sharedReceiveQueue() {
        return sharedReceiveQueue;
    }

    /**
     * One outstanding RDMA READ each way, 6 transport retries and RNR retry 7 (forever: a live peer that has not
     * posted its receive yet is waited for), no private data, for a queue pair that the id owns or for QP {@code 0}
     * to be set later. With the connection manager's ACK timeout on RoCE (about 0.5 s; {@link CmId#setAckTimeout})
     * a peer that vanishes without a disconnect surfaces as RETRY_EXCEEDED within about 4 s; 7 retries (rping's
     * value) would be "retry forever" on Soft-RoCE.
     */
    public static ConnectionParameters defaults() {
        return new ConnectionParameters(0, 1, 1, 6, 7, false, false, new byte[0]);
    }

    /** {@link #defaults()} for the application's queue pair {@code queuePairNumber}. */
    public static ConnectionParameters forQueuePair(int queuePairNumber) {
        return defaults().withQueuePairNumber(queuePairNumber);
    }

    /** A copy with another QP number. */
    public ConnectionParameters withQueuePairNumber(int value) {
        return new ConnectionParameters(value, responderResources, initiatorDepth, retryCount, rnrRetryCount,
                flowControl, sharedReceiveQueue, privateData);
    }

    /** A copy with other READ/atomic depths: {@code responderResources} incoming, {@code initiatorDepth} outgoing. */
    public ConnectionParameters withReadDepth(int responder, int initiator) {
        return new ConnectionParameters(queuePairNumber, responder, initiator, retryCount, rnrRetryCount,
                flowControl, sharedReceiveQueue, privateData);
    }

    /** A copy with other retry counts. */
    public ConnectionParameters withRetries(int retry, int rnrRetry) {
        return new ConnectionParameters(queuePairNumber, responderResources, initiatorDepth, retry, rnrRetry,
                flowControl, sharedReceiveQueue, privateData);
    }

    /** A copy that announces (or not) end-to-end flow control. */
    public ConnectionParameters withFlowControl(boolean value) {
        return new ConnectionParameters(queuePairNumber, responderResources, initiatorDepth, retryCount,
                rnrRetryCount, value, sharedReceiveQueue, privateData);
    }

    /** A copy that announces a shared receive queue. */
    public ConnectionParameters withSharedReceiveQueue(boolean value) {
        return new ConnectionParameters(queuePairNumber, responderResources, initiatorDepth, retryCount,
                rnrRetryCount, flowControl, value, privateData);
    }

    /** A copy with other private data. */
    public ConnectionParameters withPrivateData(byte[] value) {
        return new ConnectionParameters(queuePairNumber, responderResources, initiatorDepth, retryCount,
                rnrRetryCount, flowControl, sharedReceiveQueue, value);
    }

    /** A copy with the bytes of {@code value} (e.g. a slice of a registered region) as private data. */
    public ConnectionParameters withPrivateData(MemorySegment value) {
        return withPrivateData(bytesOf(value));
    }

    /** A copy of the private data: bytes for the peer (see {@link CmId#connect} for the limits per transport). */
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionParameters p && p.queuePairNumber == queuePairNumber
                && p.responderResources == responderResources && p.initiatorDepth == initiatorDepth
                && p.retryCount == retryCount && p.rnrRetryCount == rnrRetryCount && p.flowControl == flowControl
                && p.sharedReceiveQueue == sharedReceiveQueue && Arrays.equals(p.privateData, privateData);
    }

    @Override
    public int hashCode() {
        return queuePairNumber * 31 + Arrays.hashCode(privateData);
    }

    @Override
    public String toString() {
        return "ConnectionParameters[qp 0x" + Integer.toHexString(queuePairNumber) + ", responderResources "
                + responderResources + ", initiatorDepth " + initiatorDepth + ", retry " + retryCount + ", rnrRetry "
                + rnrRetryCount + (flowControl ? ", flow control" : "") + (sharedReceiveQueue ? ", SRQ" : "") + ", "
                + privateData.length + " bytes of private data]";
    }

    /** Fills a zeroed {@code struct rdma_conn_param}; the private data is copied into {@code arena}. */
    void writeTo(MemorySegment param, Arena arena) {
        rdma_conn_param.qp_num(param, queuePairNumber);
        rdma_conn_param.responder_resources(param, (byte) responderResources);
        rdma_conn_param.initiator_depth(param, (byte) initiatorDepth);
        rdma_conn_param.retry_count(param, (byte) retryCount);
        rdma_conn_param.rnr_retry_count(param, (byte) rnrRetryCount);
        rdma_conn_param.flow_control(param, (byte) (flowControl ? 1 : 0));
        rdma_conn_param.srq(param, (byte) (sharedReceiveQueue ? 1 : 0));
        if (privateData.length > 0) {
            rdma_conn_param.private_data(param, arena.allocateFrom(ValueLayout.JAVA_BYTE, privateData));
            rdma_conn_param.private_data_len(param, (byte) privateData.length);
        }
    }

    /** Reads a {@code struct rdma_conn_param} of an event, private data included. */
    static ConnectionParameters readFrom(MemorySegment param) {
        return new ConnectionParameters(rdma_conn_param.qp_num(param) & 0xFFFFFF,
                Byte.toUnsignedInt(rdma_conn_param.responder_resources(param)),
                Byte.toUnsignedInt(rdma_conn_param.initiator_depth(param)),
                Byte.toUnsignedInt(rdma_conn_param.retry_count(param)) & 7,
                Byte.toUnsignedInt(rdma_conn_param.rnr_retry_count(param)) & 7,
                rdma_conn_param.flow_control(param) != 0, rdma_conn_param.srq(param) != 0,
                bytes(rdma_conn_param.private_data(param), rdma_conn_param.private_data_len(param)));
    }

    /** Copies {@code length} bytes (an unsigned byte) from a C pointer; empty for NULL. */
    static byte[] bytes(MemorySegment pointer, byte length) {
        int n = Byte.toUnsignedInt(length);
        if (pointer.address() == 0 || n == 0) {
            return new byte[0];
        }
        return Pointers.sized(pointer, n).toArray(ValueLayout.JAVA_BYTE);
    }

    /** The bytes of {@code segment}, checked against what librdmacm can carry before they are copied. */
    static byte[] bytesOf(MemorySegment segment) {
        if (segment.byteSize() > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("privateData has " + segment.byteSize() + " bytes; librdmacm carries at"
                    + " most " + MAX_PRIVATE_DATA);
        }
        return segment.toArray(ValueLayout.JAVA_BYTE);
    }
}
