package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_cq;
import java.lang.foreign.MemorySegment;

/**
 * A completion queue ({@code struct ibv_cq}, from {@code ibv_create_cq}; closed by {@code ibv_destroy_cq}).
 *
 * <p>Lifetime: keeps its {@link Context} alive; closed before the context. Thread-safety: all methods may be
 * called from any thread.
 */
public final class CompletionQueue extends VerbsObject {

    private final Context context;
    private final int capacity;

    CompletionQueue(Context context, MemorySegment cq) {
        super(context, cq, ibv_cq.layout().byteSize());
        this.context = context;
        this.capacity = ibv_cq.cqe(handle());
    }

    /** The context it belongs to. */
    public Context context() {
        return context;
    }

    /** How many completions it holds: at least what was asked for, as the provider rounded it. */
    public int capacity() {
        return capacity;
    }

    @Override
    int closeRank() {
        return 2;
    }

    @Override
    String destroyVerb() {
        return "ibv_destroy_cq";
    }

    @Override
    int destroy(MemorySegment pointer) {
        return RdmaCore.ibv_destroy_cq(pointer);
    }
}
