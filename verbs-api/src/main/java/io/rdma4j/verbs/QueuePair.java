package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.Rank;
import io.rdma4j.bindings.shim.ContextOps;
import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.bindings.shim.VerbsContext;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_qp;
import io.rdma4j.bindings.verbs.ibv_qp_ex;
import io.rdma4j.bindings.verbs.ibv_qp_attr;
import io.rdma4j.bindings.verbs.ibv_qp_init_attr;
import io.rdma4j.bindings.verbs.ibv_qp_init_attr_ex;
import io.rdma4j.bindings.verbs.ibv_pd;
import io.rdma4j.verbs.internal.NativeResource;
import io.rdma4j.verbs.internal.QueuePairFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A queue pair ({@code struct ibv_qp}, from {@code ibv_create_qp}; closed by {@code ibv_destroy_qp}): a send and a
 * receive work queue, connected to one peer (RC, UC) or addressing many (UD).
 *
 * <p>Create one with {@link ProtectionDomain#queuePair(QueuePairType)}. It starts in {@link QueuePairState#RESET};
 * move it through {@link #initialize}, {@link #readyToReceive} and {@link #readyToSend} (or let rdma_cm do it), then
 * post with {@link #postSend(SendWorkRequests)} and {@link #postReceive(ReceiveWorkRequests)}. {@link #moveToError()}
 * flushes all posted work; {@link #reset()} makes it reusable.
 *
 * <p>Lifetime: keeps its protection domain alive (and so its context); the completion queues and shared receive
 * queue it uses refuse to close while it exists ({@link IllegalStateException} naming it). Closing the protection
 * domain or context closes it first. Thread-safety: posting
 * to the send queue and to the receive queue from different threads is safe, and so is posting from several
 * threads (libibverbs serializes per queue); {@link #modify} must not race with posts. A loop that posts from one
 * thread can do so through a {@link #confinedPoster()}, which saves each post the pin that guards it against a close
 * on another thread.
 */
public final class QueuePair extends NativeObject {

    private final ProtectionDomain protectionDomain;
    private final QueuePairType type;
    private final int number;
    private final QueuePairCapabilities capabilities;
    private final MemorySegment postSendFunction;
    private final MemorySegment postReceiveFunction;
    private final CompletionQueue sendCompletionQueue;
    private final CompletionQueue receiveCompletionQueue;
    /** Null for a queue pair with a receive queue of its own. */
    private final SharedReceiveQueue sharedReceiveQueue;
    private final boolean iwarp;
    private final ExtendedSend extendedSend;
    /** The state of the last successful modify (RESET at creation); the kernel may have moved on since. */
    private volatile QueuePairState lastState = QueuePairState.RESET;

    /** libibverbs' own verbs: {@code ibv_create_qp}, {@code ibv_create_qp_ex}, {@code ibv_destroy_qp}. */
    private static final QueuePairFactory DIRECT = new QueuePairFactory() {
        @Override
        public MemorySegment create(MemorySegment errnoState, MemorySegment pd, MemorySegment init, boolean extended) {
            return extended ? VerbsContext.ibv_create_qp_ex(errnoState, ibv_pd.context(pd), init)
                    : ExportedVerbs.ibv_create_qp(errnoState, pd, init);
        }

        @Override
        public String verb(boolean extended) {
            return extended ? "ibv_create_qp_ex" : "ibv_create_qp";
        }

        @Override
        public String destroyVerb() {
            return "ibv_destroy_qp";
        }

        @Override
        public NativeResource.Destroyer destroyer(MemorySegment qp) {
            return RdmaCore::ibv_destroy_qp;
        }
    };

    /**
     * Wraps the C queue pair that {@code builder}'s create made; its protection domain, completion queues and shared
     * receive queue are pinned by that create until it returns (so the context, under the domain, stays open too).
     */
    private QueuePair(Builder builder, MemorySegment qp, QueuePairCapabilities granted, boolean extended,
                      QueuePairFactory factory) {
        // Read before the queue pair joins its domain: from then on a close of the domain on another thread could free
        // the struct, and reading it would need a pin (two atomic additions per create).
        MemorySegment struct = Pointers.sized(qp, ibv_qp.layout().byteSize());
        this.number = ibv_qp.qp_num(struct);
        // qp->context is the domain's context, open while the create pins the domain.
        MemorySegment context = ibv_qp.context(struct);
        this.postSendFunction = ContextOps.postSendFunction(context);
        this.postReceiveFunction = ContextOps.postRecvFunction(context);
        this.protectionDomain = builder.pd;
        this.sendCompletionQueue = builder.sendCompletionQueue;
        this.receiveCompletionQueue = builder.receiveCompletionQueue;
        this.sharedReceiveQueue = builder.sharedReceiveQueue;
        this.iwarp = builder.pd.context().device().transport() == Transport.IWARP;
        this.type = builder.type;
        this.capabilities = granted;
        // An extended QP's handle spans ibv_qp_ex (which begins with ibv_qp), for ExtendedSend's calls.
        super(builder.pd, qp, extended ? ibv_qp_ex.layout().byteSize() : ibv_qp.layout().byteSize(),
                Rank.QUEUE_PAIR, factory.destroyVerb(), factory.destroyer(qp));
        findable(); // async events name it by address
        if (extended) {
            MemorySegment self = pinned();
            try {
                this.extendedSend = new ExtendedSend(this, self, RdmaCore.ibv_qp_to_qp_ex(self));
            } finally {
                unpin();
            }
        } else {
            this.extendedSend = null;
        }
    }

    /**
     * The extended work request API ({@code ibv_wr_*}) of a QP built with
     * {@link Builder#extendedOperations}.
     *
     * @throws IllegalStateException for a QP created without extended operations
     */
    public ExtendedSend extendedSend() {
        if (extendedSend == null) {
            throw new IllegalStateException(describe() + " was created without extended operations");
        }
        return extendedSend;
    }

    /** The protection domain it was created in. */
    public ProtectionDomain protectionDomain() {
        return protectionDomain;
    }

    /** The completion queue of its send queue ({@code send_cq}). */
    public CompletionQueue sendCompletionQueue() {
        return sendCompletionQueue;
    }

    /** The completion queue of its receives ({@code recv_cq}). */
    public CompletionQueue receiveCompletionQueue() {
        return receiveCompletionQueue;
    }

    /** The shared receive queue it takes receives from ({@code srq}), or empty if it has a receive queue of its own. */
    public Optional<SharedReceiveQueue> sharedReceiveQueue() {
        return Optional.ofNullable(sharedReceiveQueue);
    }

    /** RC, UC or UD. */
    public QueuePairType type() {
        return type;
    }

    /** The QP number peers address it by ({@code qp_num}, 24 bits). */
    public int number() {
        return number;
    }

    /** The queue sizes the provider granted at creation. */
    public QueuePairCapabilities capabilities() {
        return capabilities;
    }

    /**
     * A poster for this thread: its posts skip the pin that {@link #postSend} and {@link #postReceive} take per call
     * (two atomic additions), and it keeps this queue pair from closing until it is closed itself. For a loop that
     * posts from one thread; see {@link QueuePairPoster}.
     *
     * @throws IllegalStateException if this queue pair is closed
     */
    public QueuePairPoster confinedPoster() {
        return new QueuePairPoster(this);
    }

    /**
     * Posts the batch's send requests ({@code ibv_post_send}). Allocates nothing.
     *
     * @throws PostException            if the provider rejected a request (its index is in the exception)
     * @throws UnsupportedVerbException if the batch holds atomics and the device reports none ({@code atomic_cap})
     * @throws IllegalStateException    if this QP or the batch is closed, the batch is empty or holds more requests
     *                               than the send queue was granted, a request names a closed region, address
     *                               handle or window, or (UD) lacks a destination
     */
    public void postSend(SendWorkRequests requests) {
        long qp = pinned().address();
        try {
            postSend(qp, requests);
        } finally {
            unpin();
        }
    }

    /** {@link #postSend(SendWorkRequests)} on the address of a pin already held (by that call or a poster). */
    void postSend(long qp, SendWorkRequests requests) {
        checkDepth(requests, capabilities.maxSendWorkRequests(), "send");
        if (requests.hasAtomics()) {
            refuseAtomicsWithoutTheCapability();
        }
        if (type == QueuePairType.UNRELIABLE_DATAGRAM && !requests.everyRequestAddressed()) {
            // The provider reads the address handle of every UD request: a missing one is a NULL dereference.
            throw new IllegalStateException("a send on a UD queue pair needs a destination(...) on every request");
        }
        requests.post(postSendFunction, qp, "ibv_post_send");
    }

    /**
     * Refuses atomics before C on a device that reports none ({@code atomic_cap} NONE: siw): its provider would
     * reject them as a bare EINVAL. Reads the context's cached device attributes: one volatile read per atomic post.
     */
    private void refuseAtomicsWithoutTheCapability() {
        Context context = protectionDomain.context();
        AtomicCapability capability = context.limits().atomicCapability();
        if (capability == AtomicCapability.NONE) {
            throw new UnsupportedVerbException("ibv_post_send", RdmaCore.EOPNOTSUPP(), "the batch holds atomics"
                    + " (compare-and-swap, fetch-and-add), and " + context.device().name() + " reports atomic_cap "
                    + capability + ": it has no atomic operations; nothing was posted");
        }
    }

    /**
     * Posts the batch's receive requests ({@code ibv_post_recv}). Allocates nothing.
     *
     * @throws PostException         if the provider rejected a request
     * @throws IllegalStateException if this QP uses a shared receive queue, if it or the batch is closed, if
     *                               the batch is empty or holds more requests than the receive queue was
     *                               granted, or if a request names a closed region
     */
    public void postReceive(ReceiveWorkRequests requests) {
        long qp = pinned().address();
        try {
            postReceive(qp, requests);
        } finally {
            unpin();
        }
    }

    /** {@link #postReceive(ReceiveWorkRequests)} on the address of a pin already held (by that call or a poster). */
    void postReceive(long qp, ReceiveWorkRequests requests) {
        if (sharedReceiveQueue != null) {
            // Some providers (siw) crash when asked to post to the receive queue such a QP does not have.
            throw new IllegalStateException(describe() + " takes its receives from a shared receive queue: post there");
        }
        checkDepth(requests, capabilities.maxReceiveWorkRequests(), "receive");
        requests.post(postReceiveFunction, qp, "ibv_post_recv");
    }

    /**
     * Refuses a batch that holds more requests than the queue was granted: it can never fit, and siw accepts such a
     * post and never completes the extra requests. (Requests still outstanding from earlier posts are not counted.)
     */
    private void checkDepth(WorkRequestBatch requests, int granted, String queue) {
        if (requests.count() > granted) {
            throw new IllegalStateException("the batch holds " + requests.count() + " requests, more than the "
                    + granted + " " + queue + " requests " + describe() + " was granted");
        }
    }

    /**
     * Changes attributes and/or state ({@code ibv_modify_qp}), checked against the state machine of the
     * specification: attributes that the transition from the last state set through rdma4j requires but that were
     * not set are an {@link IllegalArgumentException} naming them, before any verb runs. A transition is only
     * judged after the verb refused it (EINVAL), against the state the provider reports, because states also
     * change outside rdma4j (rdma_cm, errors) and not every provider reports them (siw does not).
     *
     * @throws IllegalStateException    if the QP's current state cannot move to the requested one
     * @throws IllegalArgumentException if the transition needs attributes that were not set
     * @throws VerbException            if the verb fails otherwise (e.g. for a value the device rejects)
     */
    public void modify(QueuePairAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        QueuePairState to = attributes.state();
        QueuePairState from = lastState;
        if (to != null && QueuePairTransitions.allowed(from, to)) {
            // Checked against the state rdma4j last set: providers may not check (siw accepts INIT without access
            // flags), and some cannot report the state.
            int missing = QueuePairTransitions.required(type, from, to) & ~attributes.mask();
            if (iwarp) {
                // iWARP has no P_Keys: rdma_cm's INIT attributes for it (rdma_init_qp_attr) carry none.
                missing &= ~RdmaCore.IBV_QP_PKEY_INDEX();
            }
            if (missing != 0) {
                throw new IllegalArgumentException(describe() + ": " + from + " to " + to + " for " + type
                        + " needs " + QueuePairTransitions.names(missing));
            }
        }
        int rc;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
            attributes.writeTo(attr);
            rc = withPinned(qp -> RdmaCore.ibv_modify_qp(qp, attr, attributes.mask()));
        }
        if (rc == 0) {
            if (to != null) {
                lastState = to;
            }
            return;
        }
        VerbException failure = VerbException.of("ibv_modify_qp", rc, describe() + " attributes "
                + QueuePairTransitions.names(attributes.mask())
                + (attributes.state() == null ? "" : " to " + attributes.state()));
        if (rc == RdmaCore.EINVAL() && to != null) {
            QueuePairState current = state();
            if (!QueuePairTransitions.allowed(current, to)) {
                throw new IllegalStateException(describe() + " cannot move from " + current + " to " + to, failure);
            }
        }
        throw failure;
    }

    /**
     * RESET → INIT for a connected QP ({@code ibv_modify_qp}): port, P_Key index 0, and what remote peers may do.
     */
    public void initialize(int port, Set<Access> remoteAccess) {
        requireConnected("initialize(port, access)");
        modify(new QueuePairAttributes().state(QueuePairState.INIT).port(port).pkeyIndex(0).access(remoteAccess));
    }

    /** RESET → INIT for a UD QP ({@code ibv_modify_qp}): port, P_Key index 0 and Q_Key. */
    public void initialize(int port, int qkey) {
        if (type != QueuePairType.UNRELIABLE_DATAGRAM) {
            throw new IllegalStateException("initialize(port, qkey) is for UD queue pairs; this is " + type);
        }
        modify(new QueuePairAttributes().state(QueuePairState.INIT).port(port).pkeyIndex(0).qkey(qkey));
    }

    /**
     * INIT → RTR for a connected QP ({@code ibv_modify_qp}) toward the peer QP {@code remoteQueuePair} at
     * {@code remote}. RC also gets a 0.64 ms RNR NAK timer and as many incoming RDMA READs/atomics as the device
     * allows (at most 16).
     */
    public void readyToReceive(AddressVector remote, int remoteQueuePair, int remotePsn, Mtu pathMtu) {
        requireConnected("readyToReceive(address, qpn, psn, mtu)");
        QueuePairAttributes a = new QueuePairAttributes().state(QueuePairState.READY_TO_RECEIVE).address(remote)
                .destinationQueuePair(remoteQueuePair).receivePsn(remotePsn).pathMtu(pathMtu);
        if (type == QueuePairType.RELIABLE_CONNECTED) {
            a.minRnrTimer(12).maxDestinationReadAtomic(
                    Math.min(16, protectionDomain.context().limits().maxReadAtomicAsTarget()));
        }
        modify(a);
    }

    /** INIT → RTR for a UD QP ({@code ibv_modify_qp}). */
    public void readyToReceive() {
        modify(new QueuePairAttributes().state(QueuePairState.READY_TO_RECEIVE));
    }

    /**
     * RTR → RTS ({@code ibv_modify_qp}) sending from {@code psn}. RC also gets an ACK timeout of about 0.54 s
     * (code 17) and 6 retries, so that work sent to a peer that is gone ends in
     * {@link WorkCompletionStatus#RETRY_EXCEEDED_ERROR} within about 4 s (7 retries would be "forever" on
     * Soft-RoCE, and a shorter timeout misreads a peer stalled by an emulator or a busy host as dead); RNR retry 7
     * (a live peer that has not posted its receive yet is waited for); and as many outgoing RDMA READs/atomics as
     * the device allows (at most 16). Use {@link #modify} for other values.
     */
    public void readyToSend(int psn) {
        modify(readyToSendAttributes(psn));
    }

    /** The attributes of {@link #readyToSend(int)}. */
    QueuePairAttributes readyToSendAttributes(int psn) {
        QueuePairAttributes a = new QueuePairAttributes().state(QueuePairState.READY_TO_SEND).sendPsn(psn);
        if (type == QueuePairType.RELIABLE_CONNECTED) {
            a.timeout(17).retryCount(6).rnrRetry(7).maxReadAtomic(
                    Math.min(16, protectionDomain.context().limits().maxReadAtomicAsInitiator()));
        }
        return a;
    }

    /** Moves to ERROR ({@code ibv_modify_qp}): posted work completes with {@link WorkCompletionStatus#WORK_REQUEST_FLUSH_ERROR}. */
    public void moveToError() {
        modify(new QueuePairAttributes().state(QueuePairState.ERROR));
    }

    /** Moves to RESET ({@code ibv_modify_qp}), emptying both queues, so that the QP can be set up again. */
    public void reset() {
        modify(new QueuePairAttributes().state(QueuePairState.RESET));
    }

    /**
     * The current state ({@code ibv_query_qp}); reflects transitions made by the kernel too (rdma_cm, errors).
     * Providers that do not report the state (siw) always answer {@link QueuePairState#RESET}.
     */
    public QueuePairState state() {
        return queryAttributes(RdmaCore.IBV_QP_STATE()).state();
    }

    /** All attributes ({@code ibv_query_qp}). */
    public QueuePairAttributes query() {
        int all = RdmaCore.IBV_QP_STATE() | RdmaCore.IBV_QP_CUR_STATE() | RdmaCore.IBV_QP_ACCESS_FLAGS()
                | RdmaCore.IBV_QP_PKEY_INDEX() | RdmaCore.IBV_QP_PORT() | RdmaCore.IBV_QP_AV() | RdmaCore.IBV_QP_PATH_MTU()
                | RdmaCore.IBV_QP_TIMEOUT() | RdmaCore.IBV_QP_RETRY_CNT() | RdmaCore.IBV_QP_RNR_RETRY()
                | RdmaCore.IBV_QP_RQ_PSN() | RdmaCore.IBV_QP_MAX_QP_RD_ATOMIC() | RdmaCore.IBV_QP_MIN_RNR_TIMER()
                | RdmaCore.IBV_QP_SQ_PSN() | RdmaCore.IBV_QP_MAX_DEST_RD_ATOMIC() | RdmaCore.IBV_QP_CAP()
                | RdmaCore.IBV_QP_DEST_QPN() | (type == QueuePairType.UNRELIABLE_DATAGRAM ? RdmaCore.IBV_QP_QKEY() : 0);
        return queryAttributes(all);
    }

    private QueuePairAttributes queryAttributes(int mask) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
            MemorySegment init = arena.allocate(ibv_qp_init_attr.layout());
            int rc = withPinned(qp -> RdmaCore.ibv_query_qp(qp, attr, mask, init));
            if (rc != 0) {
                throw VerbException.of("ibv_query_qp", rc, describe());
            }
            return QueuePairAttributes.readFrom(attr);
        }
    }

    private void requireConnected(String what) {
        if (type == QueuePairType.UNRELIABLE_DATAGRAM) {
            throw new IllegalStateException(what + " is for RC and UC queue pairs; this is UD");
        }
    }

    @Override
    protected String describe() {
        return "QueuePair(" + type + " 0x" + Integer.toHexString(number) + ")";
    }

    /**
     * Sets up a queue pair ({@code struct ibv_qp_init_attr}) and creates it ({@code ibv_create_qp}). Obtained from
     * {@link ProtectionDomain#queuePair(QueuePairType)}. Not thread-safe.
     */
    public static final class Builder {

        /**
         * Each thread's attribute struct for the create verb, zeroed per create: a confined arena per create (its
         * session, segment, malloc and free) was most of what a create + close allocated (host, JFR).
         */
        private static final ThreadLocal<MemorySegment> INIT_ATTRIBUTES =
                ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(ibv_qp_init_attr_ex.layout()));

        private final ProtectionDomain pd;
        private final QueuePairType type;
        private CompletionQueue sendCompletionQueue;
        private CompletionQueue receiveCompletionQueue;
        private SharedReceiveQueue sharedReceiveQueue;
        private QueuePairCapabilities capabilities = QueuePairCapabilities.defaults();
        private boolean signalAll;
        private Set<ExtendedOperation> extendedOperations;

        Builder(ProtectionDomain pd, QueuePairType type) {
            this.pd = pd;
            this.type = Objects.requireNonNull(type, "type");
        }

        /** The CQ for both queues' completions. */
        public Builder completionQueue(CompletionQueue cq) {
            return sendCompletionQueue(cq).receiveCompletionQueue(cq);
        }

        /** The CQ for send completions. */
        public Builder sendCompletionQueue(CompletionQueue cq) {
            sendCompletionQueue = Objects.requireNonNull(cq, "cq");
            return this;
        }

        /** The CQ for receive completions. */
        public Builder receiveCompletionQueue(CompletionQueue cq) {
            receiveCompletionQueue = Objects.requireNonNull(cq, "cq");
            return this;
        }

        /** Takes receives from {@code srq} instead of a receive queue of its own. */
        public Builder sharedReceiveQueue(SharedReceiveQueue srq) {
            sharedReceiveQueue = Objects.requireNonNull(srq, "srq");
            return this;
        }

        /** The queue sizes to ask for (default 16/16 requests, 1/1 SGE, no inline data). */
        public Builder capabilities(QueuePairCapabilities caps) {
            capabilities = Objects.requireNonNull(caps, "caps");
            return this;
        }

        /** Every send request completes, signaled or not ({@code sq_sig_all}). */
        public Builder signalAll(boolean value) {
            signalAll = value;
            return this;
        }

        /**
         * Also enables the extended work request API for {@code operations} ({@link QueuePair#extendedSend()}):
         * the QP is then created with {@code ibv_create_qp_ex}.
         */
        public Builder extendedOperations(Set<ExtendedOperation> operations) {
            extendedOperations = Set.copyOf(operations);
            return this;
        }

        /**
         * Creates the queue pair ({@code ibv_create_qp}, or {@code ibv_create_qp_ex} with extended operations), in
         * RESET.
         *
         * @throws IllegalStateException if a completion queue is missing or anything involved is closed
         * @throws VerbException         if the verb fails (e.g. EINVAL when the sizes exceed the device's limits,
         *                               EOPNOTSUPP/UnsupportedVerbException for a type the device lacks)
         */
        public QueuePair create() {
            return create(DIRECT);
        }

        private void sameContext(String what, Context other) {
            if (other != pd.context()) {
                throw new IllegalArgumentException("the " + what + " belongs to another context than the protection"
                        + " domain (" + other.device().name() + " vs " + pd.context().device().name() + ")");
            }
        }

        /** The protection domain the queue pair will be created in. */
        ProtectionDomain protectionDomain() {
            return pd;
        }

        /** Creates the queue pair through {@code factory} ({@code ibv_create_qp}, or librdmacm's {@code rdma_create_qp}). */
        QueuePair create(QueuePairFactory factory) {
            if (sendCompletionQueue == null || receiveCompletionQueue == null) {
                throw new IllegalStateException("a queue pair needs a send and a receive completion queue");
            }
            // The kernel knows objects by per-context handle numbers: another context's CQ could name one of ours.
            sameContext("send completion queue", sendCompletionQueue.context());
            sameContext("receive completion queue", receiveCompletionQueue.context());
            if (sharedReceiveQueue != null) {
                sameContext("shared receive queue", sharedReceiveQueue.protectionDomain().context());
            }
            boolean extended = extendedOperations != null;
            // The objects the new QP will use may not close between its creation and its uses(...) below: the
            // kernel would refuse to destroy them (EBUSY), and libsiw unmaps a CQ before it asks the kernel.
            NativeObject[] used = {pd, sendCompletionQueue, receiveCompletionQueue, sharedReceiveQueue};
            MemorySegment[] pointers = pinAll(used);
            try {
                // ibv_qp_init_attr_ex starts with the members of ibv_qp_init_attr: one struct serves both verbs.
                MemorySegment init = INIT_ATTRIBUTES.get().fill((byte) 0);
                ibv_qp_init_attr_ex.send_cq(init, pointers[1]);
                ibv_qp_init_attr_ex.recv_cq(init, pointers[2]);
                if (sharedReceiveQueue != null) {
                    ibv_qp_init_attr_ex.srq(init, pointers[3]);
                }
                capabilities.writeTo(ibv_qp_init_attr_ex.cap(init));
                ibv_qp_init_attr_ex.qp_type(init, type.value());
                ibv_qp_init_attr_ex.sq_sig_all(init, signalAll ? 1 : 0);
                if (extended) {
                    ibv_qp_init_attr_ex.comp_mask(init, RdmaCore.IBV_QP_INIT_ATTR_PD()
                            | RdmaCore.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS());
                    ibv_qp_init_attr_ex.pd(init, pointers[0]);
                    ibv_qp_init_attr_ex.send_ops_flags(init, CValue.mask(extendedOperations));
                }
                MemorySegment state = Errno.state();
                MemorySegment qp = factory.create(state, pointers[0], init, extended);
                if (qp.address() == 0) {
                    throw VerbException.of(factory.verb(extended), Errno.get(state), type + " with " + capabilities);
                }
                QueuePair created = new QueuePair(this, qp,
                        QueuePairCapabilities.readFrom(ibv_qp_init_attr_ex.cap(init)), extended, factory);
                // Its fields keep them reachable; this makes them refuse to close while it lives.
                created.uses(sendCompletionQueue, receiveCompletionQueue, sharedReceiveQueue);
                return created;
            } finally {
                unpinAll(used);
            }
        }
    }
}
