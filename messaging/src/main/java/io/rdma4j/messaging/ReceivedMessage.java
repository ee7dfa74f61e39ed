package io.rdma4j.messaging;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A message received on a {@link MessageChannel}, in place: its bytes are in the channel's registered receive buffer
 * until {@link #release()} gives the buffer back to the peer (it is posted again, and the peer gets the credit).
 * Nothing was copied. Release every message, or the peer runs out of credit and waits.
 *
 * <p>The lease objects are the receive buffers' own and are reused for later messages, so that receiving allocates
 * nothing: every accessor after {@link #release()} throws {@link IllegalStateException} until the buffer's next
 * message is handed out in this object. Keep no reference beyond the release. Thread-safety: a lease may move to
 * another thread (with a happens-before edge, e.g. a queue); use it from one thread at a time.
 */
public final class ReceivedMessage implements AutoCloseable {

    private final MessageChannel channel;
    private final int slot;
    private final MemorySegment buffer;
    private long length;
    private int sequence;
    private boolean leased;

    ReceivedMessage(MessageChannel channel, int slot, MemorySegment buffer) {
        this.channel = channel;
        this.slot = slot;
        this.buffer = buffer;
    }

    /** The whole receive buffer, header included. */
    MemorySegment buffer() {
        return buffer;
    }

    /** Hands the buffer's message out. */
    void lease(long length, int sequence) {
        this.length = length;
        this.sequence = sequence;
        this.leased = true;
    }

    /** Takes the lease back; false if it was released already. */
    boolean endLease() {
        boolean was = leased;
        leased = false;
        return was;
    }

    private void checkLeased() {
        if (!leased) {
            throw new IllegalStateException("the message was released: its buffer belongs to the channel again ("
                    + channel + ")");
        }
    }

    /** The message's length in bytes. */
    public long length() {
        checkLeased();
        return length;
    }

    /** The message's number on the channel, counting from 0 in the order the peer sent them. */
    public int sequence() {
        checkLeased();
        return sequence;
    }

    /** The message's bytes, read-only, in the registered receive buffer (a new segment object per call). */
    public MemorySegment segment() {
        checkLeased();
        return buffer.asSlice(Header.BYTES, length).asReadOnly();
    }

    /** The byte at {@code offset}. */
    public byte byteAt(long offset) {
        checkLeased();
        java.util.Objects.checkIndex(offset, length);
        return buffer.get(ValueLayout.JAVA_BYTE, Header.BYTES + offset);
    }

    /** Copies the whole message into {@code target} at {@code offset}. */
    public void copyTo(MemorySegment target, long offset) {
        checkLeased();
        MemorySegment.copy(buffer, Header.BYTES, target, offset, length);
    }

    /**
     * Gives the buffer back: it is posted again for the peer's next message, and the peer gets the credit.
     *
     * @throws IllegalStateException if it was released already
     */
    public void release() {
        channel.release(this, slot, false);
    }

    /** {@link #release()}, once: for try-with-resources (a second close does nothing). */
    @Override
    public void close() {
        channel.release(this, slot, true);
    }

    @Override
    public String toString() {
        return leased ? "ReceivedMessage(#" + Integer.toUnsignedString(sequence) + ", " + length + " bytes)"
                : "ReceivedMessage(released)";
    }
}
