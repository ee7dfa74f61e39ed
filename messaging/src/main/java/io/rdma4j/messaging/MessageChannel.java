package io.rdma4j.messaging;

import io.rdma4j.cm.CmEvent;
import io.rdma4j.cm.CmEventType;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.AtomicCapability;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletionOpcode;
import io.rdma4j.verbs.WorkCompletionStatus;
import io.rdma4j.verbs.WorkCompletions;
import io.rdma4j.verbs.internal.NativeResource;
import io.rdma4j.verbs.internal.VerbsInternals;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whole messages over one reliable connection, with credit-based flow control (docs/messaging.md): {@link #send}
 * copies a message into a registered send buffer (inline when small) and waits only when the peer has no receive
 * posted for it; {@link #receive} hands out a {@link ReceivedMessage} in the registered receive buffer it arrived
 * in, which its release posts again. Messages arrive once, whole and in the order sent. Made by
 * {@link MessagingGroup#connect} or {@link MessagingGroup#accept}; the group's progress thread polls its
 * completions and watches the connection, so a peer's disconnect or a failed request ends every waiting call with
 * a {@link ChannelException}. One-sided operations ({@link #read}, {@link #write}, {@link #writeWithImmediate},
 * {@link #compareAndSwap}, {@link #fetchAndAdd}) work on a {@link RemoteBuffer} the peer handed out, each in a
 * blocking form and a {@link CompletableFuture} form.
 *
 * <p>Lifetime: holds its group; {@link #close()} (or the group's) disconnects, fails every waiting call, and closes
 * the connection and the channel's registered buffers. Thread-safety: every method may be called from any thread;
 * concurrent senders' messages are sent one after the other, concurrent receivers each get a different message.
 */
public final class MessageChannel implements AutoCloseable {

    /** What a work request was, in bits 28..31 of the low half of its id; the slot is below. */
    private static final int RECEIVE = 1 << 28;
    private static final int SEND = 2 << 28;
    private static final int CONTROL = 3 << 28;
    private static final int OPERATION = 4 << 28;
    /** The READ of a large message's bytes into receive slot's large buffer. */
    private static final int FETCH = 5 << 28;
    /** A zero-copy send: the slot is its entry in {@link #zeroCopySends}. */
    private static final int ZERO_COPY = 6 << 28;
    private static final int SLOT_MASK = (1 << 28) - 1;
    /** A send that holds no buffer (inline). */
    private static final int NO_SLOT = SLOT_MASK;
    /** How long a caller in a BUSY_POLLING group spins for a change before it parks. */
    private static final long SPIN_NANOS = 50_000;
    private static final Logger LOG = LoggerFactory.getLogger(MessageChannel.class);

    private enum State { CONNECTING, OPEN, CLOSING, CLOSED }

    private final MessagingGroup group;
    private final MessagingOptions options;
    private final int handle;
    /**
     * Guards the channel's state; its progress thread takes it for each completion. Package-private for a test that
     * holds it to stop the progress at a chosen point.
     */
    final ReentrantLock lock = new ReentrantLock();
    /** Signalled, with {@link #signals} counted up, at each change that a waiting caller may wait for. */
    private final Condition changed = lock.newCondition();
    /** Counts {@link #signal()}s: a caller spinning without the lock watches it (BUSY_POLLING). */
    private volatile long signals;
    /** Whether waiting callers spin before they park: in BUSY_POLLING groups, where a core is spent anyway. */
    private final boolean spinning;
    private final int receives;
    private final int receiveBufferSize;
    private final int sendQueueDepth;
    private final int controlBuffers;
    private final PendingOperations operations;
    /** Zero-copy sends in flight (one per send buffer's worth), each pinning its region until the peer has it. */
    private final PendingOperations zeroCopySends;
    /**
     * Per zero-copy entry: the events it still waits for: its SEND's completion, and for a rendezvous the peer's DONE
     * too (which may be polled before the SEND's completion: both must be in before the slot is reused).
     */
    private final int[] zeroCopyWaits;

    // Set while connecting, under the lock.
    private State state = State.CONNECTING;
    /** Set by {@link #close()} while it waits for what was sent to reach the peer: new calls are refused (lock). */
    private boolean draining;
    private volatile DeviceProgress device;
    private CompletionQueue completionQueue;
    private QueuePair queuePair;
    private MemoryRegion receiveRegion;
    private ReceivedMessage[] leases;
    private ReceiveWorkRequests receiveBatch;
    /** Receive completions that came before the channel opened (the peer spoke first): slot and length. */
    private int[] earlySlots;
    private int[] earlyLengths;
    /** Their immediate data, and whether each was the notice of a WRITE with immediate. */
    private int[] earlyImmediates;
    private boolean[] earlyNotices;
    private int earlyCount;

    // Set when open.
    private Connection connection;
    private CreditLedger ledger;
    private MemoryRegion sendRegion;
    private int sendBufferSize;
    private int inlineLimit;
    private int[] freeSendBuffers;
    private int freeSendCount;
    private MemoryRegion controlRegion;
    private int[] freeControlBuffers;
    private int freeControlCount;
    private SendWorkRequests sendBatch;
    /** The atomics' results: 8 bytes per operation slot. */
    private MemoryRegion atomicRegion;
    /** The zero-copy sends' headers (a RENDEZVOUS's 32 bytes each); their bytes stay in the application's region. */
    private MemoryRegion zeroCopyHeaders;
    private ChannelCapabilities capabilities;
    private int peerMaxMessageSize;
    private LargeBuffers largeBuffers;
    /**
     * Large messages sent and not yet read by the peer (no DONE yet): their numbers, and their copies or (zero-copy,
     * copy {@code null}) their entries in {@link #zeroCopySends}.
     */
    private int[] outgoingSequences = new int[4];
    private MemoryRegion[] outgoingCopies = new MemoryRegion[4];
    private int[] outgoingEntries = new int[4];
    private int outgoingCount;
    private Thread watcher;

    // Guarded by the lock.
    private final int[] arrivals;
    private final long[] lengths;
    private final int[] sequences;
    /** Per receive slot: the bytes a WRITE with immediate placed (its notice), else -1; and its immediate. */
    private final long[] written;
    private final int[] immediates;
    /** Per receive slot: the buffer a large message is READ into, and whether its bytes are there. */
    private final MemoryRegion[] largeRegions;
    private final boolean[] ready;
    /** Numbers of large messages read, whose DONE waits for the peer's control window. */
    private final int[] pendingDones;
    private int pendingDoneHead;
    private int pendingDoneCount;
    private int arrivalHead;
    private int arrivalCount;
    private int dataSendsInFlight;
    private int nextSendSequence;
    private int nextReceiveSequence;
    private ChannelException failure;

    MessageChannel(MessagingGroup group, MessagingOptions options) {
        this.group = group;
        this.spinning = group.mode() == ProgressMode.BUSY_POLLING;
        this.options = Objects.requireNonNull(options, "options");
        this.receives = CreditLedger.receivesPosted(options.receiveCredits(), options.controlWindow());
        this.receiveBufferSize = options.receiveBufferSize();
        // Data sends in flight are bounded by the send buffers, control messages by their own buffers: together
        // they never overfill the send queue, whatever the order of their completions.
        this.controlBuffers = options.controlWindow() + 2;
        // Copied and zero-copy sends, control sends, one-sided operations, and the READs of large messages (one per
        // data receive).
        this.sendQueueDepth = 2 * options.sendBuffers() + controlBuffers + options.operationsInFlight()
                + options.receiveCredits();
        this.operations = new PendingOperations(options.operationsInFlight());
        this.zeroCopySends = new PendingOperations(options.sendBuffers());
        this.zeroCopyWaits = new int[options.sendBuffers()];
        this.arrivals = new int[receives];
        this.lengths = new long[receives];
        this.sequences = new int[receives];
        this.written = new long[receives];
        this.immediates = new int[receives];
        this.largeRegions = new MemoryRegion[receives];
        this.ready = new boolean[receives];
        this.pendingDones = new int[receives];
        this.handle = group.register(this);
    }

    int handle() {
        return handle;
    }

    DeviceProgress device() {
        return device;
    }

    /** The connection options for {@link io.rdma4j.cm.Connector} or {@link io.rdma4j.cm.Acceptor}. */
    ConnectionOptions connectionOptions() {
        ConnectionOptions base = options.connection();
        byte[] privateData = Handshake.of(options).encode(base.privateData());
        return base.toBuilder()
                .capabilities(QueuePairCapabilities.defaults().withSendQueue(sendQueueDepth).withReceiveQueue(receives)
                        .withSendScatterGather(2).withInlineData(options.inlineSize()))
                .protectionDomain(context -> {
                    device = group.device(context);
                    return device.protectionDomain();
                })
                .completionQueue(context -> {
                    device = group.device(context);
                    completionQueue = device.reserve(completionEntries());
                    return completionQueue;
                })
                .completionEvents(false)
                .privateData(privateData)
                .onQueuePair(this::postReceives)
                .build();
    }

    private int completionEntries() {
        return sendQueueDepth + receives;
    }

    /** Registers the receive buffers and posts them all, before the connect request or the accept leaves. */
    private void postReceives(QueuePair qp) {
        lock.lock();
        try {
            queuePair = qp;
            receiveRegion = qp.protectionDomain().allocateMemory((long) receives * receiveBufferSize,
                    Set.of(Access.LOCAL_WRITE));
            leases = new ReceivedMessage[receives];
            receiveBatch = new ReceiveWorkRequests(1, 1);
            earlySlots = new int[receives];
            earlyLengths = new int[receives];
            earlyImmediates = new int[receives];
            earlyNotices = new boolean[receives];
            for (int slot = 0; slot < receives; slot++) {
                leases[slot] = new ReceivedMessage(this, slot,
                        receiveRegion.segment().asSlice((long) slot * receiveBufferSize, receiveBufferSize));
                postReceive(slot);
            }
        } finally {
            lock.unlock();
        }
    }

    private void postReceive(int slot) {
        queuePair.postReceive(receiveBatch.clear().add(workRequestId(RECEIVE | slot))
                .scatter(receiveRegion, (long) slot * receiveBufferSize, receiveBufferSize));
    }

    private long workRequestId(int what) {
        return (long) handle << 32 | Integer.toUnsignedLong(what);
    }

    /** Takes the established connection: reads the peer's handshake, makes the send buffers, starts watching. */
    MessageChannel open(Connection established) {
        Handshake peer = Handshake.decode(established.peerPrivateData(), String.valueOf(established.peerAddress()));
        lock.lock();
        try {
            connection = established;
            ledger = new CreditLedger(options.receiveCredits(), options.controlWindow(), peer.receiveCredits,
                    peer.controlWindow);
            sendBufferSize = peer.receiveBufferSize;
            peerMaxMessageSize = peer.maxMessageSize;
            largeBuffers = new LargeBuffers(queuePair.protectionDomain());
            inlineLimit = Math.min(options.inlineSize(), queuePair.capabilities().maxInlineData());
            sendRegion = queuePair.protectionDomain().allocateMemory((long) options.sendBuffers() * sendBufferSize,
                    Set.of(Access.LOCAL_WRITE));
            freeSendBuffers = new int[options.sendBuffers()];
            for (int i = 0; i < options.sendBuffers(); i++) {
                freeSendBuffers[freeSendCount++] = i;
            }
            controlRegion = queuePair.protectionDomain().allocateMemory((long) controlBuffers * Header.BYTES,
                    Set.of(Access.LOCAL_WRITE));
            freeControlBuffers = new int[controlBuffers];
            for (int i = 0; i < controlBuffers; i++) {
                freeControlBuffers[freeControlCount++] = i;
            }
            sendBatch = new SendWorkRequests(1, 2); // a zero-copy send gathers its header and the application's bytes
            zeroCopyHeaders = queuePair.protectionDomain().allocateMemory(
                    (long) options.sendBuffers() * Header.RENDEZVOUS_BYTES, Set.of(Access.LOCAL_WRITE));
            atomicRegion = queuePair.protectionDomain().allocateMemory(
                    (long) options.operationsInFlight() * Long.BYTES, Set.of(Access.LOCAL_WRITE));
            capabilities = new ChannelCapabilities(established.context().device().transport(),
                    device.attributes().atomicCapability() != AtomicCapability.NONE, peerMaxMessageSize,
                    queuePair.capabilities().maxInlineData(),
                    established.context().queryPort(established.id().devicePort()).maxMessageSize(),
                    options.operationsInFlight());
            state = State.OPEN;
            for (int i = 0; i < earlyCount; i++) {
                arrived(earlySlots[i], earlyLengths[i], earlyNotices[i], earlyImmediates[i]);
            }
            earlyCount = 0;
        } finally {
            lock.unlock();
        }
        watcher = Thread.ofVirtual().name("rdma4j-channel-events").start(this::watchConnection);
        return this;
    }

    /** Gives back what connecting took, when connecting failed (the connection, if any, is closed by then). */
    void abort() {
        lock.lock();
        try {
            state = State.CLOSED;
        } finally {
            lock.unlock();
        }
        release();
    }

    /**
     * The largest message the peer receives (its {@link MessagingOptions#maxMessageSize()}). Those longer than its
     * receive buffer less the 16-byte header travel by rendezvous: the peer READs them from a registered copy.
     */
    public int maxMessageSize() {
        lock.lock();
        try {
            checkOpened();
            return peerMaxMessageSize;
        } finally {
            lock.unlock();
        }
    }

    /** What the channel can do: atomics, immediate data, its largest message and READ/WRITE, inline size. */
    public ChannelCapabilities capabilities() {
        lock.lock();
        try {
            checkOpened();
            return capabilities;
        } finally {
            lock.unlock();
        }
    }

    /** The connection underneath (its verbs objects, addresses and the peer's private data after the handshake). */
    public Connection connection() {
        lock.lock();
        try {
            checkOpened();
            return connection;
        } finally {
            lock.unlock();
        }
    }

    /** The application's part of the private data the peer sent (after the layer's 20-byte handshake). */
    public byte[] peerPrivateData() {
        return Handshake.applicationData(connection().peerPrivateData());
    }

    private void checkOpened() {
        if (connection == null) {
            throw new IllegalStateException("the channel was never opened");
        }
    }

    /**
     * Sends a copy of {@code message}, waiting while the peer has no receive posted for it (no credit) or every send
     * buffer is in flight. Returns once the message is posted: {@code message} may be reused at once.
     *
     * @throws IllegalArgumentException if the message is longer than {@link #maxMessageSize()}
     * @throws ChannelException         if the channel ended (closed, the peer gone, a request failed)
     * @throws InterruptedException     if the thread is interrupted while waiting
     */
    public void send(MemorySegment message) throws InterruptedException {
        if (!send(message, Long.MAX_VALUE)) {
            throw new AssertionError("an unbounded send returned without sending");
        }
    }

    /**
     * Sends {@code length} bytes of {@code region} from {@code offset} without copying them, and waits until they
     * may change again: a message that fits the peer's receive buffer is gathered by the device from the region
     * behind a header (and may change once its SEND completed); a larger one the peer READs from the region itself
     * (the region needs {@link Access#REMOTE_READ}), and it may change once the peer said DONE. The region is pinned
     * meanwhile: closing it throws {@link IllegalStateException}. The message arrives as any other, in order.
     *
     * @throws IndexOutOfBoundsException if the bytes are not inside {@code region}
     * @throws IllegalArgumentException  if the message is longer than {@link #maxMessageSize()}, the region is in
     *                                   another protection domain, or a large message's region lacks REMOTE_READ
     * @throws IllegalStateException     if the region is closed
     * @throws ChannelException          if the channel ended (closed, the peer gone, a request failed)
     * @throws InterruptedException      if the thread is interrupted while waiting
     */
    public void send(MemoryRegion region, long offset, long length) throws InterruptedException {
        await(zeroCopySends, startZeroCopy(region, offset, length, null));
    }

    /**
     * {@link #send(MemoryRegion, long, long)} without waiting for the peer: the future completes (off the progress
     * thread) once the region's bytes may change again. Waits only for a credit and for one of the
     * {@link MessagingOptions#sendBuffers()} zero-copy sends in flight to end.
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public CompletableFuture<Void> sendAsync(MemoryRegion region, long offset, long length)
            throws InterruptedException {
        CompletableFuture<Void> future = new CompletableFuture<>();
        startZeroCopy(region, offset, length, future);
        return future;
    }

    /** Checks and posts a zero-copy send, waiting for a credit and a free entry; returns the entry. */
    private int startZeroCopy(MemoryRegion region, long offset, long length, CompletableFuture<?> future)
            throws InterruptedException {
        Objects.requireNonNull(region, "region");
        lock.lock();
        try {
            checkOpened();
            checkUsable();
            if (offset < 0 || length < 0 || offset > region.length() - length) {
                throw new IndexOutOfBoundsException("bytes " + offset + " to " + offset + " + " + length
                        + " are not inside the region's " + region.length() + " bytes: " + this);
            }
            if (length > peerMaxMessageSize) {
                throw new IllegalArgumentException("a message of " + length + " bytes is longer than the "
                        + peerMaxMessageSize + " the peer receives (its maxMessageSize): " + this);
            }
            checkDomain("send", region);
            boolean large = length > sendBufferSize - Header.BYTES;
            if (large && !region.allows(Access.REMOTE_READ)) {
                throw new IllegalArgumentException("a message of " + length + " bytes is larger than the peer's "
                        + "receive buffer: the peer READs it from the region, which was not registered with "
                        + "REMOTE_READ: " + this);
            }
            while (!(failure == null && state == State.OPEN && ledger.dataCredits() > 0 && zeroCopySends.hasFree())) {
                checkUsable();
                await(Long.MAX_VALUE);
            }
            NativeResource pin = VerbsInternals.access().resource(region);
            if (!pin.pin()) {
                throw new IllegalStateException("the region to send from is closed: " + region);
            }
            int entry = zeroCopySends.start(null, null, future, pin);
            try {
                long header = (long) entry * Header.RENDEZVOUS_BYTES;
                MemorySegment headers = zeroCopyHeaders.segment();
                int sequence = nextSendSequence;
                byte flags = ledger.dataSent();
                Header.write(headers, header, large ? Header.RENDEZVOUS : Header.DATA, flags, ledger.granted(),
                        ledger.controls(), sequence);
                SendWorkRequests batch = sendBatch.clear().send(workRequestId(ZERO_COPY | entry)).signaled();
                if (large) {
                    RemoteBuffer.of(region, offset, length).writeTo(headers, header + Header.BYTES);
                    batch.gather(zeroCopyHeaders, header, Header.RENDEZVOUS_BYTES);
                } else {
                    batch.gather(zeroCopyHeaders, header, Header.BYTES);
                    if (length > 0) {
                        batch.gather(region, offset, length);
                    }
                }
                queuePair.postSend(batch);
                nextSendSequence++;
                zeroCopyWaits[entry] = large ? 2 : 1;
                if (large) {
                    addOutgoing(sequence, null, entry);
                }
            } catch (RuntimeException e) {
                zeroCopySends.abandon(entry);
                throw e;
            }
            return entry;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends a copy of {@code message} if the peer has credit for it and a send buffer is free, without waiting.
     *
     * @return false if it would have had to wait (nothing was sent)
     * @throws IllegalArgumentException if the message is longer than {@link #maxMessageSize()}
     * @throws ChannelException         if the channel ended
     */
    public boolean trySend(MemorySegment message) {
        try {
            return send(message, 0);
        } catch (InterruptedException e) {
            throw new AssertionError("a send that does not wait was interrupted", e);
        }
    }

    private boolean send(MemorySegment message, long waitNanos) throws InterruptedException {
        long length = message.byteSize();
        long deadline = waitNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + waitNanos;
        lock.lock();
        try {
            int max = maxMessageSize();
            if (length > max) {
                throw new IllegalArgumentException("a message of " + length + " bytes is longer than the " + max
                        + " the peer receives (its maxMessageSize): " + this);
            }
            if (length > sendBufferSize - Header.BYTES) {
                if (waitNanos == 0 && !canSendData()) {
                    checkUsable();
                    return false; // before copying a large message for nothing
                }
            } else {
                if (!awaitDataCredit(waitNanos, deadline)) {
                    return false;
                }
                int slot = freeSendBuffers[--freeSendCount];
                long offset = (long) slot * sendBufferSize;
                MemorySegment.copy(message, 0, sendRegion.segment(), offset + Header.BYTES, length);
                postData(Header.DATA, slot, offset, length + Header.BYTES, nextSendSequence++);
                return true;
            }
        } finally {
            lock.unlock();
        }
        return sendLarge(message, waitNanos, deadline);
    }

    /**
     * Sends a message too large for the peer's receive buffer by rendezvous: copies it into a registered buffer
     * (outside the lock), then sends a RENDEZVOUS that names it; the peer READs it and answers DONE, which frees it.
     */
    private boolean sendLarge(MemorySegment message, long waitNanos, long deadline) throws InterruptedException {
        long length = message.byteSize();
        MemoryRegion copy = largeBuffers.acquire(length);
        try {
            MemorySegment.copy(message, 0, copy.segment(), 0, length);
            lock.lock();
            try {
                if (!awaitDataCredit(waitNanos, deadline)) {
                    return false;
                }
                int slot = freeSendBuffers[--freeSendCount];
                long offset = (long) slot * sendBufferSize;
                int sequence = nextSendSequence++;
                RemoteBuffer.of(copy, 0, length).writeTo(sendRegion.segment(), offset + Header.BYTES);
                postData(Header.RENDEZVOUS, slot, offset, Header.RENDEZVOUS_BYTES, sequence);
                addOutgoing(sequence, copy, -1);
                copy = null;
                return true;
            } finally {
                lock.unlock();
            }
        } finally {
            if (copy != null) {
                largeBuffers.release(copy);
            }
        }
    }

    /** Waits until a data message may go (a credit and a send buffer); false once the deadline passed (lock held). */
    private boolean awaitDataCredit(long waitNanos, long deadline) throws InterruptedException {
        while (!canSendData()) {
            checkUsable();
            if (waitNanos == 0 || !await(deadline)) {
                return false;
            }
        }
        return true;
    }

    /** Writes the header of a data message in send buffer {@code slot} and posts it (lock held, credit checked). */
    private void postData(byte type, int slot, long offset, long bytes, int sequence) {
        byte flags = ledger.dataSent();
        Header.write(sendRegion.segment(), offset, type, flags, ledger.granted(), ledger.controls(), sequence);
        boolean inline = bytes <= inlineLimit;
        post(sendRegion, SEND | (inline ? NO_SLOT : slot), offset, bytes, inline);
        dataSendsInFlight++;
        if (inline) {
            freeSendBuffers[freeSendCount++] = slot; // inline: the provider copied it at the post
        }
    }

    /** Large messages sent whose copies wait for the peer's DONE. */
    int largeCopiesInFlight() {
        lock.lock();
        try {
            return outgoingCount;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Remembers a large message until the peer's DONE (lock held): its copy, or for a zero-copy send ({@code copy}
     * null) its entry.
     */
    private void addOutgoing(int sequence, MemoryRegion copy, int entry) {
        if (outgoingCount == outgoingSequences.length) {
            outgoingSequences = java.util.Arrays.copyOf(outgoingSequences, outgoingCount * 2);
            outgoingCopies = java.util.Arrays.copyOf(outgoingCopies, outgoingCount * 2);
            outgoingEntries = java.util.Arrays.copyOf(outgoingEntries, outgoingCount * 2);
        }
        outgoingSequences[outgoingCount] = sequence;
        outgoingEntries[outgoingCount] = entry;
        outgoingCopies[outgoingCount++] = copy;
    }

    /**
     * The peer read large message {@code sequence}: frees its copy, or ends its zero-copy send (lock held).
     *
     * @throws CreditLedger.ProtocolViolation if no such message is in flight
     */
    private void doneArrived(int sequence) {
        for (int i = 0; i < outgoingCount; i++) {
            if (outgoingSequences[i] == sequence) {
                MemoryRegion copy = outgoingCopies[i];
                int entry = outgoingEntries[i];
                outgoingCount--;
                outgoingSequences[i] = outgoingSequences[outgoingCount];
                outgoingCopies[i] = outgoingCopies[outgoingCount];
                outgoingEntries[i] = outgoingEntries[outgoingCount];
                outgoingCopies[outgoingCount] = null;
                if (copy != null) {
                    largeBuffers.release(copy);
                } else {
                    zeroCopyEvent(entry);
                }
                return;
            }
        }
        throw new CreditLedger.ProtocolViolation("DONE for message " + Integer.toUnsignedString(sequence)
                + ", which was no RENDEZVOUS in flight");
    }

    /** Fewer data sends in flight than send buffers also means a free buffer: inline ones hold none. */
    private boolean canSendData() {
        return failure == null && state == State.OPEN && ledger.dataCredits() > 0
                && dataSendsInFlight < options.sendBuffers();
    }

    /** Posts one signaled SEND of {@code length} bytes at {@code offset} of {@code region}. */
    private void post(MemoryRegion region, int what, long offset, long length, boolean inline) {
        SendWorkRequests batch = sendBatch.clear().send(workRequestId(what)).signaled().gather(region, offset, length);
        queuePair.postSend(inline ? batch.inline() : batch);
    }

    /**
     * Waits for the next message.
     *
     * @throws ChannelException     once the channel ended and every message that arrived before was received
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public ReceivedMessage receive() throws InterruptedException {
        return receive(Long.MAX_VALUE);
    }

    /**
     * Waits up to {@code timeout} for the next message.
     *
     * @return the message, or {@code null} after {@code timeout}
     * @throws ChannelException     once the channel ended and every message that arrived before was received
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public ReceivedMessage receive(Duration timeout) throws InterruptedException {
        return receive(timeout.toNanos());
    }

    /** The next message if one has arrived, else {@code null}; never waits. */
    public ReceivedMessage tryReceive() {
        try {
            return receive(0);
        } catch (InterruptedException e) {
            throw new AssertionError("a receive that does not wait was interrupted", e);
        }
    }

    private ReceivedMessage receive(long waitNanos) throws InterruptedException {
        long deadline = waitNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + waitNanos;
        lock.lock();
        try {
            checkOpened();
            if (state != State.OPEN || draining) {
                checkUsable();
            }
            // In order: a large message still being READ holds back the messages behind it.
            while (arrivalCount == 0 || !ready[arrivals[arrivalHead]]) {
                checkUsable();
                if (waitNanos == 0 || !await(deadline)) {
                    return null;
                }
            }
            int slot = arrivals[arrivalHead];
            arrivalHead = arrivalHead + 1 == receives ? 0 : arrivalHead + 1;
            arrivalCount--;
            ReceivedMessage lease = leases[slot];
            MemoryRegion large = largeRegions[slot];
            lease.lease(lengths[slot], sequences[slot], large == null ? null : large.segment(), written[slot],
                    immediates[slot]);
            return lease;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits (lock held) until {@link #signal()}ed or {@code deadline}; false once the deadline passed. The caller
     * checks its condition again either way. In a BUSY_POLLING group it first spins for up to {@link #SPIN_NANOS}
     * with the lock released, watching {@link #signals}: the progress thread's hand-over then costs a cache line,
     * not a park and an unpark (several microseconds, more for a virtual thread whose carrier sleeps).
     */
    private boolean await(long deadline) throws InterruptedException {
        if (spinning && lock.getHoldCount() == 1) {
            long seen = signals;
            lock.unlock();
            try {
                long spinUntil = Math.min(deadline, System.nanoTime() + SPIN_NANOS);
                // The clock is read every 64 spins: it costs microseconds under emulation.
                for (int spins = 1; signals == seen; spins++) {
                    Thread.onSpinWait();
                    if ((spins & 63) == 0 && System.nanoTime() - spinUntil >= 0) {
                        break;
                    }
                }
            } finally {
                lock.lock();
            }
            if (signals != seen) {
                return true;
            }
        }
        if (deadline == Long.MAX_VALUE) {
            changed.await();
            return true;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        changed.awaitNanos(left);
        return true;
    }

    /** Wakes the callers waiting for a change (lock held). */
    private void signal() {
        signals++; // only under the lock: a plain increment of the volatile is enough
        changed.signalAll();
    }

    /** Throws what ended the channel, or refuses a closed one. */
    private void checkUsable() {
        if (failure != null) {
            throw ended();
        }
        if (draining) {
            throw new ChannelException(ChannelException.Reason.CLOSED, "the channel was closed: " + this, null);
        }
        if (state != State.OPEN) {
            throw new IllegalStateException("the channel is " + state.name().toLowerCase() + ": " + this);
        }
    }

    /**
     * RDMA READs all of {@code source} (a buffer the peer handed out, or a {@linkplain RemoteBuffer#slice slice} of
     * one) into {@code target} at {@code targetOffset}, and waits until the bytes are there.
     *
     * @throws IndexOutOfBoundsException  if the bytes do not fit {@code target} from {@code targetOffset}
     * @throws IllegalArgumentException   if {@code target} is registered in another protection domain than the
     *                                    channel's ({@link Connection#protectionDomain()}), or {@code source} is
     *                                    longer than {@link ChannelCapabilities#maxRemoteAccessSize()}
     * @throws RemoteOperationException   if the READ completed with an error (the channel ends with it)
     * @throws ChannelException           if the channel ended before
     * @throws InterruptedException       if the thread is interrupted while waiting
     */
    public void read(RemoteBuffer source, MemoryRegion target, long targetOffset) throws InterruptedException {
        await(operations, startOperation(RemoteOperation.READ, source, target, targetOffset, 0, 0, null));
    }

    /**
     * {@link #read} without waiting for its completion: the future completes (on a thread of its own, never the
     * progress thread) when the bytes are there, or exceptionally with a {@link RemoteOperationException} or
     * {@link ChannelException}. Waits only while {@link ChannelCapabilities#operationsInFlight()} operations are in
     * flight.
     *
     * @throws InterruptedException if the thread is interrupted while waiting for an operation to end
     */
    public CompletableFuture<Void> readAsync(RemoteBuffer source, MemoryRegion target, long targetOffset)
            throws InterruptedException {
        return startAsync(RemoteOperation.READ, source, target, targetOffset, 0, 0);
    }

    /**
     * RDMA WRITEs {@code target.length()} bytes of {@code source} from {@code sourceOffset} into {@code target} (a
     * buffer the peer handed out, or a slice of one), and waits until the peer's device has them. The peer is not
     * told (see {@link #writeWithImmediate}).
     *
     * @throws IndexOutOfBoundsException if the bytes are not inside {@code source} from {@code sourceOffset}
     * @throws IllegalArgumentException  as {@link #read}
     * @throws RemoteOperationException  if the WRITE completed with an error (the channel ends with it)
     * @throws ChannelException          if the channel ended before
     * @throws InterruptedException      if the thread is interrupted while waiting
     */
    public void write(MemoryRegion source, long sourceOffset, RemoteBuffer target) throws InterruptedException {
        await(operations, startOperation(RemoteOperation.WRITE, target, source, sourceOffset, 0, 0, null));
    }

    /** {@link #write} without waiting for its completion; as {@link #readAsync}. */
    public CompletableFuture<Void> writeAsync(MemoryRegion source, long sourceOffset, RemoteBuffer target)
            throws InterruptedException {
        return startAsync(RemoteOperation.WRITE, target, source, sourceOffset, 0, 0);
    }

    /**
     * {@link #write}, then tells the peer: its {@link #receive} returns a {@linkplain ReceivedMessage#isWriteNotice()
     * write notice} with {@code immediate} and the length written, in order with the messages. The notice takes a
     * receive at the peer, so it waits for a credit like {@link #send}.
     *
     * @throws UnsupportedOperationException on iWARP ({@link ChannelCapabilities#immediateData()})
     * @throws RemoteOperationException      if the WRITE completed with an error (the channel ends with it)
     * @throws ChannelException              if the channel ended before
     * @throws InterruptedException          if the thread is interrupted while waiting
     */
    public void writeWithImmediate(MemoryRegion source, long sourceOffset, RemoteBuffer target, int immediate)
            throws InterruptedException {
        await(operations, startOperation(RemoteOperation.WRITE_WITH_IMMEDIATE, target, source, sourceOffset, immediate,
                0, null));
    }

    /** {@link #writeWithImmediate} without waiting for its completion; as {@link #readAsync}. */
    public CompletableFuture<Void> writeWithImmediateAsync(MemoryRegion source, long sourceOffset, RemoteBuffer target,
                                                           int immediate) throws InterruptedException {
        return startAsync(RemoteOperation.WRITE_WITH_IMMEDIATE, target, source, sourceOffset, immediate, 0);
    }

    /**
     * Compare-and-swap on the 8 bytes at {@code offset} of {@code target}: if they hold {@code expected} they become
     * {@code desired}, atomically with respect to the peer's device. Waits for the result.
     *
     * @return the value the 8 bytes held before (equal to {@code expected} if the swap happened)
     * @throws IndexOutOfBoundsException     if the 8 bytes are not inside {@code target}
     * @throws IllegalArgumentException      if their address is not 8-byte aligned
     * @throws UnsupportedOperationException if the device has no atomics ({@link ChannelCapabilities#atomics()})
     * @throws RemoteOperationException      if it completed with an error (the channel ends with it)
     * @throws ChannelException              if the channel ended before
     * @throws InterruptedException          if the thread is interrupted while waiting
     */
    public long compareAndSwap(RemoteBuffer target, long offset, long expected, long desired)
            throws InterruptedException {
        return await(operations, startOperation(RemoteOperation.COMPARE_AND_SWAP, atomicTarget(target, offset), null, 0,
                expected, desired, null));
    }

    /** {@link #compareAndSwap} without waiting: the future gets the old value; as {@link #readAsync}. */
    public CompletableFuture<Long> compareAndSwapAsync(RemoteBuffer target, long offset, long expected, long desired)
            throws InterruptedException {
        return startAsync(RemoteOperation.COMPARE_AND_SWAP, atomicTarget(target, offset), null, 0, expected, desired);
    }

    /**
     * Fetch-and-add on the 8 bytes at {@code offset} of {@code target}: adds {@code add}, atomically with respect to
     * the peer's device. Waits for the result.
     *
     * @return the value the 8 bytes held before the addition
     * @throws IndexOutOfBoundsException     as {@link #compareAndSwap}, and its other exceptions
     * @throws InterruptedException          if the thread is interrupted while waiting
     */
    public long fetchAndAdd(RemoteBuffer target, long offset, long add) throws InterruptedException {
        return await(operations, startOperation(RemoteOperation.FETCH_AND_ADD, atomicTarget(target, offset), null, 0,
                add, 0, null));
    }

    /** {@link #fetchAndAdd} without waiting: the future gets the old value; as {@link #readAsync}. */
    public CompletableFuture<Long> fetchAndAddAsync(RemoteBuffer target, long offset, long add)
            throws InterruptedException {
        return startAsync(RemoteOperation.FETCH_AND_ADD, atomicTarget(target, offset), null, 0, add, 0);
    }

    /** {@link #startOperation} with a future for the result. */
    private <T> CompletableFuture<T> startAsync(RemoteOperation operation, RemoteBuffer remote, MemoryRegion local,
                                                long localOffset, long first, long second)
            throws InterruptedException {
        CompletableFuture<T> future = new CompletableFuture<>();
        startOperation(operation, remote, local, localOffset, first, second, future);
        return future;
    }

    /** The 8 bytes of an atomic, checked against the advertised buffer and for alignment. */
    private static RemoteBuffer atomicTarget(RemoteBuffer target, long offset) {
        RemoteBuffer word = Objects.requireNonNull(target, "target").slice(offset, Long.BYTES);
        if ((word.address() & (Long.BYTES - 1)) != 0) {
            throw new IllegalArgumentException("an atomic needs an 8-byte aligned remote address, not 0x"
                    + Long.toHexString(word.address()) + " (" + target + " at " + offset + ")");
        }
        return word;
    }

    /**
     * Checks and posts one one-sided operation on {@code remote}, waiting for a free operation slot (and, for a
     * WRITE with immediate, a credit).
     *
     * @param local  the READ's target or the WRITE's source (unused by atomics, which land in the channel's own
     *               region)
     * @param first  the immediate, the compare value or the addend
     * @param second the swap value
     * @param future completed when it ends, or {@code null} for a caller that waits in
     *               {@link #await(PendingOperations, int)}
     * @return the operation's slot
     */
    private int startOperation(RemoteOperation operation, RemoteBuffer remote, MemoryRegion local, long localOffset,
                               long first, long second, CompletableFuture<?> future) throws InterruptedException {
        Objects.requireNonNull(remote, "remote");
        if (!operation.isAtomic()) {
            Objects.requireNonNull(local, operation == RemoteOperation.READ ? "target" : "source");
        }
        lock.lock();
        try {
            checkOpened();
            checkUsable();
            checkOperation(operation, remote, local);
            while (!canStart(operation)) {
                checkUsable();
                await(Long.MAX_VALUE);
            }
            int slot = operations.start(operation, remote, future, null);
            try {
                long id = workRequestId(OPERATION | slot);
                SendWorkRequests batch = sendBatch.clear();
                switch (operation) {
                    case READ -> batch.rdmaRead(id, remote.address(), remote.rkey());
                    case WRITE -> batch.rdmaWrite(id, remote.address(), remote.rkey());
                    case WRITE_WITH_IMMEDIATE -> batch.rdmaWriteWithImmediate(id, remote.address(), remote.rkey(),
                            (int) first);
                    case COMPARE_AND_SWAP -> batch.compareAndSwap(id, remote.address(), remote.rkey(), first, second);
                    case FETCH_AND_ADD -> batch.fetchAndAdd(id, remote.address(), remote.rkey(), first);
                }
                batch.signaled();
                if (operation.isAtomic()) {
                    batch.gather(atomicRegion, (long) slot * Long.BYTES, Long.BYTES);
                } else if (remote.length() > 0) {
                    batch.gather(local, localOffset, remote.length());
                }
                queuePair.postSend(batch);
            } catch (RuntimeException e) {
                operations.abandon(slot);
                throw e;
            }
            if (operation == RemoteOperation.WRITE_WITH_IMMEDIATE) {
                ledger.dataSent(); // the notice takes one of the peer's data receives
                nextSendSequence++;
            }
            return slot;
        } finally {
            lock.unlock();
        }
    }

    /** Refuses, before C, what the channel's device or protection domain cannot do (lock held, opened). */
    private void checkOperation(RemoteOperation operation, RemoteBuffer remote, MemoryRegion local) {
        if (local != null) {
            checkDomain(operation.toString(), local);
        }
        if (remote.length() > capabilities.maxRemoteAccessSize()) {
            throw new IllegalArgumentException(operation + " of " + remote.length() + " bytes: the port moves at most "
                    + capabilities.maxRemoteAccessSize() + " bytes in one request (max_msg_sz): " + this);
        }
        if (operation.isAtomic() && !capabilities.atomics()) {
            throw new UnsupportedOperationException(operation + ": " + connection.context().device().name()
                    + " reports atomic_cap NONE: " + this);
        }
        if (operation == RemoteOperation.WRITE_WITH_IMMEDIATE && !capabilities.immediateData()) {
            throw new UnsupportedOperationException(operation + ": iWARP (" + connection.context().device().name()
                    + ") has no immediate data: " + this);
        }
    }

    private void checkDomain(String what, MemoryRegion local) {
        if (local.protectionDomain() != queuePair.protectionDomain()) {
            throw new IllegalArgumentException(what + ": the local region is registered in "
                    + local.protectionDomain() + ", not in the channel's " + queuePair.protectionDomain()
                    + " (register it in connection().protectionDomain()): " + this);
        }
    }

    private boolean canStart(RemoteOperation operation) {
        return failure == null && state == State.OPEN && operations.hasFree()
                && (operation != RemoteOperation.WRITE_WITH_IMMEDIATE || ledger.dataCredits() > 0);
    }

    /** Waits for the blocking operation or send in {@code slot} of {@code pending} and takes its result. */
    private long await(PendingOperations pending, int slot) throws InterruptedException {
        lock.lock();
        try {
            try {
                while (!pending.isDone(slot)) {
                    if (failure != null) {
                        pending.detach(slot);
                        throw ended();
                    }
                    await(Long.MAX_VALUE);
                }
            } catch (InterruptedException e) {
                pending.detach(slot);
                throw e;
            }
            return pending.take(slot);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends {@code lease} and posts its buffer again for the peer (unless the channel ended: then it is not needed).
     *
     * @param quietIfReleased true for a close, which does nothing the second time; false for a release, which then
     *                        throws {@link IllegalStateException}
     */
    void release(ReceivedMessage lease, int slot, boolean quietIfReleased) {
        MemoryRegion large;
        lock.lock();
        try {
            if (!lease.endLease()) {
                if (quietIfReleased) {
                    return;
                }
                throw new IllegalStateException("the message was released already: " + this);
            }
            large = largeRegions[slot];
            largeRegions[slot] = null;
            if (state == State.OPEN && failure == null) {
                postReceive(slot);
                ledger.dataReceivePosted();
                sendControls();
            }
        } finally {
            lock.unlock();
        }
        if (large != null) {
            largeBuffers.release(large);
        }
    }

    /** What ended the channel, for one more caller (lock held, failure set). */
    private ChannelException ended() {
        return new ChannelException(failure.reason(), failure.getMessage(), failure);
    }

    /** A completion of this channel's queue pair (progress thread). */
    void completed(WorkCompletions completions, int i, int what) {
        lock.lock();
        try {
            int slot = what & SLOT_MASK;
            int kind = what & ~SLOT_MASK;
            if (kind == OPERATION) {
                operationCompleted(completions, i, slot);
                return;
            }
            if (kind == ZERO_COPY) {
                zeroCopyCompleted(completions, i, slot);
                return;
            }
            boolean receive = kind == RECEIVE;
            if (kind == FETCH && completions.isSuccess(i)) {
                fetched(slot);
                return;
            }
            if (kind == SEND) {
                dataSendsInFlight--;
                if (slot != NO_SLOT) {
                    freeSendBuffers[freeSendCount++] = slot;
                }
            } else if (kind == CONTROL && slot != NO_SLOT) {
                freeControlBuffers[freeControlCount++] = slot;
            }
            if (!completions.isSuccess(i)) {
                if (state == State.OPEN && completions.status(i) != WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR) {
                    WorkCompletionOpcode posted = receive ? WorkCompletionOpcode.RECEIVE : kind == FETCH
                            ? WorkCompletionOpcode.RDMA_READ : WorkCompletionOpcode.SEND;
                    failLocked(ChannelException.Reason.TRANSPORT_FAILED, "a " + (kind == FETCH
                            ? "READ of a large message" : receive ? "receive" : "send") + " failed",
                            completions.failure(i, posted, toString()));
                } else if (state == State.OPEN) {
                    failLocked(ChannelException.Reason.PEER_DISCONNECTED, "the connection's queue pair was flushed"
                            + " (disconnected)", completions.failure(i, WorkCompletionOpcode.UNKNOWN, toString()));
                }
                return;
            }
            if (receive) {
                boolean notice = completions.opcode(i) == WorkCompletionOpcode.RECEIVE_RDMA_WRITE_WITH_IMMEDIATE;
                int immediate = notice ? completions.immediateData(i) : 0;
                if (state == State.CONNECTING) {
                    earlySlots[earlyCount] = slot;
                    earlyNotices[earlyCount] = notice;
                    earlyImmediates[earlyCount] = immediate;
                    earlyLengths[earlyCount++] = completions.byteLength(i);
                } else if (state == State.OPEN) {
                    arrived(slot, completions.byteLength(i), notice, immediate);
                }
                return;
            }
            sendControls(); // a control message may have waited for a buffer
            signal();
        } finally {
            lock.unlock();
        }
    }

    /** A one-sided operation ended: its caller or future gets the result (lock held). */
    private void operationCompleted(WorkCompletions completions, int i, int slot) {
        RemoteOperation operation = operations.operation(slot);
        if (operation == null) {
            return; // its caller gave up and the channel ended: nobody waits
        }
        // Every end frees a slot or wakes a blocking caller: callers waiting for either are woken below.
        signal();
        if (completions.isSuccess(i)) {
            long old = operation.isAtomic() ? atomicRegion.segment().get(ValueLayout.JAVA_LONG,
                    (long) slot * Long.BYTES) : 0;
            operations.end(slot, old, null);
        } else if (failure == null) {
            // The first news of the failure: this operation's own (a flush too, e.g. after the peer's TERMINATE).
            RemoteOperationException e = new RemoteOperationException(operation, operations.remote(slot),
                    completions.failure(i, operation.opcode(), null), toString());
            operations.end(slot, 0, e);
            if (e.status() == WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR) {
                failLocked(ChannelException.Reason.PEER_DISCONNECTED, "the connection's queue pair was flushed"
                        + " (disconnected)", e);
            } else {
                failLocked(ChannelException.Reason.TRANSPORT_FAILED, operation + " failed", e);
            }
        } else {
            operations.end(slot, 0, ended());
        }
    }

    /**
     * A zero-copy send's SEND completed (lock held): a small one ends, its region free again; a large one also waits
     * for the peer's DONE. A failure ends the channel, and the send with it.
     */
    private void zeroCopyCompleted(WorkCompletions completions, int i, int entry) {
        if (completions.isSuccess(i)) {
            zeroCopyEvent(entry);
            return;
        }
        signal();
        if (failure == null) {
            boolean flushed = completions.status(i) == WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR;
            failLocked(flushed ? ChannelException.Reason.PEER_DISCONNECTED : ChannelException.Reason.TRANSPORT_FAILED,
                    flushed ? "the connection's queue pair was flushed (disconnected)" : "a zero-copy send failed",
                    completions.failure(i, WorkCompletionOpcode.SEND, toString()));
        }
        zeroCopySends.end(entry, 0, ended());
    }

    /** One of the events a zero-copy send waits for came; after the last, its region is free (lock held). */
    private void zeroCopyEvent(int entry) {
        if (--zeroCopyWaits[entry] == 0) {
            zeroCopySends.end(entry, 0, null);
            signal();
        }
    }

    /**
     * A message landed in receive {@code slot} (lock held, open): a DATA, CREDIT or ACK message with its header, or
     * the header-less notice of the peer's WRITE with immediate.
     */
    private void arrived(int slot, int byteLength, boolean notice, int immediate) {
        if (notice) {
            ledger.noticeReceived();
            queueArrival(slot, 0, nextReceiveSequence++, byteLength, immediate);
            sendControls();
            return;
        }
        MemorySegment buffer = leases[slot].buffer();
        try {
            if (byteLength < Header.BYTES) {
                throw new CreditLedger.ProtocolViolation("a message of " + byteLength + " bytes has no header");
            }
            byte type = Header.type(buffer, 0);
            if (ledger.headerReceived(type, Header.flags(buffer, 0), Header.granted(buffer, 0),
                    Header.controls(buffer, 0))) {
                signal();
            }
            switch (type) {
                case Header.DATA -> {
                    int sequence = Header.sequence(buffer, 0);
                    checkSequence(sequence);
                    nextReceiveSequence++;
                    queueArrival(slot, byteLength - Header.BYTES, sequence, -1, 0);
                }
                case Header.RENDEZVOUS -> {
                    int sequence = Header.sequence(buffer, 0);
                    checkSequence(sequence);
                    nextReceiveSequence++;
                    fetch(slot, sequence, byteLength, buffer);
                }
                case Header.CREDIT, Header.ACK -> {
                    postReceive(slot);
                    ledger.controlProcessed();
                }
                case Header.DONE -> {
                    int sequence = Header.sequence(buffer, 0);
                    postReceive(slot);
                    ledger.controlProcessed();
                    doneArrived(sequence);
                }
                default -> throw new CreditLedger.ProtocolViolation("a message of " + Header.typeName(type));
            }
            sendControls();
        } catch (CreditLedger.ProtocolViolation e) {
            failLocked(ChannelException.Reason.PROTOCOL, "the peer broke the messaging protocol: " + e.getMessage(),
                    null);
        }
    }

    private void checkSequence(int sequence) {
        if (sequence != nextReceiveSequence) {
            throw new CreditLedger.ProtocolViolation("message " + Integer.toUnsignedString(sequence)
                    + " arrived where " + Integer.toUnsignedString(nextReceiveSequence) + " was next");
        }
    }

    /**
     * A RENDEZVOUS landed in receive {@code slot}: queues the message (not yet ready, so that it keeps its place)
     * and READs its bytes from the peer's copy into a large buffer of this side (lock held).
     */
    private void fetch(int slot, int sequence, int byteLength, MemorySegment buffer) {
        if (byteLength < Header.RENDEZVOUS_BYTES) {
            throw new CreditLedger.ProtocolViolation("a RENDEZVOUS of " + byteLength + " bytes names no buffer");
        }
        RemoteBuffer source = RemoteBuffer.readFrom(buffer, Header.BYTES);
        if (source.length() == 0 || source.length() > options.maxMessageSize()) {
            throw new CreditLedger.ProtocolViolation("a RENDEZVOUS of " + source.length() + " bytes, where this side"
                    + " takes 1 to " + options.maxMessageSize());
        }
        try {
            MemoryRegion target = largeBuffers.acquire(source.length());
            largeRegions[slot] = target;
            queueArrival(slot, source.length(), sequence, -1, 0);
            ready[slot] = false;
            queuePair.postSend(sendBatch.clear().rdmaRead(workRequestId(FETCH | slot), source.address(),
                    source.rkey()).signaled().gather(target, 0, source.length()));
        } catch (RuntimeException e) {
            // Registration refused (memory lock limit) or the queue pair broke: this channel ends, not the thread.
            failLocked(ChannelException.Reason.TRANSPORT_FAILED, "could not READ a message of " + source.length()
                    + " bytes", e);
        }
    }

    /** A large message's bytes arrived: it may be received, and the peer's copy is free (progress thread). */
    private void fetched(int slot) {
        if (state != State.OPEN || failure != null) {
            return;
        }
        ready[slot] = true;
        int tail = pendingDoneHead + pendingDoneCount;
        pendingDones[tail >= receives ? tail - receives : tail] = sequences[slot];
        pendingDoneCount++;
        sendControls();
        signal();
    }

    /** Queues a data message for {@link #receive} (lock held). */
    private void queueArrival(int slot, long length, int sequence, long writtenBytes, int immediate) {
        int tail = arrivalHead + arrivalCount;
        arrivals[tail >= receives ? tail - receives : tail] = slot;
        arrivalCount++;
        lengths[slot] = length;
        sequences[slot] = sequence;
        written[slot] = writtenBytes;
        immediates[slot] = immediate;
        ready[slot] = true;
        signal();
    }

    /** Sends the CREDIT and ACK that the ledger calls for, as far as the send queue has room (lock held). */
    private void sendControls() {
        if (state != State.OPEN || failure != null) {
            return;
        }
        if (freeControlCount > 0 && ledger.creditDue()) {
            ledger.creditSent();
            postControl(Header.CREDIT, 0);
        }
        while (pendingDoneCount > 0 && freeControlCount > 0 && ledger.windowOpen()) {
            ledger.doneSent();
            postControl(Header.DONE, pendingDones[pendingDoneHead]);
            pendingDoneHead = pendingDoneHead + 1 == receives ? 0 : pendingDoneHead + 1;
            pendingDoneCount--;
        }
        if (freeControlCount > 0 && ledger.ackDue()) {
            ledger.ackSent();
            postControl(Header.ACK, 0);
        }
    }

    /** Posts a header-only message from a control buffer; inline ones give the buffer back at once. */
    private void postControl(byte type, int sequence) {
        int slot = freeControlBuffers[--freeControlCount];
        long offset = (long) slot * Header.BYTES;
        Header.write(controlRegion.segment(), offset, type, (byte) 0, ledger.granted(), ledger.controls(), sequence);
        boolean inline = Header.BYTES <= inlineLimit;
        post(controlRegion, CONTROL | (inline ? NO_SLOT : slot), offset, Header.BYTES, inline);
        if (inline) {
            freeControlBuffers[freeControlCount++] = slot;
        }
    }

    private void watchConnection() {
        try {
            while (true) {
                Optional<CmEvent> event = connection.nextEvent(Duration.ofDays(1));
                if (event.isPresent() && (event.get().type() == CmEventType.DISCONNECTED
                        || event.get().type() == CmEventType.DEVICE_REMOVAL)) {
                    fail(ChannelException.Reason.PEER_DISCONNECTED, "the connection manager reported "
                            + event.get().type(), null);
                    return;
                }
            }
        } catch (InterruptedException | IllegalStateException channelClosed) {
            // The channel is closing: nothing to watch any more.
        }
    }

    /** Ends the channel for every waiting and later call (the application still closes it). */
    void fail(ChannelException.Reason reason, String message, Throwable cause) {
        lock.lock();
        try {
            failLocked(reason, message, cause);
        } finally {
            lock.unlock();
        }
    }

    private void failLocked(ChannelException.Reason reason, String message, Throwable cause) {
        if (failure == null) {
            failure = new ChannelException(reason, message + ": " + this, cause);
            operations.failFutures(failure);
            signal();
        }
    }

    /**
     * Refuses new calls and waits, up to {@link MessagingOptions#closeTimeout()}, for what was sent to reach the peer
     * (each SEND acknowledged by its device, each large message READ; past the timeout it logs what had not); then
     * disconnects, fails every waiting call with {@link ChannelException} ({@link ChannelException.Reason#CLOSED}),
     * and closes the connection and the registered buffers. Idempotent.
     */
    @Override
    public void close() {
        String undelivered = null;
        lock.lock();
        try {
            if (state == State.CLOSING || state == State.CLOSED || draining) {
                return;
            }
            if (state == State.OPEN && failure == null) {
                undelivered = drain();
            }
            state = State.CLOSING;
            failLocked(ChannelException.Reason.CLOSED, "the channel was closed", null);
        } finally {
            lock.unlock();
        }
        if (undelivered != null) {
            LOG.warn("{} closed after {} with {} not yet at the peer", this, options.closeTimeout(), undelivered);
        }
        if (connection != null) {
            connection.id().disconnect();
            try {
                watcher.join(options.connection().disconnectTimeout());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            connection.close();
        }
        lock.lock();
        try {
            state = State.CLOSED;
        } finally {
            lock.unlock();
        }
        release();
    }

    /**
     * Refuses new calls (waiting ones end with CLOSED) and waits, up to {@link MessagingOptions#closeTimeout()}, until
     * what was sent reached the peer: every SEND acknowledged by its device, every large message READ (its DONE),
     * every one-sided operation ended; or until the channel failed (lock held). Disconnecting first would flush
     * those requests, and the peer would miss messages that their senders were told had gone.
     *
     * @return what had not reached the peer when the time ran out, or {@code null}
     */
    private String drain() {
        draining = true;
        signal();
        long deadline = System.nanoTime() + options.closeTimeout().toNanos();
        try {
            while (failure == null && !drained()) {
                if (!await(deadline)) {
                    return dataSendsInFlight + " SENDs, " + outgoingCount + " large messages and "
                            + (operations.idle() ? 0 : "some") + " one-sided operations";
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closes at once, as a close must not throw it
        }
        return null;
    }

    /** Whether nothing this side sent is still on its way (lock held). */
    private boolean drained() {
        return dataSendsInFlight == 0 && outgoingCount == 0 && freeControlCount == controlBuffers
                && zeroCopySends.idle() && operations.idle();
    }

    /** Gives back the channel's handle, queue entries and buffers (its queue pair is gone). */
    private void release() {
        group.unregister(handle);
        if (completionQueue != null) {
            device.unreserve(completionQueue, completionEntries());
        }
        if (sendRegion != null) {
            sendRegion.close();
            controlRegion.close();
            atomicRegion.close();
            largeBuffers.close();
            lock.lock();
            try {
                for (int i = 0; i < outgoingCount; i++) {
                    if (outgoingCopies[i] != null) {
                        outgoingCopies[i].close();
                    }
                }
                outgoingCount = 0;
                zeroCopySends.abandonAll(failure);
                zeroCopyHeaders.close();
                // Large buffers of messages not handed out; a leased one is closed when the application releases it.
                for (int slot = 0; slot < receives; slot++) {
                    if (largeRegions[slot] != null && !leases[slot].isLeased()) {
                        largeRegions[slot].close();
                        largeRegions[slot] = null;
                    }
                }
            } finally {
                lock.unlock();
            }
        }
        if (receiveRegion != null) {
            receiveRegion.close();
        }
        if (sendBatch != null) {
            sendBatch.close();
        }
        if (receiveBatch != null) {
            receiveBatch.close();
        }
    }

    @Override
    public String toString() {
        Connection c = connection;
        return "MessageChannel(" + (c == null ? state.name().toLowerCase() : c.localAddress() + " -> "
                + c.peerAddress()) + ")";
    }
}
