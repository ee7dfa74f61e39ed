package io.rdma4j.messaging;

import io.rdma4j.cm.CmEvent;
import io.rdma4j.cm.CmEventType;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairCapabilities;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletionOpcode;
import io.rdma4j.verbs.WorkCompletionStatus;
import io.rdma4j.verbs.WorkCompletions;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Whole messages over one reliable connection, with credit-based flow control (docs/messaging.md): {@link #send}
 * copies a message into a registered send buffer (inline when small) and waits only when the peer has no receive
 * posted for it; {@link #receive} hands out a {@link ReceivedMessage} in the registered receive buffer it arrived
 * in, which its release posts again. Messages arrive once, whole and in the order sent. Made by
 * {@link MessagingGroup#connect} or {@link MessagingGroup#accept}; the group's progress thread polls its
 * completions and watches the connection, so a peer's disconnect or a failed request ends every waiting call with
 * a {@link ChannelException}.
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
    private static final int SLOT_MASK = (1 << 28) - 1;
    /** A send that holds no buffer (inline). */
    private static final int NO_SLOT = SLOT_MASK;

    private enum State { CONNECTING, OPEN, CLOSING, CLOSED }

    private final MessagingGroup group;
    private final MessagingOptions options;
    private final int handle;
    private final Object lock = new Object();
    private final int receives;
    private final int receiveBufferSize;
    private final int sendQueueDepth;
    private final int controlBuffers;

    // Set while connecting, under the lock.
    private State state = State.CONNECTING;
    private volatile DeviceProgress device;
    private CompletionQueue completionQueue;
    private QueuePair queuePair;
    private MemoryRegion receiveRegion;
    private ReceivedMessage[] leases;
    private ReceiveWorkRequests receiveBatch;
    /** Receive completions that came before the channel opened (the peer spoke first): slot and length. */
    private int[] earlySlots;
    private int[] earlyLengths;
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
    private Thread watcher;

    // Guarded by the lock.
    private final int[] arrivals;
    private final long[] lengths;
    private final int[] sequences;
    private int arrivalHead;
    private int arrivalCount;
    private int dataSendsInFlight;
    private int nextSendSequence;
    private int nextReceiveSequence;
    private ChannelException failure;

    MessageChannel(MessagingGroup group, MessagingOptions options) {
        this.group = group;
        this.options = Objects.requireNonNull(options, "options");
        this.receives = CreditLedger.receivesPosted(options.receiveCredits(), options.controlWindow());
        this.receiveBufferSize = options.receiveBufferSize();
        // Data sends in flight are bounded by the send buffers, control messages by their own buffers: together
        // they never overfill the send queue, whatever the order of their completions.
        this.controlBuffers = options.controlWindow() + 2;
        this.sendQueueDepth = options.sendBuffers() + controlBuffers;
        this.arrivals = new int[receives];
        this.lengths = new long[receives];
        this.sequences = new int[receives];
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
                        .withInlineData(options.inlineSize()))
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
        synchronized (lock) {
            queuePair = qp;
            receiveRegion = qp.protectionDomain().allocateMemory((long) receives * receiveBufferSize,
                    Set.of(Access.LOCAL_WRITE));
            leases = new ReceivedMessage[receives];
            receiveBatch = new ReceiveWorkRequests(1, 1);
            earlySlots = new int[receives];
            earlyLengths = new int[receives];
            for (int slot = 0; slot < receives; slot++) {
                leases[slot] = new ReceivedMessage(this, slot,
                        receiveRegion.segment().asSlice((long) slot * receiveBufferSize, receiveBufferSize));
                postReceive(slot);
            }
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
        synchronized (lock) {
            connection = established;
            ledger = new CreditLedger(options.receiveCredits(), options.controlWindow(), peer.receiveCredits,
                    peer.controlWindow);
            sendBufferSize = peer.receiveBufferSize;
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
            sendBatch = new SendWorkRequests(1, 1);
            state = State.OPEN;
            for (int i = 0; i < earlyCount; i++) {
                arrived(earlySlots[i], earlyLengths[i]);
            }
            earlyCount = 0;
        }
        watcher = Thread.ofVirtual().name("rdma4j-channel-events").start(this::watchConnection);
        return this;
    }

    /** Gives back what connecting took, when connecting failed (the connection, if any, is closed by then). */
    void abort() {
        synchronized (lock) {
            state = State.CLOSED;
        }
        release();
    }

    /** The largest message the peer receives: its receive buffer less the 16-byte header. */
    public int maxMessageSize() {
        synchronized (lock) {
            checkOpened();
            return sendBufferSize - Header.BYTES;
        }
    }

    /** The connection underneath (its verbs objects, addresses and the peer's private data after the handshake). */
    public Connection connection() {
        synchronized (lock) {
            checkOpened();
            return connection;
        }
    }

    /** The application's part of the private data the peer sent (after the layer's 16-byte handshake). */
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
        synchronized (lock) {
            int max = maxMessageSize();
            if (length > max) {
                throw new IllegalArgumentException("a message of " + length + " bytes is longer than the " + max
                        + " the peer receives (its receive buffer less the " + Header.BYTES + "-byte header): "
                        + this);
            }
            while (!canSendData()) {
                checkUsable();
                if (waitNanos == 0 || !await(deadline)) {
                    return false;
                }
            }
            int slot = freeSendBuffers[--freeSendCount];
            long offset = (long) slot * sendBufferSize;
            MemorySegment buffer = sendRegion.segment();
            MemorySegment.copy(message, 0, buffer, offset + Header.BYTES, length);
            byte flags = ledger.dataSent();
            Header.write(buffer, offset, Header.DATA, flags, ledger.granted(), ledger.controls(), nextSendSequence++);
            boolean inline = length + Header.BYTES <= inlineLimit;
            post(sendRegion, SEND | (inline ? NO_SLOT : slot), offset, length + Header.BYTES, inline);
            dataSendsInFlight++;
            if (inline) {
                freeSendBuffers[freeSendCount++] = slot; // inline: the provider copied it at the post
            }
            return true;
        }
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
        synchronized (lock) {
            checkOpened();
            if (state != State.OPEN) {
                checkUsable();
            }
            while (arrivalCount == 0) {
                checkUsable();
                if (waitNanos == 0 || !await(deadline)) {
                    return null;
                }
            }
            int slot = arrivals[arrivalHead];
            arrivalHead = arrivalHead + 1 == receives ? 0 : arrivalHead + 1;
            arrivalCount--;
            ReceivedMessage lease = leases[slot];
            lease.lease(lengths[slot], sequences[slot]);
            return lease;
        }
    }

    /** Waits on the lock until notified or {@code deadline}; false once the deadline passed. */
    private boolean await(long deadline) throws InterruptedException {
        if (deadline == Long.MAX_VALUE) {
            lock.wait();
            return true;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        lock.wait(Math.max(1, left / 1_000_000));
        return true;
    }

    /** Throws what ended the channel, or refuses a closed one. */
    private void checkUsable() {
        if (failure != null) {
            throw new ChannelException(failure.reason(), failure.getMessage(), failure);
        }
        if (state != State.OPEN) {
            throw new IllegalStateException("the channel is " + state.name().toLowerCase() + ": " + this);
        }
    }

    /**
     * Ends {@code lease} and posts its buffer again for the peer (unless the channel ended: then it is not needed).
     *
     * @param quietIfReleased true for a close, which does nothing the second time; false for a release, which then
     *                        throws {@link IllegalStateException}
     */
    void release(ReceivedMessage lease, int slot, boolean quietIfReleased) {
        synchronized (lock) {
            if (!lease.endLease()) {
                if (quietIfReleased) {
                    return;
                }
                throw new IllegalStateException("the message was released already: " + this);
            }
            if (state == State.OPEN && failure == null) {
                postReceive(slot);
                ledger.dataReceivePosted();
                sendControls();
            }
        }
    }

    /** A completion of this channel's queue pair (progress thread). */
    void completed(WorkCompletions completions, int i, int what) {
        synchronized (lock) {
            int slot = what & SLOT_MASK;
            int kind = what & ~SLOT_MASK;
            boolean receive = kind == RECEIVE;
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
                    failLocked(ChannelException.Reason.TRANSPORT_FAILED, "a " + (receive ? "receive" : "send")
                            + " failed", completions.failure(i, receive ? WorkCompletionOpcode.RECEIVE
                            : WorkCompletionOpcode.SEND, toString()));
                } else if (state == State.OPEN) {
                    failLocked(ChannelException.Reason.PEER_DISCONNECTED, "the connection's queue pair was flushed"
                            + " (disconnected)", completions.failure(i, WorkCompletionOpcode.UNKNOWN, toString()));
                }
                return;
            }
            if (receive) {
                if (state == State.CONNECTING) {
                    earlySlots[earlyCount] = slot;
                    earlyLengths[earlyCount++] = completions.byteLength(i);
                } else if (state == State.OPEN) {
                    arrived(slot, completions.byteLength(i));
                }
                return;
            }
            sendControls(); // a control message may have waited for a buffer
            lock.notifyAll();
        }
    }

    /** A message landed in receive {@code slot} (lock held, open). */
    private void arrived(int slot, int byteLength) {
        MemorySegment buffer = leases[slot].buffer();
        try {
            if (byteLength < Header.BYTES) {
                throw new CreditLedger.ProtocolViolation("a message of " + byteLength + " bytes has no header");
            }
            byte type = Header.type(buffer, 0);
            if (ledger.headerReceived(type, Header.flags(buffer, 0), Header.granted(buffer, 0),
                    Header.controls(buffer, 0))) {
                lock.notifyAll();
            }
            switch (type) {
                case Header.DATA -> {
                    int sequence = Header.sequence(buffer, 0);
                    if (sequence != nextReceiveSequence) {
                        throw new CreditLedger.ProtocolViolation("message " + Integer.toUnsignedString(sequence)
                                + " arrived where " + Integer.toUnsignedString(nextReceiveSequence) + " was next");
                    }
                    nextReceiveSequence++;
                    int tail = arrivalHead + arrivalCount;
                    arrivals[tail >= receives ? tail - receives : tail] = slot;
                    arrivalCount++;
                    lengths[slot] = byteLength - Header.BYTES;
                    sequences[slot] = sequence;
                    lock.notifyAll();
                }
                case Header.CREDIT, Header.ACK -> {
                    postReceive(slot);
                    ledger.controlProcessed();
                }
                default -> throw new CreditLedger.ProtocolViolation("a message of " + Header.typeName(type));
            }
            sendControls();
        } catch (CreditLedger.ProtocolViolation e) {
            failLocked(ChannelException.Reason.PROTOCOL, "the peer broke the messaging protocol: " + e.getMessage(),
                    null);
        }
    }

    /** Sends the CREDIT and ACK that the ledger calls for, as far as the send queue has room (lock held). */
    private void sendControls() {
        if (state != State.OPEN || failure != null) {
            return;
        }
        if (freeControlCount > 0 && ledger.creditDue()) {
            ledger.creditSent();
            postControl(Header.CREDIT);
        }
        if (freeControlCount > 0 && ledger.ackDue()) {
            ledger.ackSent();
            postControl(Header.ACK);
        }
    }

    /** Posts a header-only message from a control buffer; inline ones give the buffer back at once. */
    private void postControl(byte type) {
        int slot = freeControlBuffers[--freeControlCount];
        long offset = (long) slot * Header.BYTES;
        Header.write(controlRegion.segment(), offset, type, (byte) 0, ledger.granted(), ledger.controls(), 0);
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
        synchronized (lock) {
            failLocked(reason, message, cause);
        }
    }

    private void failLocked(ChannelException.Reason reason, String message, Throwable cause) {
        if (failure == null) {
            failure = new ChannelException(reason, message + ": " + this, cause);
            lock.notifyAll();
        }
    }

    /**
     * Disconnects, fails every waiting call with {@link ChannelException} ({@link ChannelException.Reason#CLOSED}),
     * and closes the connection and the registered buffers. Idempotent.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (state == State.CLOSING || state == State.CLOSED) {
                return;
            }
            state = State.CLOSING;
            failLocked(ChannelException.Reason.CLOSED, "the channel was closed", null);
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
        synchronized (lock) {
            state = State.CLOSED;
        }
        release();
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
