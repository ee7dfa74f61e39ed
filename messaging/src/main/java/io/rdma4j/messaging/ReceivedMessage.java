package io.rdma4j.messaging;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A message received on a {@link MessageChannel}, in place: its bytes are in the channel's registered receive buffer
 * (or, for a message larger than that, in the registered buffer it was READ into) until {@link #release()} gives
 * the buffer back to the peer (it is posted again, and the peer gets the credit). Nothing was copied. Release every
 * message, or the peer runs out of credit and waits.
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
    /** Where the message's bytes are: after the header in {@link #buffer}, or a large message's own buffer. */
    private MemorySegment payload;
    private long payloadOffset;
    private long length;
    private int sequence;
    /** For the notice of a WRITE with immediate: the bytes written, else -1. */
    private long written;
    private int immediate;
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

    /**
     * Hands the buffer's message out.
     *
     * @param large     the registered buffer a large message was READ into, or {@code null}: the receive buffer
     * @param written   for the notice of a WRITE with immediate, the bytes the WRITE placed; else -1
     * @param immediate the notice's immediate data
     */
    void lease(long length, int sequence, MemorySegment large, long written, int immediate) {
        this.payload = large == null ? buffer : large;
        this.payloadOffset = large == null ? Header.BYTES : 0;
        this.length = length;
        this.sequence = sequence;
        this.written = written;
        this.immediate = immediate;
        this.leased = true;
    }

    /** Whether the application holds it. */
    boolean isLeased() {
        return leased;
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

    /**
     * Whether this is the notice of the peer's RDMA WRITE with immediate ({@link MessageChannel#writeWithImmediate}):
     * it has no bytes of its own ({@link #length()} 0); the WRITE's bytes are in place in the buffer the peer named,
     * and arrived before this notice.
     */
    public boolean isWriteNotice() {
        checkLeased();
        return written >= 0;
    }

    /**
     * The immediate data of a {@linkplain #isWriteNotice() write notice}.
     *
     * @throws IllegalStateException if this is an ordinary message
     */
    public int immediate() {
        checkNotice();
        return immediate;
    }

    /**
     * How many bytes the peer's WRITE with immediate placed, for a {@linkplain #isWriteNotice() write notice}.
     *
     * @throws IllegalStateException if this is an ordinary message
     */
    public long writtenLength() {
        checkNotice();
        return written;
    }

    private void checkNotice() {
        if (!isWriteNotice()) {
            throw new IllegalStateException("an ordinary message carries no immediate data: " + this);
        }
    }

    /** The message's bytes, read-only, in the registered buffer (a new segment object per call). */
    public MemorySegment segment() {
        checkLeased();
        return payload.asSlice(payloadOffset, length).asReadOnly();
    }

    /** The byte at {@code offset}. */
    public byte byteAt(long offset) {
        checkLeased();
        java.util.Objects.checkIndex(offset, length);
        return payload.get(ValueLayout.JAVA_BYTE, payloadOffset + offset);
    }

    /** Copies the whole message into {@code target} at {@code offset}. */
    public void copyTo(MemorySegment target, long offset) {
        checkLeased();
        MemorySegment.copy(payload, payloadOffset, target, offset, length);
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
        if (!leased) {
            return "ReceivedMessage(released)";
        }
        return "ReceivedMessage(#" + Integer.toUnsignedString(sequence) + ", " + (written >= 0 ? "notice of a "
                + written + "-byte WRITE, immediate 0x" + Integer.toHexString(immediate) : length + " bytes") + ")";
    }
}
