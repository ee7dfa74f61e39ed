package io.rdma4j.messaging;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * What each side announces in the first 20 bytes of the connection's private data (docs/messaging.md): magic
 * {@code R4JM}, version 2, its control window, data credits, receive buffer size and largest message. The
 * application's private data
 * follows. Immutable.
 */
final class Handshake {

    static final int BYTES = 20;
    private static final int MAGIC = 0x52344A4D; // "R4JM"
    private static final byte VERSION = 2;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    final int controlWindow;
    final int receiveCredits;
    final int receiveBufferSize;
    final int maxMessageSize;

    Handshake(int controlWindow, int receiveCredits, int receiveBufferSize, int maxMessageSize) {
        this.controlWindow = controlWindow;
        this.receiveCredits = receiveCredits;
        this.receiveBufferSize = receiveBufferSize;
        this.maxMessageSize = maxMessageSize;
    }

    static Handshake of(MessagingOptions options) {
        return new Handshake(options.controlWindow(), options.receiveCredits(), options.receiveBufferSize(),
                options.maxMessageSize());
    }

    /** The handshake followed by the application's private data. */
    byte[] encode(byte[] applicationData) {
        byte[] bytes = new byte[BYTES + applicationData.length];
        MemorySegment s = MemorySegment.ofArray(bytes);
        s.set(U32, 0, MAGIC);
        s.set(ValueLayout.JAVA_BYTE, 4, VERSION);
        s.set(U16, 6, (short) controlWindow);
        s.set(U32, 8, receiveCredits);
        s.set(U32, 12, receiveBufferSize);
        s.set(U32, 16, maxMessageSize);
        System.arraycopy(applicationData, 0, bytes, BYTES, applicationData.length);
        return bytes;
    }

    /**
     * Reads the peer's handshake from its private data.
     *
     * @throws ChannelException (PROTOCOL) if the peer is not an rdma4j messaging peer of this version, or announces
     *                          sizes out of range
     */
    static Handshake decode(byte[] privateData, String peer) {
        if (privateData.length < BYTES) {
            throw violation(peer, "sent " + privateData.length + " bytes of private data, not the handshake's " + BYTES);
        }
        MemorySegment s = MemorySegment.ofArray(privateData);
        if (s.get(U32, 0) != MAGIC) {
            throw violation(peer, "is not an rdma4j messaging peer (no R4JM handshake in its private data)");
        }
        if (s.get(ValueLayout.JAVA_BYTE, 4) != VERSION) {
            throw violation(peer, "speaks messaging protocol version " + s.get(ValueLayout.JAVA_BYTE, 4) + ", not "
                    + VERSION);
        }
        int window = Short.toUnsignedInt(s.get(U16, 6));
        int credits = s.get(U32, 8);
        int bufferSize = s.get(U32, 12);
        int maxMessage = s.get(U32, 16);
        if (window < 2 || credits < 1 || bufferSize < Header.RENDEZVOUS_BYTES || bufferSize > MessagingOptions.MAX_RECEIVE_BUFFER
                || maxMessage < bufferSize - Header.BYTES || maxMessage > MessagingOptions.MAX_MESSAGE) {
            throw violation(peer, "announces a control window of " + window + ", " + credits + " credits, "
                    + bufferSize + "-byte receive buffers and messages up to " + maxMessage + " bytes");
        }
        return new Handshake(window, credits, bufferSize, maxMessage);
    }

    /** The application's private data after the handshake. */
    static byte[] applicationData(byte[] privateData) {
        return java.util.Arrays.copyOfRange(privateData, BYTES, privateData.length);
    }

    private static ChannelException violation(String peer, String what) {
        return new ChannelException(ChannelException.Reason.PROTOCOL, "the peer " + peer + " " + what, null);
    }
}
