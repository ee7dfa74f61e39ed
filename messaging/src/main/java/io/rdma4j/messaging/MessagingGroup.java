package io.rdma4j.messaging;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.Connector;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.WorkCompletions;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Message channels that share, per device, a protection domain, completion queues and one progress thread: the
 * thread polls the queues and hands each completion to the channel and operation waiting for it, so that any
 * number of connections cost one thread per device. Make channels with {@link #connect} and {@link #accept}.
 *
 * <pre>{@code
 * try (MessagingGroup group = MessagingGroup.create(ProgressMode.EVENT_DRIVEN);
 *      MessageChannel channel = group.connect(new InetSocketAddress("192.0.2.1", 7471),
 *              MessagingOptions.defaults(), Duration.ofSeconds(5))) {
 *     channel.send(MemorySegment.ofArray("hello".getBytes(UTF_8)));
 *     try (ReceivedMessage answer = channel.receive()) {
 *         System.out.println(answer.length() + " bytes");
 *     }
 * }
 * }</pre>
 *
 * <p>Lifetime: its channels hold it; {@link #close()} closes the channels that are still open, then stops the
 * progress threads and closes the queues and protection domains. Thread-safety: every method may be called from
 * any thread.
 */
public final class MessagingGroup implements AutoCloseable {

    /** Channel handles: index in the low 20 bits, a generation above, so that a reused index is told apart. */
    private static final int INDEX_BITS = 20;
    private static final int INDEX_MASK = (1 << INDEX_BITS) - 1;

    private final ProgressMode mode;
    private final Map<Context, DeviceProgress> devices = new IdentityHashMap<>();
    /** Open channels by index; read by the progress threads without a lock (the array is replaced, never changed). */
    private volatile MessageChannel[] channels = new MessageChannel[16];
    /** How often each index was given out; grows with the table. */
    private int[] generations = new int[16];
    private boolean closed;

    private MessagingGroup(ProgressMode mode) {
        this.mode = mode;
    }

    /** A group whose progress threads work in {@code mode}; they start with the first channel on each device. */
    public static MessagingGroup create(ProgressMode mode) {
        return new MessagingGroup(Objects.requireNonNull(mode, "mode"));
    }

    /** How the group's threads make progress. */
    public ProgressMode mode() {
        return mode;
    }

    /**
     * Connects to {@code remote} (through {@link Connector}) and opens a channel on the connection: its receives
     * are posted before the connect request leaves.
     *
     * @throws io.rdma4j.cm.ConnectionException if connecting fails (as {@link Connector#connect})
     * @throws ChannelException                  (PROTOCOL) if the peer is not an rdma4j messaging peer
     * @throws InterruptedException              if the thread is interrupted while waiting
     */
    public MessageChannel connect(InetSocketAddress remote, MessagingOptions options, Duration timeout)
            throws InterruptedException {
        Objects.requireNonNull(remote, "remote");
        MessageChannel channel = new MessageChannel(this, options);
        try {
            return open(channel, Connector.connect(remote, channel.connectionOptions(), timeout));
        } catch (RuntimeException | InterruptedException e) {
            channel.abort();
            throw e;
        }
    }

    /**
     * Waits up to {@code timeout} for a connect request on {@code acceptor} and opens a channel on the accepted
     * connection (its receives posted before the accept).
     *
     * @return the channel, or empty if no request came within {@code timeout}
     * @throws io.rdma4j.cm.ConnectionException if the connection failed to establish (keep accepting)
     * @throws ChannelException                  (PROTOCOL) if the peer is not an rdma4j messaging peer
     * @throws InterruptedException              if the thread is interrupted while waiting
     */
    public Optional<MessageChannel> accept(Acceptor acceptor, MessagingOptions options, Duration timeout)
            throws InterruptedException {
        Objects.requireNonNull(acceptor, "acceptor");
        MessageChannel channel = new MessageChannel(this, options);
        try {
            Optional<Connection> connection = acceptor.accept(channel.connectionOptions(), timeout);
            if (connection.isEmpty()) {
                channel.abort();
                return Optional.empty();
            }
            return Optional.of(open(channel, connection.get()));
        } catch (RuntimeException | InterruptedException e) {
            channel.abort();
            throw e;
        }
    }

    /** Opens {@code channel} on {@code connection}, or closes the connection if the peer's handshake is wrong. */
    private static MessageChannel open(MessageChannel channel, Connection connection) {
        try {
            return channel.open(connection);
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * The protection domain that the group's channels on {@code context}'s device use (made, with the device's
     * progress thread, on first use): register here the memory that those channels send from without copying, READ
     * into, WRITE from, or advertise to peers as a {@link io.rdma4j.cm.RemoteBuffer}. A server can register before its
     * first accept ({@link Acceptor#context()}); a client after connecting
     * ({@code channel.connection().protectionDomain()} is the same domain). Owned by the group: regions in it close
     * when the group closes, if not before.
     *
     * @throws IllegalStateException if the group is closed
     */
    public ProtectionDomain protectionDomain(Context context) {
        return device(Objects.requireNonNull(context, "context")).protectionDomain();
    }

    /** The device's progress (started on first use). */
    synchronized DeviceProgress device(Context context) {
        checkOpen();
        return devices.computeIfAbsent(context, c -> new DeviceProgress(this, c));
    }

    /** Gives {@code channel} a handle (its index and generation) for the work request ids of its queue pair. */
    synchronized int register(MessageChannel channel) {
        checkOpen();
        MessageChannel[] current = channels;
        for (int i = 0; i < current.length; i++) {
            if (current[i] == null) {
                return install(current, i, channel);
            }
        }
        if (current.length > INDEX_MASK) {
            throw new IllegalStateException("a group holds at most " + (INDEX_MASK + 1) + " channels");
        }
        generations = java.util.Arrays.copyOf(generations, current.length * 2);
        return install(java.util.Arrays.copyOf(current, current.length * 2), current.length, channel);
    }

    private int install(MessageChannel[] table, int index, MessageChannel channel) {
        MessageChannel[] next = table == channels ? table.clone() : table;
        next[index] = channel;
        channels = next;
        int generation = ++generations[index] & ((1 << (32 - INDEX_BITS)) - 1);
        return generation << INDEX_BITS | index;
    }

    /** Forgets a closed channel: completions that still name it are dropped. */
    synchronized void unregister(int handle) {
        MessageChannel[] next = channels.clone();
        next[handle & INDEX_MASK] = null;
        channels = next;
    }

    /** Hands the completion at {@code i} to its channel (progress threads only). */
    void dispatch(WorkCompletions completions, int i) {
        long id = completions.workRequestId(i);
        int handle = (int) (id >>> 32);
        MessageChannel[] table = channels;
        int index = handle & INDEX_MASK;
        MessageChannel channel = index < table.length ? table[index] : null;
        if (channel != null && channel.handle() == handle) {
            channel.completed(completions, i, (int) id);
        }
    }

    /** A progress thread died: its device's channels cannot go on. */
    void progressFailed(DeviceProgress device, Throwable cause) {
        for (MessageChannel channel : channels) {
            if (channel != null && channel.device() == device) {
                channel.fail(ChannelException.Reason.TRANSPORT_FAILED, "the progress thread failed", cause);
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the messaging group is closed");
        }
    }

    /** Closes the open channels, then stops the progress threads and closes what they polled. Idempotent. */
    @Override
    public void close() {
        List<MessageChannel> open = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (MessageChannel channel : channels) {
                if (channel != null) {
                    open.add(channel);
                }
            }
        }
        // At once: each close may wait for its channel's messages to reach the peer (closeTimeout).
        try (ExecutorService closing = Executors.newVirtualThreadPerTaskExecutor()) {
            for (MessageChannel channel : open) {
                closing.execute(channel::close);
            }
        }
        List<DeviceProgress> toClose;
        synchronized (this) {
            toClose = new ArrayList<>(devices.values());
            devices.clear();
        }
        for (DeviceProgress device : toClose) {
            device.close();
        }
    }

    @Override
    public String toString() {
        return "MessagingGroup(" + mode + ", " + devices.size() + " devices)";
    }
}
