package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_ah;
import java.lang.foreign.MemorySegment;

/**
 * An address handle ({@code struct ibv_ah}, from {@code ibv_create_ah}; closed by {@code ibv_destroy_ah}): the
 * destination of UD sends ({@link SendWorkRequests#destination}).
 *
 * <p>Lifetime: keeps its protection domain alive; must stay open until sends that use it have completed.
 * Thread-safety: immutable; usable from any thread.
 */
public final class AddressHandle extends NativeObject {

    private final AddressVector address;

    AddressHandle(ProtectionDomain pd, MemorySegment ah, AddressVector address) {
        super(pd, ah, ibv_ah.layout().byteSize(), Rank.WINDOW_OR_ADDRESS_HANDLE, "ibv_destroy_ah",
                RdmaCore::ibv_destroy_ah);
        this.address = address;
    }

    /** Where it points. */
    public AddressVector address() {
        return address;
    }
}
