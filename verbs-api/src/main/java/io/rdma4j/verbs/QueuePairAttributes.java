package io.rdma4j.verbs;

import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_ACCESS_FLAGS;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_AV;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_CAP;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_DEST_QPN;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_MAX_DEST_RD_ATOMIC;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_MAX_QP_RD_ATOMIC;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_MIN_RNR_TIMER;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_PATH_MTU;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_PKEY_INDEX;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_PORT;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_QKEY;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_RETRY_CNT;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_RNR_RETRY;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_RQ_PSN;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_SQ_PSN;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_STATE;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_TIMEOUT;

import io.rdma4j.bindings.verbs.ibv_qp_attr;
import io.rdma4j.verbs.internal.FieldRange;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * Attributes for {@link QueuePair#modify(QueuePairAttributes)} ({@code struct ibv_qp_attr} with its
 * {@code attr_mask}): every setter also sets its mask bit, so only what was set is sent. Also what
 * {@link QueuePair#query()} returns, with every attribute set.
 *
 * <p>The typed transitions of {@link QueuePair} ({@code initialize}, {@code readyToReceive}, {@code readyToSend})
 * build these for the common cases. Every setter checks its value against the C field's range and names the field
 * ({@code port_num is 0..255, not 257}). Not thread-safe; cheap to create (control path only).
 */
public final class QueuePairAttributes {

    private int mask;
    private QueuePairState state;
    private Mtu pathMtu;
    private int qkey;
    private int receivePsn;
    private int sendPsn;
    private int destinationQueuePair;
    private Set<Access> access = Set.of();
    private int pkeyIndex;
    private int port;
    private int maxReadAtomic;
    private int maxDestinationReadAtomic;
    private int minRnrTimer;
    private int timeout;
    private int retryCount;
    private int rnrRetry;
    private AddressVector address;
    private QueuePairCapabilities capabilities;

    /** No attributes set: add them with the setters. */
    public QueuePairAttributes() {
        // Setters fill it in.
    }

    /** The state to move to ({@code IBV_QP_STATE}). */
    public QueuePairAttributes state(QueuePairState value) {
        state = value;
        return set(IBV_QP_STATE());
    }

    /** The path MTU, at most the port's active MTU ({@code IBV_QP_PATH_MTU}). */
    public QueuePairAttributes pathMtu(Mtu value) {
        pathMtu = value;
        return set(IBV_QP_PATH_MTU());
    }

    /** The Q_Key of a UD queue pair ({@code IBV_QP_QKEY}). */
    public QueuePairAttributes qkey(int value) {
        qkey = value;
        return set(IBV_QP_QKEY());
    }

    /** The first packet sequence number expected from the peer, 24 bits ({@code IBV_QP_RQ_PSN}). */
    public QueuePairAttributes receivePsn(int value) {
        receivePsn = FieldRange.bits("rq_psn", value, 24);
        return set(IBV_QP_RQ_PSN());
    }

    /** The first packet sequence number sent, 24 bits ({@code IBV_QP_SQ_PSN}). */
    public QueuePairAttributes sendPsn(int value) {
        sendPsn = FieldRange.bits("sq_psn", value, 24);
        return set(IBV_QP_SQ_PSN());
    }

    /** The peer's QP number, 24 bits ({@code IBV_QP_DEST_QPN}). */
    public QueuePairAttributes destinationQueuePair(int value) {
        destinationQueuePair = FieldRange.bits("dest_qp_num", value, 24);
        return set(IBV_QP_DEST_QPN());
    }

    /** What remote peers may do through this QP ({@code IBV_QP_ACCESS_FLAGS}). */
    public QueuePairAttributes access(Set<Access> value) {
        access = value.isEmpty() ? Set.of() : EnumSet.copyOf(value);
        return set(IBV_QP_ACCESS_FLAGS());
    }

    /** The P_Key table index ({@code IBV_QP_PKEY_INDEX}). */
    public QueuePairAttributes pkeyIndex(int value) {
        pkeyIndex = FieldRange.unsigned16("pkey_index", value);
        return set(IBV_QP_PKEY_INDEX());
    }

    /** The local port number ({@code IBV_QP_PORT}). */
    public QueuePairAttributes port(int value) {
        port = FieldRange.unsigned8("port_num", value); // 0 in what a RESET queue pair reports
        return set(IBV_QP_PORT());
    }

    /** Outstanding RDMA READs/atomics this QP may issue ({@code IBV_QP_MAX_QP_RD_ATOMIC}). */
    public QueuePairAttributes maxReadAtomic(int value) {
        maxReadAtomic = FieldRange.unsigned8("max_rd_atomic", value);
        return set(IBV_QP_MAX_QP_RD_ATOMIC());
    }

    /** Outstanding RDMA READs/atomics this QP accepts as target ({@code IBV_QP_MAX_DEST_RD_ATOMIC}). */
    public QueuePairAttributes maxDestinationReadAtomic(int value) {
        maxDestinationReadAtomic = FieldRange.unsigned8("max_dest_rd_atomic", value);
        return set(IBV_QP_MAX_DEST_RD_ATOMIC());
    }

    /** The RNR NAK timer code, 0..31 ({@code IBV_QP_MIN_RNR_TIMER}; 12 = 0.64 ms). */
    public QueuePairAttributes minRnrTimer(int value) {
        minRnrTimer = FieldRange.check("min_rnr_timer", value, 0, 31);
        return set(IBV_QP_MIN_RNR_TIMER());
    }

    /** The local ACK timeout code, 0..31: 4.096 µs × 2^value, 0 = infinite ({@code IBV_QP_TIMEOUT}). */
    public QueuePairAttributes timeout(int value) {
        timeout = FieldRange.check("timeout", value, 0, 31);
        return set(IBV_QP_TIMEOUT());
    }

    /** Transport retries before {@link WorkCompletionStatus#RETRY_EXCEEDED_ERROR}, 0..7 ({@code IBV_QP_RETRY_CNT}). */
    public QueuePairAttributes retryCount(int value) {
        retryCount = FieldRange.check("retry_cnt", value, 0, 7);
        return set(IBV_QP_RETRY_CNT());
    }

    /**
     * RNR retries before {@link WorkCompletionStatus#RNR_RETRY_EXCEEDED_ERROR}, 0..7, 7 = forever
     * ({@code IBV_QP_RNR_RETRY}).
     */
    public QueuePairAttributes rnrRetry(int value) {
        rnrRetry = FieldRange.check("rnr_retry", value, 0, 7);
        return set(IBV_QP_RNR_RETRY());
    }

    /** The primary path to the peer ({@code IBV_QP_AV}). */
    public QueuePairAttributes address(AddressVector value) {
        address = value;
        return set(IBV_QP_AV());
    }

    /** The {@code attr_mask}: which attributes are set ({@code IBV_QP_*} bits). */
    public int mask() {
        return mask;
    }

    /** The state set, or the queried state. */
    public QueuePairState state() {
        return state;
    }

    /** The path MTU. */
    public Mtu pathMtu() {
        return pathMtu;
    }

    /** The Q_Key. */
    public int qkey() {
        return qkey;
    }

    /** The receive PSN. */
    public int receivePsn() {
        return receivePsn;
    }

    /** The send PSN. */
    public int sendPsn() {
        return sendPsn;
    }

    /** The peer's QP number. */
    public int destinationQueuePair() {
        return destinationQueuePair;
    }

    /** The remote access rights. */
    public Set<Access> access() {
        return access;
    }

    /** The P_Key index. */
    public int pkeyIndex() {
        return pkeyIndex;
    }

    /** The port. */
    public int port() {
        return port;
    }

    /** RDMA READs/atomics in flight as initiator. */
    public int maxReadAtomic() {
        return maxReadAtomic;
    }

    /** RDMA READs/atomics in flight as target. */
    public int maxDestinationReadAtomic() {
        return maxDestinationReadAtomic;
    }

    /** The RNR NAK timer code. */
    public int minRnrTimer() {
        return minRnrTimer;
    }

    /** The ACK timeout code. */
    public int timeout() {
        return timeout;
    }

    /** The retry count. */
    public int retryCount() {
        return retryCount;
    }

    /** The RNR retry count. */
    public int rnrRetry() {
        return rnrRetry;
    }

    /** The primary path, or {@code null}. */
    public AddressVector address() {
        return address;
    }

    /** The queue sizes (queried attributes only), or {@code null}. */
    public QueuePairCapabilities capabilities() {
        return capabilities;
    }

    /** Writes the set attributes into a zeroed {@code struct ibv_qp_attr}. */
    void writeTo(MemorySegment attr) {
        if (state != null) {
            ibv_qp_attr.qp_state(attr, state.value());
        }
        if (pathMtu != null) {
            ibv_qp_attr.path_mtu(attr, pathMtu.value());
        }
        ibv_qp_attr.qkey(attr, qkey);
        ibv_qp_attr.rq_psn(attr, receivePsn);
        ibv_qp_attr.sq_psn(attr, sendPsn);
        ibv_qp_attr.dest_qp_num(attr, destinationQueuePair);
        ibv_qp_attr.qp_access_flags(attr, Access.mask(access));
        ibv_qp_attr.pkey_index(attr, (short) pkeyIndex);
        ibv_qp_attr.port_num(attr, (byte) port);
        ibv_qp_attr.max_rd_atomic(attr, (byte) maxReadAtomic);
        ibv_qp_attr.max_dest_rd_atomic(attr, (byte) maxDestinationReadAtomic);
        ibv_qp_attr.min_rnr_timer(attr, (byte) minRnrTimer);
        ibv_qp_attr.timeout(attr, (byte) timeout);
        ibv_qp_attr.retry_cnt(attr, (byte) retryCount);
        ibv_qp_attr.rnr_retry(attr, (byte) rnrRetry);
        if (address != null) {
            address.writeTo(ibv_qp_attr.ah_attr(attr));
        }
    }

    /** Reads a {@code struct ibv_qp_attr} filled by {@code ibv_query_qp}: every attribute. */
    static QueuePairAttributes readFrom(MemorySegment attr) {
        int all = IBV_QP_STATE() | IBV_QP_PATH_MTU() | IBV_QP_QKEY() | IBV_QP_RQ_PSN() | IBV_QP_SQ_PSN()
                | IBV_QP_DEST_QPN() | IBV_QP_ACCESS_FLAGS() | IBV_QP_PKEY_INDEX() | IBV_QP_PORT()
                | IBV_QP_MAX_QP_RD_ATOMIC() | IBV_QP_MAX_DEST_RD_ATOMIC() | IBV_QP_MIN_RNR_TIMER() | IBV_QP_TIMEOUT()
                | IBV_QP_RETRY_CNT() | IBV_QP_RNR_RETRY() | IBV_QP_AV();
        QueuePairAttributes a = readFrom(attr, all);
        a.capabilities = QueuePairCapabilities.readFrom(ibv_qp_attr.cap(attr));
        return a;
    }

    /**
     * Reads the attributes of a {@code struct ibv_qp_attr} that {@code mask} names (as {@code rdma_init_qp_attr}
     * fills it): the result sends exactly those.
     */
    static QueuePairAttributes readFrom(MemorySegment attr, int mask) {
        QueuePairAttributes a = new QueuePairAttributes();
        if ((mask & IBV_QP_STATE()) != 0) {
            a.state(CValue.of(QueuePairState.class, ibv_qp_attr.qp_state(attr)));
        }
        if ((mask & IBV_QP_PATH_MTU()) != 0) {
            a.pathMtu(CValue.of(Mtu.class, ibv_qp_attr.path_mtu(attr)));
        }
        if ((mask & IBV_QP_QKEY()) != 0) {
            a.qkey(ibv_qp_attr.qkey(attr));
        }
        if ((mask & IBV_QP_RQ_PSN()) != 0) {
            a.receivePsn(ibv_qp_attr.rq_psn(attr));
        }
        if ((mask & IBV_QP_SQ_PSN()) != 0) {
            a.sendPsn(ibv_qp_attr.sq_psn(attr));
        }
        if ((mask & IBV_QP_DEST_QPN()) != 0) {
            a.destinationQueuePair(ibv_qp_attr.dest_qp_num(attr));
        }
        if ((mask & IBV_QP_ACCESS_FLAGS()) != 0) {
            a.access(Access.fromMask(ibv_qp_attr.qp_access_flags(attr)));
        }
        if ((mask & IBV_QP_PKEY_INDEX()) != 0) {
            a.pkeyIndex(Short.toUnsignedInt(ibv_qp_attr.pkey_index(attr)));
        }
        if ((mask & IBV_QP_PORT()) != 0) {
            a.port(Byte.toUnsignedInt(ibv_qp_attr.port_num(attr)));
        }
        if ((mask & IBV_QP_MAX_QP_RD_ATOMIC()) != 0) {
            a.maxReadAtomic(Byte.toUnsignedInt(ibv_qp_attr.max_rd_atomic(attr)));
        }
        if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC()) != 0) {
            a.maxDestinationReadAtomic(Byte.toUnsignedInt(ibv_qp_attr.max_dest_rd_atomic(attr)));
        }
        if ((mask & IBV_QP_MIN_RNR_TIMER()) != 0) {
            a.minRnrTimer(Byte.toUnsignedInt(ibv_qp_attr.min_rnr_timer(attr)));
        }
        if ((mask & IBV_QP_TIMEOUT()) != 0) {
            a.timeout(Byte.toUnsignedInt(ibv_qp_attr.timeout(attr)));
        }
        if ((mask & IBV_QP_RETRY_CNT()) != 0) {
            a.retryCount(Byte.toUnsignedInt(ibv_qp_attr.retry_cnt(attr)));
        }
        if ((mask & IBV_QP_RNR_RETRY()) != 0) {
            a.rnrRetry(Byte.toUnsignedInt(ibv_qp_attr.rnr_retry(attr)));
        }
        if ((mask & IBV_QP_AV()) != 0) {
            a.address(AddressVector.readFrom(ibv_qp_attr.ah_attr(attr)));
        }
        if ((mask & ~a.mask & ~IBV_QP_CAP()) != 0) {
            throw new IllegalArgumentException("attributes rdma4j cannot carry: attr_mask bits "
                    + QueuePairTransitions.names(mask & ~a.mask & ~IBV_QP_CAP()));
        }
        return a;
    }

    private QueuePairAttributes set(int bit) {
        mask |= bit;
        return this;
    }
}
