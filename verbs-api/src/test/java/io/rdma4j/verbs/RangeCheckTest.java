package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdma4j.bindings.shim.NativeLibraries;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Unit tests: values bound for C fields narrower than Java's are refused with the field and its range, never
 * truncated into another valid value (port 257 would be port 1, GID index 257 would be 1).
 */
class RangeCheckTest {

    @BeforeAll
    static void libraries() {
        NativeLibraries.require();
    }

    @Test
    void queuePairAttributesNameTheFieldAndItsRange() {
        QueuePairAttributes a = new QueuePairAttributes();
        assertMessage("port_num is 0..255, not 257", () -> a.port(257));
        assertMessage("port_num is 0..255, not -1", () -> a.port(-1));
        assertMessage("dest_qp_num is 0..16777215, not 16777216", () -> a.destinationQueuePair(1 << 24));
        assertMessage("sq_psn is 0..16777215, not -1", () -> a.sendPsn(-1));
        assertMessage("rq_psn is 0..16777215", () -> a.receivePsn(1 << 24));
        assertMessage("pkey_index is 0..65535, not 65536", () -> a.pkeyIndex(65536));
        assertMessage("max_rd_atomic is 0..255, not 256", () -> a.maxReadAtomic(256));
        assertMessage("max_dest_rd_atomic is 0..255", () -> a.maxDestinationReadAtomic(-1));
        assertMessage("min_rnr_timer is 0..31, not 32", () -> a.minRnrTimer(32));
        assertMessage("timeout is 0..31, not 32", () -> a.timeout(32));
        assertMessage("retry_cnt is 0..7, not 8", () -> a.retryCount(8));
        assertMessage("rnr_retry is 0..7, not 8", () -> a.rnrRetry(8));
        assertEquals(0, a.mask(), "a refused value sets nothing");
        assertEquals(255, a.port(255).port());
        assertEquals((1 << 24) - 1, a.destinationQueuePair((1 << 24) - 1).destinationQueuePair());
    }

    @Test
    void addressVectorsNameTheFieldAndItsRange() {
        byte[] gid = new byte[16];
        assertMessage("grh.sgid_index is 0..255, not 257", () -> AddressVector.ofGid(gid, 257, 1));
        assertMessage("port_num is 0..255, not 257", () -> AddressVector.ofGid(gid, 1, 257));
        assertMessage("dlid is 0..65535, not 65536", () -> AddressVector.ofLid(65536, 1));
        assertMessage("grh.flow_label is 0..1048575", () -> AddressVector.ofGid(gid, 0, 1).withFlowLabel(1 << 20));
        assertMessage("sl is 0..15, not 16", () -> AddressVector.ofLid(1, 1).withServiceLevel(16));
        assertMessage("grh.hop_limit is 0..255", () -> AddressVector.ofGid(gid, 0, 1).withHopLimit(256));
        assertMessage("grh.traffic_class is 0..255", () -> AddressVector.ofGid(gid, 0, 1).withTrafficClass(-1));
        assertMessage("static_rate is 0..255", () -> AddressVector.ofGid(gid, 0, 1).withStaticRate(300));
        assertMessage("src_path_bits is 0..127", () -> AddressVector.ofLid(1, 1).withSourcePathBits(128));
        AddressVector path = AddressVector.ofGid(gid, 3, 1).withServiceLevel(5).withTrafficClass(106).withFlowLabel(9);
        assertEquals(5, path.serviceLevel());
        assertEquals(106, path.trafficClass());
        assertEquals(9, path.flowLabel());
        assertEquals(64, path.hopLimit(), "the other fields as they were");
        assertEquals(3, path.sourceGidIndex());
        assertEquals(255, AddressVector.ofGid(gid, 255, 255).sourceGidIndex());
    }

    @Test
    void aUdDestinationsQueuePairNumberHas24Bits() {
        try (SendWorkRequests sends = new SendWorkRequests(1, 0)) {
            sends.send(1);
            assertMessage("remote_qpn is 0..16777215, not 16777216", () -> sends.destination(null, 1 << 24, 0));
        }
    }

    @Test
    void aScatterGatherLengthIsAUint32() {
        try (SendWorkRequests sends = new SendWorkRequests(1, 2);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1)) {
            sends.send(1).gatherUnchecked(0, 0xFFFF_FFFFL, 0);
            assertMessage("ibv_sge.length is 0..4294967295, not 4294967296",
                    () -> sends.gatherUnchecked(0, 1L << 32, 0));
            assertMessage("ibv_sge.length is 0..4294967295, not -1", () -> receives.add(1).scatterUnchecked(0, -1, 0));
        }
    }

    private static void assertMessage(String expected, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        if (!e.getMessage().contains(expected)) {
            throw new AssertionError("expected \"" + expected + "\" in \"" + e.getMessage() + "\"");
        }
    }
}
