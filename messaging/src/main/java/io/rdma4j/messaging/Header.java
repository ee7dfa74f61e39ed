package io.rdma4j.messaging;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The 16-byte header at the start of every message of the protocol (docs/messaging.md): type, flags, the sender's
 * cumulative data grants, its count of the peer's control messages processed, and a sequence number. Big-endian.
 * Stateless; reads and writes a header in place.
 */
final class Header {

    /** Its size; a message's payload follows it. */
    static final int BYTES = 16;

    /** Application data in the receive buffer. */
    static final byte DATA = 1;
    /** Grants only. */
    static final byte CREDIT = 2;
    /** Acknowledges control messages only (the reserved slot). */
    static final byte ACK = 3;
    /** A message too large for a receive buffer: the body names the sender's registered copy to READ. */
    static final byte RENDEZVOUS = 4;
    /** The RENDEZVOUS whose number is in the sequence field was read: its buffer is free. */
    static final byte DONE = 5;
    /** A RENDEZVOUS's length: the header and the sender's buffer as a {@link io.rdma4j.cm.RemoteBuffer}. */
    static final int RENDEZVOUS_BYTES = BYTES + io.rdma4j.cm.RemoteBuffer.BYTES;

    /** The sender has no data credit left after this message. */
    static final byte LOW = 1;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Header() {
    }

    static void write(MemorySegment buffer, long offset, byte type, byte flags, int granted, int controls,
            int sequence) {
        buffer.set(ValueLayout.JAVA_BYTE, offset, type);
        buffer.set(ValueLayout.JAVA_BYTE, offset + 1, flags);
        buffer.set(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 2, (short) 0);
        buffer.set(U32, offset + 4, granted);
        buffer.set(U32, offset + 8, controls);
        buffer.set(U32, offset + 12, sequence);
    }

    static byte type(MemorySegment buffer, long offset) {
        return buffer.get(ValueLayout.JAVA_BYTE, offset);
    }

    static byte flags(MemorySegment buffer, long offset) {
        return buffer.get(ValueLayout.JAVA_BYTE, offset + 1);
    }

    static int granted(MemorySegment buffer, long offset) {
        return buffer.get(U32, offset + 4);
    }

    static int controls(MemorySegment buffer, long offset) {
        return buffer.get(U32, offset + 8);
    }

    static int sequence(MemorySegment buffer, long offset) {
        return buffer.get(U32, offset + 12);
    }

    /** Whether {@code type} is a data message (takes a data credit): DATA or RENDEZVOUS. */
    static boolean isData(byte type) {
        return type == DATA || type == RENDEZVOUS;
    }

    /** The type's name, for messages. */
    static String typeName(byte type) {
        return switch (type) {
            case DATA -> "DATA";
            case CREDIT -> "CREDIT";
            case ACK -> "ACK";
            case RENDEZVOUS -> "RENDEZVOUS";
            case DONE -> "DONE";
            default -> "unknown type " + Byte.toUnsignedInt(type);
        };
    }
}
