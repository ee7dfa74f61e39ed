package io.rdma4j.bindings.shim;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NativeLibrariesTest {

    @Test
    void theInstalledRdmaCoreLibrariesLoad() {
        assertDoesNotThrow(NativeLibraries::require);
    }

    @Test
    void aMissingLibraryNamesThePackageToInstall() {
        UnsatisfiedLinkError error = assertThrows(UnsatisfiedLinkError.class,
                () -> NativeLibraries.check("libibverbs-missing.so.9", "libibverbs1 ibverbs-providers"));
        assertTrue(error.getMessage().contains("libibverbs-missing.so.9"), error.getMessage());
        assertTrue(error.getMessage().contains("apt-get install libibverbs1 ibverbs-providers"), error.getMessage());
        assertInstanceOf(IllegalArgumentException.class, error.getCause());
    }

    /** What the generated RdmaCore loads through: an Error, so a class initializer passes it on unwrapped. */
    @Test
    void theGeneratedBindingsLoadThroughACheckThatNamesThePackage() {
        UnsatisfiedLinkError error = assertThrows(UnsatisfiedLinkError.class,
                () -> NativeLibraries.lookup("libibverbs-missing.so.9", java.lang.foreign.Arena.ofAuto()));
        assertTrue(error.getMessage().contains("apt-get install libibverbs1 ibverbs-providers"), error.getMessage());
        assertDoesNotThrow(() -> NativeLibraries.lookup(NativeLibraries.RDMA_CM_SONAME,
                java.lang.foreign.Arena.ofAuto()));
    }
}
