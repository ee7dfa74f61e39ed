package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.rdma_conn_param;
import io.rdma4j.verbs.RdmaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Unit tests: no device, no rdma_cm kernel module. */
class EventChannelUnitTest {

    @Test
    void withoutTheKernelModuleCreatingAChannelFailsWithTheVerbAndItsErrno() {
        assumeFalse(Files.exists(Path.of("/dev/infiniband/rdma_cm")), "SKIPPED: this host has rdma_ucm loaded");
        RdmaException e = assertThrows(RdmaException.class, EventChannel::create);
        assertEquals("rdma_create_event_channel", e.verb());
        assertTrue(Set.of(RdmaCore.ENODEV(), RdmaCore.ENOENT()).contains(e.errno()), e.getMessage());
        assertTrue(e.getMessage().contains("rdma_ucm"), e.getMessage());
    }

    @Test
    void connectionParametersFillTheCStruct() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment param = arena.allocate(rdma_conn_param.layout());
            ConnectionParameters.forQueuePair(0x1234).writeTo(param);
            assertEquals(0x1234, rdma_conn_param.qp_num(param));
            assertEquals(1, rdma_conn_param.responder_resources(param));
            assertEquals(1, rdma_conn_param.initiator_depth(param));
            assertEquals(7, rdma_conn_param.retry_count(param));
            assertEquals(7, rdma_conn_param.rnr_retry_count(param));
        }
    }

    @Test
    void eventTypesMapToTheirCValues() {
        for (CmEventType type : CmEventType.values()) {
            assertEquals(type, CmEventType.of(type.value()));
        }
        assertEquals(CmEventType.ESTABLISHED, CmEventType.of(RdmaCore.RDMA_CM_EVENT_ESTABLISHED()));
        assertThrows(IllegalArgumentException.class, () -> CmEventType.of(999));
    }
}
