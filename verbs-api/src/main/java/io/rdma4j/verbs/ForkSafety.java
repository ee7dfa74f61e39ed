package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/**
 * What protects registered memory when the process forks (a {@code ProcessBuilder} child, with
 * {@code jdk.lang.Process.launchMechanism=FORK} or a native library's {@code fork()}), as
 * {@code ibv_is_fork_initialized()} reports it once rdma4j has set it up ({@link Device#forkSafety()}): rdma4j calls
 * {@code ibv_fork_init()} before its first verb where the kernel does not protect registered pages itself.
 */
public enum ForkSafety {
    /**
     * {@code IBV_FORK_UNNEEDED}: the kernel (5.13 and later) copies pinned pages for a child at fork, so the parent's
     * registered memory stays the memory the device uses, and the child gets its own copy.
     */
    KERNEL_COPIES_REGISTERED_PAGES,
    /**
     * {@code IBV_FORK_ENABLED}: {@code ibv_fork_init()} made libibverbs mark registered memory {@code MADV_DONTFORK}:
     * a child does not have those pages (touching them there faults), and the parent's stay the device's.
     */
    REGISTERED_PAGES_NOT_INHERITED,
    /**
     * {@code IBV_FORK_DISABLED}: no protection ({@code -Drdma4j.forkInit=false}, or {@code ibv_fork_init()} failed):
     * after a fork, the parent writing to registered memory may leave the device using a page the parent no longer
     * sees. Do not fork while memory is registered.
     */
    UNPROTECTED;

    static ForkSafety of(int status) {
        if (status == RdmaCore.IBV_FORK_UNNEEDED()) {
            return KERNEL_COPIES_REGISTERED_PAGES;
        }
        return status == RdmaCore.IBV_FORK_ENABLED() ? REGISTERED_PAGES_NOT_INHERITED : UNPROTECTED;
    }
}
