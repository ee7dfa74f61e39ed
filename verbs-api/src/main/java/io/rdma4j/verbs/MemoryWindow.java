package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.ContextOps;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_mw;
import io.rdma4j.bindings.verbs.ibv_mw_bind;
import io.rdma4j.bindings.verbs.ibv_mw_bind_info;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * A memory window ({@code struct ibv_mw}, from {@code ibv_alloc_mw}; closed by {@code ibv_dealloc_mw}): a remote
 * key for a sub-range of a memory region, granted and revoked cheaply. Type 1 windows are bound with
 * {@link #bind} ({@code ibv_bind_mw}); type 2 windows with a {@link SendWorkRequests#bindMemoryWindow} work request
 * and revoked with {@link SendWorkRequests#localInvalidate} or a peer's send with invalidate.
 *
 * <p>Lifetime: keeps its protection domain alive. Thread-safety: {@link #rkey()} may be read from any thread;
 * binds must not race.
 */
public final class MemoryWindow extends NativeObject {

    /** The window types ({@code enum ibv_mw_type}). */
    public enum Type implements CValue {
        /** {@code IBV_MW_TYPE_1}: bound with {@code ibv_bind_mw}, tied to the PD. */
        TYPE_1(RdmaCore.IBV_MW_TYPE_1()),
        /** {@code IBV_MW_TYPE_2}: bound with a work request, tied to a QP. */
        TYPE_2(RdmaCore.IBV_MW_TYPE_2());

        private final int value;

        Type(int value) {
            this.value = value;
        }

        @Override
        public int value() {
            return value;
        }
    }

    private final Type type;

    MemoryWindow(ProtectionDomain pd, MemorySegment mw, Type type) {
        super(pd, mw, ibv_mw.layout().byteSize(), Rank.WINDOW_OR_ADDRESS_HANDLE, "ibv_dealloc_mw",
                ContextOps::ibv_dealloc_mw);
        this.type = type;
    }

    /** Type 1 or 2. */
    public Type type() {
        return type;
    }

    /** The current remote key (changes with every bind). */
    public int rkey() {
        return withPinned(ibv_mw::rkey);
    }

    /** The key the next bind should use: {@code ibv_inc_rkey(rkey)}, which keeps the index and bumps the tag. */
    public int nextRkey() {
        int rkey = rkey();
        return (rkey & 0xffffff00) | ((rkey + 1) & 0xff);
    }

    /**
     * Binds this type 1 window to {@code length} bytes of {@code region} from {@code offset} ({@code ibv_bind_mw}),
     * through {@code qp}'s send queue; the bind completes on its send CQ with {@code workRequestId}.
     *
     * @throws IllegalStateException if this is a type 2 window
     * @throws VerbException         if the verb fails
     */
    public void bind(QueuePair qp, long workRequestId, MemoryRegion region, long offset, long length,
                     Set<Access> access, boolean signaled) {
        if (type != Type.TYPE_1) {
            throw new IllegalStateException("ibv_bind_mw binds type 1 windows; bind type 2 with a work request");
        }
        long address = region.addressOf("ibv_mw_bind_info", offset, length);
        // The provider reads the window's, the queue pair's and the region's structs during the call.
        MemorySegment[] pointers = pinAll(this, qp, region);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bind = arena.allocate(ibv_mw_bind.layout());
            ibv_mw_bind.wr_id(bind, workRequestId);
            ibv_mw_bind.send_flags(bind, signaled ? RdmaCore.IBV_SEND_SIGNALED() : 0);
            MemorySegment info = ibv_mw_bind.bind_info(bind);
            ibv_mw_bind_info.mr(info, pointers[2]);
            ibv_mw_bind_info.addr(info, address);
            ibv_mw_bind_info.length(info, length);
            ibv_mw_bind_info.mw_access_flags(info, Access.mask(access));
            int rc = ContextOps.ibv_bind_mw(pointers[1], pointers[0], bind);
            if (rc != 0) {
                throw VerbException.of("ibv_bind_mw", rc, describe());
            }
        } finally {
            unpinAll(this, qp, region);
        }
    }
}
