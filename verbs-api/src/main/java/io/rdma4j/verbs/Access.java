package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;
import java.util.Set;

/**
 * Access rights of a memory region or window (C: {@code enum ibv_access_flags}). Remote write and remote atomic
 * need {@link #LOCAL_WRITE} too, as in C.
 */
public enum Access implements CValue {
    /** {@code IBV_ACCESS_LOCAL_WRITE}: the device may write (receives, RDMA READ responses, atomics' results). */
    LOCAL_WRITE(RdmaCore.IBV_ACCESS_LOCAL_WRITE()),
    /** {@code IBV_ACCESS_REMOTE_WRITE}. */
    REMOTE_WRITE(RdmaCore.IBV_ACCESS_REMOTE_WRITE()),
    /** {@code IBV_ACCESS_REMOTE_READ}. */
    REMOTE_READ(RdmaCore.IBV_ACCESS_REMOTE_READ()),
    /** {@code IBV_ACCESS_REMOTE_ATOMIC}. */
    REMOTE_ATOMIC(RdmaCore.IBV_ACCESS_REMOTE_ATOMIC()),
    /** {@code IBV_ACCESS_MW_BIND}: memory windows may be bound to the region. */
    MW_BIND(RdmaCore.IBV_ACCESS_MW_BIND()),
    /** {@code IBV_ACCESS_ZERO_BASED}: remote addresses count from 0, not from the virtual address. */
    ZERO_BASED(RdmaCore.IBV_ACCESS_ZERO_BASED()),
    /** {@code IBV_ACCESS_ON_DEMAND}: on-demand paging, where the device reports ODP. */
    ON_DEMAND(RdmaCore.IBV_ACCESS_ON_DEMAND()),
    /** {@code IBV_ACCESS_HUGETLB}: the memory is backed by huge pages. */
    HUGETLB(RdmaCore.IBV_ACCESS_HUGETLB()),
    /** {@code IBV_ACCESS_RELAXED_ORDERING}: optional; ignored by devices without it. */
    RELAXED_ORDERING(RdmaCore.IBV_ACCESS_RELAXED_ORDERING());

    private final int value;

    Access(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }

    /** The flags set in a C bit mask (bits without a constant here are dropped). */
    static Set<Access> fromMask(int mask) {
        java.util.EnumSet<Access> set = java.util.EnumSet.noneOf(Access.class);
        for (Access a : values()) {
            if ((mask & a.value) != 0) {
                set.add(a);
            }
        }
        return set;
    }

    /** The C bit mask of {@code access}. */
    static int mask(Set<Access> access) {
        return CValue.mask(access);
    }
}
