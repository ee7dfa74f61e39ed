package io.rdma4j.verbs;

import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_ACCESS_FLAGS;
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_AV;
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
import static io.rdma4j.bindings.verbs.RdmaCore.IBV_QP_TIMEOUT;
import static io.rdma4j.verbs.QueuePairState.ERROR;
import static io.rdma4j.verbs.QueuePairState.INIT;
import static io.rdma4j.verbs.QueuePairState.READY_TO_RECEIVE;
import static io.rdma4j.verbs.QueuePairState.READY_TO_SEND;
import static io.rdma4j.verbs.QueuePairState.RESET;
import static io.rdma4j.verbs.QueuePairState.SEND_QUEUE_DRAINED;
import static io.rdma4j.verbs.QueuePairState.SEND_QUEUE_ERROR;

import java.util.ArrayList;
import java.util.List;

/**
 * The queue pair state machine of the InfiniBand specification (the kernel's {@code ib_modify_qp_is_ok} table):
 * which transitions exist and which attributes each one requires. {@link QueuePair#modify} checks it before
 * calling {@code ibv_modify_qp}, so that a wrong state or a missing attribute is a clear Java exception instead
 * of a bare EINVAL.
 */
final class QueuePairTransitions {

    private QueuePairTransitions() {
    }

    /** Whether {@code from → to} is a transition a consumer may request. */
    static boolean allowed(QueuePairState from, QueuePairState to) {
        if (to == RESET || to == ERROR) {
            return from != QueuePairState.UNKNOWN;
        }
        return switch (from) {
            case RESET -> to == INIT;
            case INIT -> to == INIT || to == READY_TO_RECEIVE;
            case READY_TO_RECEIVE -> to == READY_TO_SEND;
            case READY_TO_SEND -> to == READY_TO_SEND || to == SEND_QUEUE_DRAINED;
            case SEND_QUEUE_DRAINED -> to == READY_TO_SEND || to == SEND_QUEUE_DRAINED;
            case SEND_QUEUE_ERROR -> to == READY_TO_SEND;
            default -> false;
        };
    }

    /** The attribute-mask bits {@code from → to} requires for {@code type} (besides {@code IBV_QP_STATE}). */
    static int required(QueuePairType type, QueuePairState from, QueuePairState to) {
        if (from == RESET && to == INIT) {
            return IBV_QP_PKEY_INDEX() | IBV_QP_PORT()
                    | (type == QueuePairType.UNRELIABLE_DATAGRAM ? IBV_QP_QKEY() : IBV_QP_ACCESS_FLAGS());
        }
        if (from == INIT && to == READY_TO_RECEIVE) {
            return switch (type) {
                case UNRELIABLE_DATAGRAM -> 0;
                case UNRELIABLE_CONNECTED -> IBV_QP_AV() | IBV_QP_PATH_MTU() | IBV_QP_DEST_QPN() | IBV_QP_RQ_PSN();
                case RELIABLE_CONNECTED -> IBV_QP_AV() | IBV_QP_PATH_MTU() | IBV_QP_DEST_QPN() | IBV_QP_RQ_PSN()
                        | IBV_QP_MAX_DEST_RD_ATOMIC() | IBV_QP_MIN_RNR_TIMER();
            };
        }
        if (from == READY_TO_RECEIVE && to == READY_TO_SEND) {
            return type == QueuePairType.RELIABLE_CONNECTED
                    ? IBV_QP_SQ_PSN() | IBV_QP_TIMEOUT() | IBV_QP_RETRY_CNT() | IBV_QP_RNR_RETRY() | IBV_QP_MAX_QP_RD_ATOMIC()
                    : IBV_QP_SQ_PSN();
        }
        return 0;
    }

    /** The names of the {@code IBV_QP_*} bits in {@code mask}, for messages. */
    static List<String> names(int mask) {
        List<String> names = new ArrayList<>();
        String[] all = {"PKEY_INDEX", "PORT", "QKEY", "ACCESS_FLAGS", "AV", "PATH_MTU", "DEST_QPN", "RQ_PSN",
            "MAX_DEST_RD_ATOMIC", "MIN_RNR_TIMER", "SQ_PSN", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "MAX_QP_RD_ATOMIC"};
        int[] bits = {IBV_QP_PKEY_INDEX(), IBV_QP_PORT(), IBV_QP_QKEY(), IBV_QP_ACCESS_FLAGS(), IBV_QP_AV(),
            IBV_QP_PATH_MTU(), IBV_QP_DEST_QPN(), IBV_QP_RQ_PSN(), IBV_QP_MAX_DEST_RD_ATOMIC(), IBV_QP_MIN_RNR_TIMER(),
            IBV_QP_SQ_PSN(), IBV_QP_TIMEOUT(), IBV_QP_RETRY_CNT(), IBV_QP_RNR_RETRY(), IBV_QP_MAX_QP_RD_ATOMIC()};
        for (int i = 0; i < bits.length; i++) {
            if ((mask & bits[i]) != 0) {
                names.add("IBV_QP_" + all[i]);
            }
        }
        return names;
    }
}
