package io.rdma4j.bindings.shim;

import io.rdma4j.bindings.verbs.RdmaCore;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/**
 * Checks that rdma-core's shared libraries can be loaded before any generated class touches them.
 *
 * <p>The generated {@code RdmaCore} class opens {@code libibverbs.so.1} and {@code librdmacm.so.1} in its static
 * initializer, through {@link #lookup} ({@code bindings/regenerate} points jextract's output there). Whichever
 * class touches it first (an entry point, or a user's {@code static final EnumSet} of rdma4j constants), a missing
 * library is a clear {@link UnsatisfiedLinkError} naming the Debian/Ubuntu package: being an {@link Error}, it is
 * not wrapped into an {@link ExceptionInInitializerError}. Entry points also call {@link #require()} first.
 *
 * <p>Thread-safe; the successful check is cached.
 */
public final class NativeLibraries {

    /** The library jextract's output binds, by soname (the unversioned name exists only with the -dev package). */
    public static final String VERBS_SONAME = "libibverbs.so.1";
    /** The connection manager library, by soname. */
    public static final String RDMA_CM_SONAME = "librdmacm.so.1";

    private static volatile boolean available;
    /** {@code ibv_is_fork_initialized()} once {@link #require()} has set fork protection up. */
    private static volatile int forkStatus;

    private NativeLibraries() {
    }

    /**
     * Ensures both rdma-core libraries load, and sets up fork protection before the first verb: where the kernel does
     * not copy registered pages for a child process ({@code ibv_is_fork_initialized()} says
     * {@code IBV_FORK_DISABLED}: kernels before 5.13), calls {@code ibv_fork_init()}, so that libibverbs keeps
     * registered memory out of children ({@code MADV_DONTFORK}) and a {@code fork()} cannot leave the device writing
     * to pages the parent no longer sees. {@code -Drdma4j.forkInit=false} leaves it off (rdma-core's own
     * {@code RDMAV_FORK_SAFE} still applies).
     *
     * @throws UnsatisfiedLinkError naming the missing library and the packages that provide it
     */
    public static void require() {
        if (available) {
            return;
        }
        synchronized (NativeLibraries.class) {
            if (available) {
                return;
            }
            check(VERBS_SONAME, "libibverbs1 ibverbs-providers");
            check(RDMA_CM_SONAME, "librdmacm1");
            forkStatus = protectForks();
            available = true;
        }
    }

    /**
     * Calls {@code ibv_fork_init()} unless the kernel protects registered pages itself or it is turned off; returns
     * the status. rdma-core before version 35 has no {@code ibv_is_fork_initialized}: there it asks nothing, and
     * {@code ibv_fork_init}'s result tells (a library without either, such as a test stub, stays unprotected).
     */
    private static int protectForks() {
        SymbolLookup verbs = lookup(VERBS_SONAME, Arena.global());
        boolean canAsk = verbs.find("ibv_is_fork_initialized").isPresent();
        int status = canAsk ? RdmaCore.ibv_is_fork_initialized() : RdmaCore.IBV_FORK_DISABLED();
        if (status == RdmaCore.IBV_FORK_DISABLED() && !"false".equals(System.getProperty("rdma4j.forkInit"))
                && verbs.find("ibv_fork_init").isPresent()) {
            int rc = RdmaCore.ibv_fork_init();
            status = canAsk ? RdmaCore.ibv_is_fork_initialized()
                    : rc == 0 ? RdmaCore.IBV_FORK_ENABLED() : RdmaCore.IBV_FORK_DISABLED();
        }
        return status;
    }

    /**
     * {@code ibv_is_fork_initialized()} as {@link #require()} left it: {@code IBV_FORK_UNNEEDED} (the kernel copies
     * registered pages for a child), {@code IBV_FORK_ENABLED} ({@code ibv_fork_init} keeps them out of children) or
     * {@code IBV_FORK_DISABLED} (neither: turned off, or {@code ibv_fork_init} failed).
     */
    public static int forkStatus() {
        require();
        return forkStatus;
    }

    /**
     * Loads {@code soname} once to see whether it is there.
     *
     * @param soname   the library's soname
     * @param packages the Debian/Ubuntu packages to suggest when it is missing
     * @throws UnsatisfiedLinkError whose message says what to install
     */
    static void check(String soname, String packages) {
        // A shared arena: the probe handle is closed again at once, the real load happens in RdmaCore.
        try (Arena probe = Arena.ofShared()) {
            load(soname, packages, probe);
        }
    }

    /**
     * {@link SymbolLookup#libraryLookup(String, Arena)}, with a missing library reported as an
     * {@link UnsatisfiedLinkError} that says what to install. The generated {@code RdmaCore} loads through this.
     */
    public static SymbolLookup lookup(String soname, Arena arena) {
        return load(soname, soname.equals(RDMA_CM_SONAME) ? "librdmacm1" : "libibverbs1 ibverbs-providers", arena);
    }

    private static SymbolLookup load(String soname, String packages, Arena arena) {
        try {
            return SymbolLookup.libraryLookup(soname, arena);
        } catch (IllegalArgumentException notFound) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError(
                    "rdma4j needs the rdma-core user-space library " + soname + ", which could not be loaded. Install it:"
                            + " apt-get install " + packages + " (Debian/Ubuntu) or dnf install rdma-core libibverbs"
                            + " librdmacm (Fedora/RHEL).");
            error.initCause(notFound);
            throw error;
        }
    }
}
