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
import static io.rdma4j.verbs.QueuePairType.RELIABLE_CONNECTED;
import static io.rdma4j.verbs.QueuePairType.UNRELIABLE_CONNECTED;
import static io.rdma4j.verbs.QueuePairType.UNRELIABLE_DATAGRAM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.bindings.shim.NativeLibraries;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Unit tests of the QP state machine table against the InfiniBand specification (no device). */
class QueuePairTransitionsTest {

    @BeforeAll
    static void libraries() {
        NativeLibraries.require();
    }

    @Test
    void theSetupPathAndRecoveryAreAllowed() {
        assertTrue(QueuePairTransitions.allowed(RESET, INIT));
        assertTrue(QueuePairTransitions.allowed(INIT, READY_TO_RECEIVE));
        assertTrue(QueuePairTransitions.allowed(READY_TO_RECEIVE, READY_TO_SEND));
        assertTrue(QueuePairTransitions.allowed(READY_TO_SEND, READY_TO_SEND));
        for (QueuePairState any : EnumSet.complementOf(EnumSet.of(QueuePairState.UNKNOWN))) {
            assertTrue(QueuePairTransitions.allowed(any, ERROR), any + " to ERROR");
            assertTrue(QueuePairTransitions.allowed(any, RESET), any + " to RESET");
        }
    }

    @Test
    void skippingStatesIsNotAllowed() {
        assertFalse(QueuePairTransitions.allowed(RESET, READY_TO_RECEIVE));
        assertFalse(QueuePairTransitions.allowed(RESET, READY_TO_SEND));
        assertFalse(QueuePairTransitions.allowed(INIT, READY_TO_SEND));
        assertFalse(QueuePairTransitions.allowed(READY_TO_SEND, INIT));
        assertFalse(QueuePairTransitions.allowed(ERROR, READY_TO_SEND));
        assertFalse(QueuePairTransitions.allowed(READY_TO_RECEIVE, SEND_QUEUE_DRAINED));
    }

    @Test
    void resetToInitNeedsPortPkeyAndAccessOrQkey() {
        int connected = IBV_QP_PKEY_INDEX() | IBV_QP_PORT() | IBV_QP_ACCESS_FLAGS();
        assertEquals(connected, QueuePairTransitions.required(RELIABLE_CONNECTED, RESET, INIT));
        assertEquals(connected, QueuePairTransitions.required(UNRELIABLE_CONNECTED, RESET, INIT));
        assertEquals(IBV_QP_PKEY_INDEX() | IBV_QP_PORT() | IBV_QP_QKEY(),
                QueuePairTransitions.required(UNRELIABLE_DATAGRAM, RESET, INIT));
    }

    @Test
    void initToReadyToReceiveNeedsThePathForConnectedQueuePairs() {
        int uc = IBV_QP_AV() | IBV_QP_PATH_MTU() | IBV_QP_DEST_QPN() | IBV_QP_RQ_PSN();
        assertEquals(uc, QueuePairTransitions.required(UNRELIABLE_CONNECTED, INIT, READY_TO_RECEIVE));
        assertEquals(uc | IBV_QP_MAX_DEST_RD_ATOMIC() | IBV_QP_MIN_RNR_TIMER(),
                QueuePairTransitions.required(RELIABLE_CONNECTED, INIT, READY_TO_RECEIVE));
        assertEquals(0, QueuePairTransitions.required(UNRELIABLE_DATAGRAM, INIT, READY_TO_RECEIVE));
    }

    @Test
    void readyToSendNeedsTheSendPsnAndForReliableQueuePairsTheRetryPolicy() {
        assertEquals(IBV_QP_SQ_PSN(), QueuePairTransitions.required(UNRELIABLE_DATAGRAM, READY_TO_RECEIVE, READY_TO_SEND));
        assertEquals(IBV_QP_SQ_PSN(), QueuePairTransitions.required(UNRELIABLE_CONNECTED, READY_TO_RECEIVE, READY_TO_SEND));
        assertEquals(IBV_QP_SQ_PSN() | IBV_QP_TIMEOUT() | IBV_QP_RETRY_CNT() | IBV_QP_RNR_RETRY() | IBV_QP_MAX_QP_RD_ATOMIC(),
                QueuePairTransitions.required(RELIABLE_CONNECTED, READY_TO_RECEIVE, READY_TO_SEND));
        assertEquals(0, QueuePairTransitions.required(RELIABLE_CONNECTED, READY_TO_SEND, ERROR));
    }

    @Test
    void maskBitsHaveTheirCNames() {
        assertEquals(List.of("IBV_QP_PORT", "IBV_QP_QKEY"), QueuePairTransitions.names(IBV_QP_PORT() | IBV_QP_QKEY()));
    }

    @Test
    void attributesRecordTheirMaskAndCheckPsns() {
        QueuePairAttributes a = new QueuePairAttributes().port(1).sendPsn(0xFFFFFF);
        assertEquals(IBV_QP_PORT() | IBV_QP_SQ_PSN(), a.mask());
        assertThrows(IllegalArgumentException.class, () -> new QueuePairAttributes().receivePsn(1 << 24));
    }
}
