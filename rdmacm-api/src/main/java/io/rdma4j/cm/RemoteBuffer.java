package io.rdma4j.cm;

import io.rdma4j.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Where a peer may RDMA WRITE or READ: a virtual address, the region's remote key and a length. Its fixed
 * 16-byte encoding ({@link #BYTES}) is the one of rdma-core's {@code rping} ({@code struct rping_rdma_info}: address
 * as a 64-bit, rkey and length as 32-bit big-endian integers), small enough for any connection's private data.
 * Immutable and thread-safe.
 *
 * @param address the first byte's address in the peer's memory (the region's IOVA)
 * @param rkey    the region's remote key
 * @param length  how many bytes, 0..4 GiB − 1
 */
public record RemoteBuffer(long address, int rkey, long length) {

    /** The size of the encoding. */
    public static final int BYTES = 16;

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** Checks the length. */
    public RemoteBuffer {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("length is 0..4294967295 (32 bits on the wire), not " + length);
        }
    }

    /** The whole of {@code region}. */
    public static RemoteBuffer of(MemoryRegion region) {
        return new RemoteBuffer(region.address(), region.rkey(), region.length());
    }

    /** {@code length} bytes of {@code region} from {@code offset}. */
    public static RemoteBuffer of(MemoryRegion region, long offset, long length) {
        if (offset < 0 || length < 0 || offset + length > region.length()) {
            throw new IndexOutOfBoundsException("bytes " + offset + ".." + (offset + length) + " of a "
                    + region.length() + "-byte region");
        }
        return new RemoteBuffer(region.address() + offset, region.rkey(), length);
    }

    /**
     * The {@code length} bytes from {@code offset} of this buffer: a part of what the peer advertised, checked
     * against it, so that a one-sided operation on the part stays inside the advertised range.
     *
     * @throws IndexOutOfBoundsException if the range is not inside this buffer, naming both
     */
    public RemoteBuffer slice(long offset, long length) {
        if (offset < 0 || length < 0 || offset > this.length - length) {
            throw new IndexOutOfBoundsException("bytes " + offset + " to " + offset + " + " + length
                    + " are not inside the remote buffer's " + this.length + " bytes (" + this + ")");
        }
        return new RemoteBuffer(address + offset, rkey, length);
    }

    /** The 16-byte encoding. */
    public byte[] toBytes() {
        MemorySegment bytes = MemorySegment.ofArray(new byte[BYTES]);
        writeTo(bytes, 0);
        return bytes.toArray(ValueLayout.JAVA_BYTE);
    }

    /** Writes the encoding into {@code segment} at {@code offset}. */
    public void writeTo(MemorySegment segment, long offset) {
        segment.set(U64, offset, address);
        segment.set(U32, offset + 8, rkey);
        segment.set(U32, offset + 12, (int) length);
    }

    /**
     * Decodes the first {@link #BYTES} bytes of {@code bytes} (e.g. a connection's private data, which InfiniBand
     * pads with zeros).
     *
     * @throws IllegalArgumentException if there are fewer than 16 bytes
     */
    public static RemoteBuffer fromBytes(byte[] bytes) {
        if (bytes.length < BYTES) {
            throw new IllegalArgumentException("a RemoteBuffer takes " + BYTES + " bytes, not " + bytes.length);
        }
        return readFrom(MemorySegment.ofArray(bytes), 0);
    }

    /** Decodes the encoding in {@code segment} at {@code offset}. */
    public static RemoteBuffer readFrom(MemorySegment segment, long offset) {
        return new RemoteBuffer(segment.get(U64, offset), segment.get(U32, offset + 8),
                Integer.toUnsignedLong(segment.get(U32, offset + 12)));
    }
}
