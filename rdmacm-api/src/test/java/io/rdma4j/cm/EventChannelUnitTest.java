package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.verbs.VerbException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Unit tests: no device, no rdma_cm kernel module. */
class EventChannelUnitTest {

    @Test
    void withoutTheKernelModuleCreatingAChannelFailsWithTheVerbAndItsErrno() {
        assumeFalse(Files.exists(Path.of("/dev/infiniband/rdma_cm")), "SKIPPED: this host has rdma_ucm loaded");
        VerbException e = assertThrows(VerbException.class, EventChannel::create);
        assertEquals("rdma_create_event_channel", e.verb());
        assertTrue(Set.of(RdmaCore.ENODEV(), RdmaCore.ENOENT()).contains(e.errno()), e.getMessage());
        assertTrue(e.getMessage().contains("rdma_ucm"), e.getMessage());
    }

    @Test
    void eventTypesMapToTheirCValuesAndUnknownOnesToUnknown() {
        for (CmEventType type : CmEventType.values()) {
            if (type != CmEventType.UNKNOWN) {
                assertEquals(type, CmEventType.of(type.value()));
            }
        }
        assertEquals(CmEventType.ESTABLISHED, CmEventType.of(RdmaCore.RDMA_CM_EVENT_ESTABLISHED()));
        assertEquals(CmEventType.UNKNOWN, CmEventType.of(999));
        assertEquals(CmEventType.UNKNOWN, CmEventType.of(-1));
    }
}
