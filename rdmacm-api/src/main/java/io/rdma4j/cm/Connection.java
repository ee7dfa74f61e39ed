package io.rdma4j.cm;

import io.rdma4j.verbs.CompletionChannel;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.NativeObject;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairType;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import io.rdma4j.verbs.internal.VerbsInternals;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * An established reliable connection made by {@link Connector} or {@link Acceptor}: its id on an event channel of
 * its own, a queue pair that librdmacm connected, its completion queue and protection domain (the connection's own
 * or shared ones from {@link ConnectionOptions}), and what the peer announced.
 *
 * <p>Post to {@link #queuePair()} and poll {@link #completionQueue()} as with any verbs objects; register memory in
 * {@link #protectionDomain()}. {@link #close()} disconnects and tears everything down in order: queue pair, id and
 * channel, then the completion queue and protection domain if they are the connection's own (closing the
 * protection domain closes the regions registered in it).
 *
 * <p>Thread-safety: the verbs objects are as thread-safe as ever; {@link #nextEvent} may be called from one thread
 * at a time; {@link #close()} from any thread, once or more. {@link #close()} refuses, before it disconnects, while
 * a {@link io.rdma4j.verbs.QueuePairPoster} or {@link io.rdma4j.verbs.CompletionQueuePoller} of the connection's
 * queue pair or own completion queue is open ({@link IllegalStateException}).
 */
public final class Connection implements AutoCloseable {

    private final Builder parts;
    private final EventChannel channel;
    private final CmId id;
    private final QueuePair queuePair;
    private final CompletionQueue completionQueue;
    private final ProtectionDomain protectionDomain;
    private final CmEvent established;
    private final Duration disconnectTimeout;
    private volatile boolean peerDisconnected;
    /** The two ends, read once established: what a connection was stays readable after it ends. */
    private final InetSocketAddress localAddress;
    private final InetSocketAddress peerAddress;

    private Connection(Builder parts, CmEvent established) {
        this.parts = parts;
        this.channel = parts.channel;
        this.id = parts.id;
        this.localAddress = parts.id.localAddress();
        this.peerAddress = parts.id.peerAddress();
        this.queuePair = parts.queuePair;
        this.completionQueue = parts.completionQueue;
        this.protectionDomain = parts.protectionDomain;
        this.disconnectTimeout = parts.options.disconnectTimeout();
        this.established = established;
    }

    /** The connection's id. */
    public CmId id() {
        return id;
    }

    /** The connected RC queue pair (the id's own). */
    public QueuePair queuePair() {
        return queuePair;
    }

    /** The completion queue of both of the queue pair's queues. */
    public CompletionQueue completionQueue() {
        return completionQueue;
    }

    /**
     * Polls the completion queue into {@code completions}; if it is empty, waits up to {@code timeout} for the next
     * completion on the connection's completion channel ({@code ibv_req_notify_cq}, {@code ibv_get_cq_event}),
     * without spinning, then polls again. Needs {@link ConnectionOptions#completionEvents()}.
     *
     * @return how many completions were polled: 0 only after {@code timeout}
     * @throws IllegalStateException if the connection has no completion channel
     * @throws InterruptedException  if the thread is interrupted while waiting
     */
    public int awaitCompletions(WorkCompletions completions, Duration timeout) throws InterruptedException {
        CompletionChannel events = parts.completionChannel;
        if (events == null) {
            throw new IllegalStateException("the connection was made without completionEvents: poll its queue");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            int n = completionQueue.poll(completions);
            if (n > 0) {
                return n;
            }
            completionQueue.requestNotification(false);
            // A completion that arrived before the queue was armed raises no event: poll once more.
            n = completionQueue.poll(completions);
            long left = deadline - System.nanoTime();
            if (n > 0 || left <= 0 || events.await(Duration.ofNanos(left)).isEmpty()) {
                return n;
            }
        }
    }

    /**
     * Posts a signaled RDMA WRITE of zero bytes with {@code workRequestId}: data that consumes no receive at the peer
     * and names no memory (no key is checked for zero bytes), so any peer ignores it. It exists for siw's accept race
     * (Linux 6.1; README, "What the providers lack"): the passive side can leave a message that the active side sent
     * at once after connecting unread in its socket until more data arrives, and this is more data. A client that
     * spoke first and hears nothing can nudge, e.g. once a second while its answer is missing. The WRITE holds a slot
     * of the send queue until its completion is polled. A nudge posted as the peer answers and disconnects at once
     * ({@code rdma_server} does) can complete in error after the answer arrived (siw: local QP operation error, in
     * about 1 of 150 exchanges nudged every 10 ms): take its failure as the connection's end, not as a lost answer,
     * and let the receive's own completion decide. Thread-safety: that of {@link QueuePair#postSend}.
     *
     * @throws io.rdma4j.verbs.VerbException if {@code ibv_post_send} fails (e.g. the send queue is full)
     * @throws IllegalStateException         if the connection is closed
     */
    public void nudgePeer(long workRequestId) {
        try (SendWorkRequests write = new SendWorkRequests(1, 0)) {
            queuePair.postSend(write.rdmaWrite(workRequestId, 0, 0).signaled());
        }
    }

    /** The protection domain of the queue pair; register the connection's memory here. */
    public ProtectionDomain protectionDomain() {
        return protectionDomain;
    }

    /** The device context (librdmacm's). */
    public Context context() {
        return protectionDomain.context();
    }

    /** What the peer sent in its connect request or accept (on InfiniBand/RoCE padded with zeros). */
    public byte[] peerPrivateData() {
        return established.privateData();
    }

    /** The peer's connection parameters (its QP number, READ depths), where the transport reports them. */
    public Optional<ConnectionParameters> peerParameters() {
        return established.peerParameters();
    }

    /** The local address. */
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /** The peer's address. */
    public InetSocketAddress peerAddress() {
        return peerAddress;
    }

    /**
     * Waits up to {@code timeout} for the connection's next event (DISCONNECTED when the peer disconnects or
     * dies, DEVICE_REMOVAL, TIMEWAIT_EXIT).
     */
    public Optional<CmEvent> nextEvent(Duration timeout) throws InterruptedException {
        Optional<CmEvent> event = channel.next(timeout);
        if (event.isPresent() && event.get().type() == CmEventType.DISCONNECTED) {
            peerDisconnected = true;
        }
        return event;
    }

    /** Whether this side has seen DISCONNECTED (through {@link #nextEvent} or {@link #close}). */
    public boolean isDisconnected() {
        return peerDisconnected || id.state() == CmIdState.DISCONNECTED;
    }

    /**
     * Disconnects (the queue pair's posted work is flushed), waits up to the options' disconnect timeout for
     * DISCONNECTED, then closes the queue pair, id and channel, and the connection's own completion queue and
     * protection domain. Idempotent.
     */
    @Override
    public void close() {
        if (id.state() == CmIdState.CLOSED) {
            return;
        }
        refuseWhileInUse();
        try {
            if (id.state() == CmIdState.ESTABLISHED || id.state() == CmIdState.DISCONNECTED) {
                id.disconnect();
                awaitDisconnected();
            }
        } finally {
            channel.close();
            closeVerbs(parts);
        }
    }

    /**
     * Refuses before the disconnect rather than halfway through the teardown: a queue pair or completion queue that
     * a confined poster or poller holds (or a call on another thread) would refuse to close after it.
     */
    private void refuseWhileInUse() {
        VerbsInternals.Access verbs = VerbsInternals.access();
        List<NativeObject> closing = parts.ownsCompletionQueue ? List.of(queuePair, parts.completionQueue)
                : List.of(queuePair);
        for (NativeObject object : closing) {
            if (verbs.resource(object).isPinned()) {
                throw new IllegalStateException(this + " cannot close while " + object + " is in use: close its"
                        + " confined posters and pollers first (or let the call on another thread return)");
            }
        }
    }

    private void awaitDisconnected() {
        long deadline = System.nanoTime() + disconnectTimeout.toNanos();
        try {
            while (!isDisconnected()) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || nextEvent(Duration.ofNanos(left)).isEmpty()) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "Connection(" + id + ", " + queuePair + ")";
    }

    /** Collects what a connection is made of while it is set up, and closes it all if setting up fails. */
    static final class Builder implements AutoCloseable {
        final ConnectionOptions options;
        final EventChannel channel;
        CmId id;
        ProtectionDomain protectionDomain;
        CompletionQueue completionQueue;
        CompletionChannel completionChannel;
        QueuePair queuePair;
        boolean ownsProtectionDomain;
        boolean ownsCompletionQueue;
        private boolean built;
        /** The caller's bound on the whole setup, its name in messages, and when it runs out. */
        private final Duration timeout;
        private final String timeoutName;
        private final long deadline;

        /**
         * Starts the clock of {@code timeout} (called {@code timeoutName} in messages) now: after the channel was
         * created, so that loading librdmacm on first use does not count against the caller's steps.
         */
        Builder(ConnectionOptions options, EventChannel channel, Duration timeout, String timeoutName) {
            this.options = options;
            this.channel = channel;
            this.timeout = timeout;
            this.timeoutName = timeoutName;
            this.deadline = System.nanoTime() + timeout.toNanos();
        }

        /** How long a step may wait, and what bound that is, for the message if it runs out. */
        record Wait(Duration duration, String bound) {
            /** The duration for a C call that takes whole milliseconds, where 0 would mean its default. */
            Duration atLeastAMillisecond() {
                return duration.toMillis() == 0 ? Duration.ofMillis(1) : duration;
            }
        }

        /**
         * What {@code step} may wait: its own {@code limit} (called {@code limitName}; null for none), or what is left
         * of the caller's timeout if that is less.
         *
         * @throws ConnectionException if nothing is left of the caller's timeout
         */
        Wait budget(String step, CmEventType awaited, Duration limit, String limitName) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw ConnectionException.timedOut(step, awaited, ": the " + timeoutName + " of " + timeout
                        + " ran out before this step");
            }
            if (limit != null && limit.toNanos() <= left) {
                return new Wait(limit, "the " + limitName + " of " + limit);
            }
            return new Wait(Duration.ofNanos(left), "the " + timeoutName + " of " + timeout + " (this step had "
                    + Duration.ofNanos(left).toMillis() + " ms of it left)");
        }

        /**
         * Sets the options' ACK timeout on the id, and creates the protection domain, completion queue and the
         * id's own queue pair on the id's context; a failed verb is a {@link ConnectionException} for {@code step}
         * that names the option which set what the device refused.
         */
        void createQueuePair(String step) {
            id.setAckTimeout(options.ackTimeout());
            Context context = id.context();
            protectionDomain = options.protectionDomain(context);
            if (protectionDomain == null) {
                protectionDomain = context.allocateProtectionDomain();
                ownsProtectionDomain = true;
            }
            completionQueue = options.completionQueue(context);
            if (completionQueue == null) {
                completionChannel = options.completionEvents() ? context.createCompletionChannel() : null;
                step(step + ": create its completion queue of " + options.completionQueueSize() + " entries"
                        + " (ConnectionOptions.completionQueueSize; by default the capabilities' send and receive"
                        + " depths together)", () -> completionQueue = context.createCompletionQueue(
                        options.completionQueueSize(), completionChannel, 0));
                ownsCompletionQueue = true;
            }
            step(step + ": create its queue pair with " + options.capabilities() + " (ConnectionOptions.capabilities)",
                    () -> queuePair = id.createQueuePair(protectionDomain.queuePair(QueuePairType.RELIABLE_CONNECTED)
                            .completionQueue(completionQueue).capabilities(options.capabilities())));
            options.onQueuePair().accept(queuePair);
        }

        /** Runs a step's librdmacm call; its failure becomes a {@link ConnectionException} naming the step. */
        void step(String step, Runnable call) {
            try {
                call.run();
            } catch (io.rdma4j.verbs.VerbException e) {
                throw ConnectionException.failed(step, e);
            }
        }

        /**
         * Waits on the channel for {@code awaited} as long as {@code wait} allows; a failure event or the end of the
         * wait ends in {@link ConnectionException}.
         */
        CmEvent await(CmEventType awaited, String step, Wait wait) throws InterruptedException {
            long until = System.nanoTime() + wait.duration().toNanos();
            while (true) {
                long left = until - System.nanoTime();
                Optional<CmEvent> event = left <= 0 ? Optional.empty() : channel.next(Duration.ofNanos(left));
                if (event.isEmpty()) {
                    throw ConnectionException.timedOut(step, awaited, " within " + wait.bound());
                }
                CmEvent e = event.get();
                if (e.id() == id && e.type() == awaited) {
                    return e;
                }
                if (e.id() == id) {
                    throw ConnectionException.failed(step, e);
                }
            }
        }

        Connection build(CmEvent established) {
            built = true;
            return new Connection(this, established);
        }

        @Override
        public void close() {
            if (built) {
                return;
            }
            channel.close();
            closeVerbs(this);
        }
    }

    /** Closes the verbs objects that the connection made for itself, in order. */
    private static void closeVerbs(Builder parts) {
        if (parts.ownsCompletionQueue) {
            parts.completionQueue.close();
        }
        // Made only with a queue of the connection's own, and closed even when that queue could not be created.
        if (parts.completionChannel != null) {
            parts.completionChannel.close();
        }
        if (parts.ownsProtectionDomain) {
            parts.protectionDomain.close();
        }
    }
}
