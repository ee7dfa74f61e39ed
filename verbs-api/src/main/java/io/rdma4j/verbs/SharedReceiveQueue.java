package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.ContextOps;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_srq;
import io.rdma4j.bindings.verbs.ibv_srq_attr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A shared receive queue ({@code struct ibv_srq}, from {@code ibv_create_srq}; closed by {@code ibv_destroy_srq}):
 * receive buffers that several queue pairs consume, so that a server need not post receives per connection.
 *
 * <p>Lifetime: keeps its protection domain alive; the queue pairs that use it must be closed first (closing a
 * protection domain or context does so). Thread-safety: posting from several threads is safe; a loop that posts
 * from one thread can do so through a {@link #confinedPoster()}, which saves each post its pin.
 */
public final class SharedReceiveQueue extends NativeObject {

    private final ProtectionDomain protectionDomain;
    private final MemorySegment postFunction;

    SharedReceiveQueue(ProtectionDomain pd, MemorySegment srq) {
        super(pd, srq, ibv_srq.layout().byteSize(), Rank.SHARED_RECEIVE_QUEUE, "ibv_destroy_srq",
                RdmaCore::ibv_destroy_srq);
        findable(); // async events name it by address
        this.protectionDomain = pd;
        this.postFunction = pd.context().withPinned(ContextOps::postSrqRecvFunction);
    }

    /** The protection domain it belongs to. */
    public ProtectionDomain protectionDomain() {
        return protectionDomain;
    }

    /**
     * A poster for this thread: its posts skip the pin that {@link #postReceive} takes per call (two atomic
     * additions), and it keeps this queue from closing until it is closed itself; see
     * {@link SharedReceiveQueuePoster}.
     *
     * @throws IllegalStateException if this queue is closed
     */
    public SharedReceiveQueuePoster confinedPoster() {
        return new SharedReceiveQueuePoster(this);
    }

    /**
     * Posts the batch's receive requests ({@code ibv_post_srq_recv}). Allocates nothing.
     *
     * @throws PostException         if the provider rejected a request (its index is in the exception)
     * @throws IllegalStateException if this queue or the batch is closed, or a request names a closed region
     */
    public void postReceive(ReceiveWorkRequests requests) {
        long srq = pinned().address();
        try {
            postReceive(srq, requests);
        } finally {
            unpin();
        }
    }

    /** {@link #postReceive(ReceiveWorkRequests)} on the address of a pin already held (by that call or a poster). */
    void postReceive(long srq, ReceiveWorkRequests requests) {
        requests.post(postFunction, srq, "ibv_post_srq_recv");
    }

    /**
     * Arms the limit event ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}): when fewer than {@code limit}
     * receives remain, the context reports {@link AsyncEventType#SRQ_LIMIT_REACHED} once.
     */
    public void armLimit(int limit) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_srq_attr.layout());
            ibv_srq_attr.srq_limit(attr, limit);
            int rc = withPinned(srq -> RdmaCore.ibv_modify_srq(srq, attr, RdmaCore.IBV_SRQ_LIMIT()));
            if (rc != 0) {
                throw VerbException.of("ibv_modify_srq", rc, "limit " + limit);
            }
        }
    }

    /**
     * A shared receive queue's size and armed limit ({@code struct ibv_srq_attr}).
     *
     * @param maxWorkRequests  receive requests it holds
     * @param maxScatterGather scatter entries per request
     * @param limit            the armed limit, 0 when none is armed
     */
    public record Attributes(int maxWorkRequests, int maxScatterGather, int limit) {
    }

    /** The queue's size and armed limit ({@code ibv_query_srq}). */
    public Attributes query() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_srq_attr.layout());
            int rc = withPinned(srq -> RdmaCore.ibv_query_srq(srq, attr));
            if (rc != 0) {
                throw VerbException.of("ibv_query_srq", rc);
            }
            return new Attributes(ibv_srq_attr.max_wr(attr), ibv_srq_attr.max_sge(attr), ibv_srq_attr.srq_limit(attr));
        }
    }
}
