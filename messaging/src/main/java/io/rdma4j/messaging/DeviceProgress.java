package io.rdma4j.messaging;

import io.rdma4j.verbs.CompletionChannel;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.DeviceAttributes;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.WorkCompletions;
import java.time.Duration;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link MessagingGroup} keeps per device: the protection domain its channels register their buffers in,
 * the completion queues their queue pairs share (a new one when the current one has no room left for a
 * connection's entries, so that no queue can overflow), the completion channel of those queues in
 * {@link ProgressMode#EVENT_DRIVEN} groups, and the thread that polls them and dispatches each completion to its
 * channel. Closed by its group, after the group's channels.
 */
final class DeviceProgress {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceProgress.class);
    /** The entries of each completion queue, at most (less where the device allows fewer). */
    private static final int QUEUE_ENTRIES = 1 << 16;
    private static final int POLL_BATCH = 32;

    private final MessagingGroup group;
    private final Context context;
    private final ProtectionDomain protectionDomain;
    private final CompletionChannel completionChannel;
    private final DeviceAttributes attributes;
    private final int queueEntries;
    /**
     * The queues, which the progress thread polls without a lock: replaced (copy on write) when a queue is added,
     * under this.
     */
    private volatile CompletionQueue[] queues = new CompletionQueue[0];
    /** The entries reserved on each queue, by index; guarded by this. */
    private int[] reserved = new int[0];
    private final Thread thread;
    private volatile boolean stopping;

    DeviceProgress(MessagingGroup group, Context context) {
        this.group = group;
        this.context = context;
        this.attributes = context.queryDevice();
        this.queueEntries = Math.min(QUEUE_ENTRIES, attributes.maxCompletionQueueEntries());
        this.protectionDomain = context.allocateProtectionDomain();
        try {
            this.completionChannel = group.mode() == ProgressMode.EVENT_DRIVEN ? context.createCompletionChannel()
                    : null;
        } catch (RuntimeException e) {
            protectionDomain.close();
            throw e;
        }
        this.thread = Thread.ofPlatform().daemon().name("rdma4j-progress-" + context.device().name())
                .start(this::run);
    }

    ProtectionDomain protectionDomain() {
        return protectionDomain;
    }

    /** The device's limits, queried once. */
    DeviceAttributes attributes() {
        return attributes;
    }

    /**
     * A completion queue with {@code entries} free for one connection, reserved until {@link #unreserve}.
     *
     * @throws IllegalArgumentException if one connection needs more entries than a queue of this device holds
     */
    synchronized CompletionQueue reserve(int entries) {
        if (entries > queueEntries) {
            throw new IllegalArgumentException("a channel needs " + entries + " completion queue entries (its send"
                    + " queue and receives), more than the " + queueEntries + " of a queue on " + context);
        }
        CompletionQueue[] current = queues;
        for (int i = 0; i < current.length; i++) {
            if (reserved[i] + entries <= queueEntries) {
                reserved[i] += entries;
                return current[i];
            }
        }
        CompletionQueue cq = context.createCompletionQueue(queueEntries, completionChannel, 0);
        CompletionQueue[] next = Arrays.copyOf(current, current.length + 1);
        next[current.length] = cq;
        reserved = Arrays.copyOf(reserved, next.length);
        reserved[current.length] = entries;
        queues = next;
        return cq;
    }

    /** Gives back what {@link #reserve} took, once the connection's queue pair is gone. */
    synchronized void unreserve(CompletionQueue cq, int entries) {
        CompletionQueue[] current = queues;
        for (int i = 0; i < current.length; i++) {
            if (current[i] == cq) {
                reserved[i] -= entries;
            }
        }
    }

    private void run() {
        try (WorkCompletions completions = new WorkCompletions(POLL_BATCH)) {
            boolean busy = completionChannel == null;
            while (!stopping) {
                if (pollAll(completions) > 0) {
                    continue;
                }
                if (busy) {
                    Thread.onSpinWait();
                    continue;
                }
                for (CompletionQueue cq : queues) {
                    cq.requestNotification(false);
                }
                // A completion that arrived before its queue was armed raises no event: poll once more.
                if (pollAll(completions) == 0) {
                    completionChannel.await(Duration.ofMillis(100));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            if (!stopping) {
                LOG.error("the progress thread of {} failed: its channels are failed", context, e);
                group.progressFailed(this, e);
            }
        }
    }

    private int pollAll(WorkCompletions completions) {
        int total = 0;
        for (CompletionQueue cq : queues) {
            int n;
            do {
                n = cq.poll(completions);
                for (int i = 0; i < n; i++) {
                    group.dispatch(completions, i);
                }
                total += n;
            } while (n == POLL_BATCH);
        }
        return total;
    }

    /** Stops the thread, then closes the queues, the channel and the protection domain (the channels are gone). */
    void close() {
        stopping = true;
        try {
            thread.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            for (CompletionQueue cq : queues) {
                cq.close();
            }
            queues = new CompletionQueue[0];
            reserved = new int[0];
        }
        if (completionChannel != null) {
            completionChannel.close();
        }
        protectionDomain.close();
    }

    @Override
    public String toString() {
        return "DeviceProgress(" + context.device().name() + ")";
    }
}
