package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.bindings.verbs.rdma_conn_param;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Unit tests: connection parameters and options, to C and back, and their range checks. */
class ConnectionParametersTest {

    @Test
    void parametersFillTheCStructAndReadBackTheSame() {
        byte[] data = {1, 2, 3, 4, 5};
        ConnectionParameters p = ConnectionParameters.forQueuePair(0x123456).withReadDepth(4, 2).withRetries(5, 3)
                .withSharedReceiveQueue(true).withPrivateData(data);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment param = arena.allocate(rdma_conn_param.layout());
            p.writeTo(param, arena);
            assertEquals(0x123456, rdma_conn_param.qp_num(param));
            assertEquals(4, rdma_conn_param.responder_resources(param));
            assertEquals(2, rdma_conn_param.initiator_depth(param));
            assertEquals(5, rdma_conn_param.retry_count(param));
            assertEquals(3, rdma_conn_param.rnr_retry_count(param));
            assertEquals(1, rdma_conn_param.srq(param));
            assertEquals(5, rdma_conn_param.private_data_len(param));
            assertEquals(p, ConnectionParameters.readFrom(param));
            assertArrayEquals(data, ConnectionParameters.readFrom(param).privateData());
        }
    }

    /** 6 retries, not rping's 7: Soft-RoCE retries forever with 7, so a vanished peer would never be reported. */
    @Test
    void defaultsReportAVanishedPeerAndWaitForALiveOnesReceives() {
        ConnectionParameters d = ConnectionParameters.defaults();
        assertEquals(6, d.retryCount());
        assertEquals(7, d.rnrRetryCount());
        assertEquals(0, d.privateData().length);
    }

    @Test
    void everyFieldIsRangeCheckedWithItsName() {
        ConnectionParameters d = ConnectionParameters.defaults();
        assertMessage("queuePairNumber", () -> d.withQueuePairNumber(1 << 24));
        assertMessage("responderResources", () -> d.withReadDepth(256, 1));
        assertMessage("initiatorDepth", () -> d.withReadDepth(1, -1));
        assertMessage("retryCount", () -> d.withRetries(8, 7));
        assertMessage("rnrRetryCount", () -> d.withRetries(7, 8));
        assertMessage("privateData", () -> d.withPrivateData(new byte[256]));
        assertEquals(255, d.withPrivateData(new byte[255]).privateData().length);
    }

    @Test
    void privateDataMayComeFromASegment() {
        MemorySegment data = MemorySegment.ofArray(new byte[] {4, 5, 6});
        assertArrayEquals(new byte[] {4, 5, 6}, ConnectionParameters.defaults().withPrivateData(data).privateData());
        assertArrayEquals(new byte[] {4, 5, 6}, ConnectionOptions.builder().privateData(data).build().privateData());
        assertMessage("privateData", () -> ConnectionParameters.defaults()
                .withPrivateData(MemorySegment.ofArray(new byte[256])));
    }

    @Test
    void theRecordKeepsItsOwnCopyOfThePrivateData() {
        byte[] data = {9};
        ConnectionParameters p = ConnectionParameters.defaults().withPrivateData(data);
        data[0] = 0;
        p.privateData()[0] = 1;
        assertEquals(9, p.privateData()[0]);
    }

    @Test
    void optionsCheckTheirValuesAndDeriveTheCompletionQueueSize() {
        ConnectionOptions o = ConnectionOptions.defaults();
        assertEquals(32, o.completionQueueSize());
        assertEquals(6, o.parameters().retryCount());
        assertEquals(17, o.ackTimeout());
        assertMessage("ackTimeout", () -> ConnectionOptions.builder().ackTimeout(32).build());
        assertEquals(java.time.Duration.ofSeconds(10), o.establishTimeout());
        assertThrows(NullPointerException.class, () -> ConnectionOptions.builder().establishTimeout(null).build());
        assertMessage("retryCount", () -> ConnectionOptions.builder().retries(9, 7).build());
        assertMessage("privateData", () -> ConnectionOptions.builder().privateData(new byte[300]).build());
        assertArrayEquals(new byte[] {7}, ConnectionOptions.builder().privateData(new byte[] {7}).build().parameters()
                .privateData());
    }

    private static void assertMessage(String field, org.junit.jupiter.api.function.Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(field), e.getMessage());
    }
}
