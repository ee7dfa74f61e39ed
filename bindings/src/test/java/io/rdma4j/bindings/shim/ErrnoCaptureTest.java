package io.rdma4j.bindings.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rdma4j.bindings.verbs.RdmaCore;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * errno is captured by the downcall itself, from a real libibverbs verb that fails on a host without the kernel's
 * uverbs ABI (this build machine; the lab guest has one, and there the device tests cover success).
 */
class ErrnoCaptureTest {

    @BeforeAll
    static void hostHasNoRdmaKernelStack() {
        NativeLibraries.require();
        assumeFalse(Files.exists(Path.of("/sys/class/infiniband_verbs/abi_version")),
                "SKIPPED: this host has a kernel RDMA stack, so ibv_get_device_list does not fail here");
    }

    @Test
    void ibvGetDeviceListFailsWithEnosysAndTheCallCapturesIt() {
        MemorySegment state = Errno.state();
        Errno.set(state, 0);
        MemorySegment list = ExportedVerbs.ibv_get_device_list(state, MemorySegment.NULL);
        assertEquals(0, list.address(), "ibv_get_device_list must fail without /sys/class/infiniband_verbs");
        assertEquals(RdmaCore.ENOSYS(), Errno.get(state));
        assertEquals(RdmaCore.ENOSYS(), Errno.last(), "the calling thread's state is the one that was passed");
    }

    @Test
    void eachThreadHasItsOwnState() throws InterruptedException {
        Errno.set(Errno.state(), 0);
        int[] seenThere = new int[1];
        Thread other = Thread.ofVirtual().start(() -> {
            ExportedVerbs.ibv_get_device_list(Errno.state(), MemorySegment.NULL);
            seenThere[0] = Errno.last();
        });
        other.join();
        assertEquals(RdmaCore.ENOSYS(), seenThere[0]);
        assertEquals(0, Errno.last(), "another thread's failure must not show up in this thread's errno");
    }
}
