package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.bindings.shim.NativeLibraries;
import io.rdma4j.bindings.verbs.RdmaCore;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Unit tests: no device needed. */
class RdmaExceptionTest {

    @BeforeAll
    static void libraries() {
        NativeLibraries.require();
    }

    @Test
    void theMessageNamesVerbErrnoAndStrerror() {
        VerbException e = VerbException.of("ibv_modify_qp", RdmaCore.EINVAL(), "QP 0x12");
        assertEquals("ibv_modify_qp", e.verb());
        assertEquals(RdmaCore.EINVAL(), e.errno());
        assertEquals("ibv_modify_qp failed: errno 22 (Invalid argument); QP 0x12", e.getMessage());
        assertFalse(e instanceof UnsupportedVerbException);
    }

    /** Which requests of a rejected batch were posted: none for #0, the ones before it otherwise. */
    @Test
    void aRejectedPostSaysWhatWasPosted() {
        assertTrue(new PostException("ibv_post_send", 12, 0).getMessage()
                .endsWith("work request #0 of the batch was rejected; none was posted"));
        assertTrue(new PostException("ibv_post_send", -12, 3).getMessage()
                .endsWith("work request #3 of the batch was rejected; the 3 before it were posted"));
        assertTrue(new PostException("ibv_post_recv", 22, -1).getMessage()
                .endsWith("the provider did not say which request it rejected: those before it were posted"));
        assertEquals(12, new PostException("ibv_post_send", -12, 3).errno(), "siw's negated errno made positive");
    }

    @Test
    void unsupportedFeaturesHaveTheirOwnType() {
        assertInstanceOf(UnsupportedVerbException.class, VerbException.of("ibv_alloc_mw", RdmaCore.EOPNOTSUPP()));
        assertInstanceOf(UnsupportedVerbException.class, VerbException.of("ibv_create_cq_ex", RdmaCore.ENOSYS()));
    }

    @Test
    void accessFlagsMapToTheirCBits() {
        assertEquals(0, Access.mask(Set.of()));
        assertEquals(RdmaCore.IBV_ACCESS_LOCAL_WRITE() | RdmaCore.IBV_ACCESS_REMOTE_READ(),
                Access.mask(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ)));
        for (Access a : Access.values()) {
            assertEquals(1, Integer.bitCount(a.value()), a + " is one bit");
        }
    }

    @Test
    void cValuesMapBackAndUnknownValuesAreRejected() {
        assertEquals(Mtu.MTU_1024, CValue.of(Mtu.class, RdmaCore.IBV_MTU_1024()));
        assertEquals(Transport.IWARP, CValue.of(Transport.class, RdmaCore.IBV_TRANSPORT_IWARP()));
        assertThrows(IllegalArgumentException.class, () -> CValue.of(PortState.class, 99));
    }

    /** Values from a newer rdma-core on the poll and event paths map to UNKNOWN: never an exception there. */
    @Test
    void unknownCompletionAndEventValuesAreUnknownNotAnException() {
        assertEquals(WorkCompletionStatus.RETRY_EXCEEDED_ERROR, WorkCompletionStatus.fromC(RdmaCore.IBV_WC_RETRY_EXC_ERR()));
        assertEquals(WorkCompletionStatus.UNKNOWN, WorkCompletionStatus.fromC(999));
        assertEquals(WorkCompletionStatus.UNKNOWN, WorkCompletionStatus.fromC(-2));
        assertEquals(WorkCompletionOpcode.RECEIVE, WorkCompletionOpcode.fromC(RdmaCore.IBV_WC_RECV()));
        assertEquals(WorkCompletionOpcode.UNKNOWN, WorkCompletionOpcode.fromC(100), "a hole in the C values");
        assertEquals(WorkCompletionOpcode.UNKNOWN, WorkCompletionOpcode.fromC(4096));
        assertEquals(AsyncEventType.UNKNOWN, CValue.of(AsyncEventType.class, 4242, AsyncEventType.UNKNOWN));
        assertEquals(AsyncEventType.Subject.UNKNOWN, AsyncEventType.UNKNOWN.subject());
    }

    /** rdma-core 35+ says whether the kernel protects registered pages at fork; else rdma4j has called ibv_fork_init. */
    @Test
    void forkProtectionIsSetUpBeforeTheFirstVerb() {
        assertTrue(Device.forkSafety() != ForkSafety.UNPROTECTED, "fork safety " + Device.forkSafety());
    }

    @Test
    void aHostWithoutTheKernelStackListsNoDevices() {
        org.junit.jupiter.api.Assumptions.assumeFalse(
                java.nio.file.Files.exists(java.nio.file.Path.of("/sys/class/infiniband_verbs")),
                "SKIPPED: this host has a kernel RDMA stack");
        assertEquals(java.util.List.of(), Device.list());
    }
}
