package io.rdma4j.messaging;

import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A channel's registered buffers for messages larger than a receive buffer (docs/messaging.md, rendezvous): the
 * sender's copy that the peer READs, and the receiver's target of that READ. Sizes are powers of two; a released
 * buffer is kept for the next message of its size class (at most {@link #KEPT_PER_CLASS} per class), since
 * registering memory costs far more than copying a message. Thread-safe; closed with its channel.
 */
final class LargeBuffers {

    /** Released buffers kept per size class; more are deregistered. */
    static final int KEPT_PER_CLASS = 4;
    /** Access for both uses: the peer READs a sender's buffer, the local device writes a receiver's. */
    private static final Set<Access> ACCESS = Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ);

    private final ProtectionDomain protectionDomain;
    /** Kept buffers by log2 of their size (up to 2^30, the largest message). */
    private final List<ArrayDeque<MemoryRegion>> kept = new ArrayList<>(31);
    private boolean closed;

    LargeBuffers(ProtectionDomain protectionDomain) {
        this.protectionDomain = protectionDomain;
        for (int sizeClass = 0; sizeClass <= 30; sizeClass++) {
            kept.add(new ArrayDeque<>(0));
        }
    }

    /**
     * A registered buffer of at least {@code length} bytes, kept or new.
     *
     * @throws IllegalStateException if the channel closed
     */
    MemoryRegion acquire(long length) {
        int sizeClass = sizeClass(length);
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the channel's large buffers are closed");
            }
            ArrayDeque<MemoryRegion> free = kept.get(sizeClass);
            if (!free.isEmpty()) {
                return free.pop();
            }
        }
        return protectionDomain.allocateMemory(1L << sizeClass, ACCESS);
    }

    /** Gives {@code region} back: kept for the next message of its size, or deregistered. */
    void release(MemoryRegion region) {
        int sizeClass = sizeClass(region.length());
        synchronized (this) {
            if (!closed && kept.get(sizeClass).size() < KEPT_PER_CLASS) {
                kept.get(sizeClass).push(region);
                return;
            }
        }
        region.close();
    }

    private static int sizeClass(long length) {
        return 64 - Long.numberOfLeadingZeros(Math.max(1, length) - 1);
    }

    /** Deregisters the kept buffers; buffers released later are deregistered at once. Idempotent. */
    void close() {
        synchronized (this) {
            closed = true;
        }
        for (ArrayDeque<MemoryRegion> free : kept) {
            free.forEach(MemoryRegion::close);
            free.clear();
        }
    }
}
