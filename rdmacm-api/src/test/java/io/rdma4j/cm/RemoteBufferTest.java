package io.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Unit tests: RemoteBuffer's wire format is rping's {@code struct rping_rdma_info}, big-endian. */
class RemoteBufferTest {

    @Test
    void encodesAddressRkeyAndLengthBigEndianAsRpingDoes() {
        RemoteBuffer b = new RemoteBuffer(0x0102030405060708L, 0x0A0B0C0D, 0xF0E0D0C0L);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 0x0A, 0x0B, 0x0C, 0x0D, (byte) 0xF0, (byte) 0xE0,
                (byte) 0xD0, (byte) 0xC0}, b.toBytes());
        assertEquals(b, RemoteBuffer.fromBytes(b.toBytes()));
    }

    @Test
    void decodesFromPaddedPrivateData() {
        RemoteBuffer b = new RemoteBuffer(42, -1, 1 << 20);
        byte[] padded = Arrays.copyOf(b.toBytes(), 196);
        assertEquals(b, RemoteBuffer.fromBytes(padded));
    }

    @Test
    void aSliceStaysInsideTheAdvertisedRange() {
        RemoteBuffer b = new RemoteBuffer(0x1000, 7, 64);
        assertEquals(new RemoteBuffer(0x1008, 7, 56), b.slice(8, 56));
        assertEquals(new RemoteBuffer(0x1040, 7, 0), b.slice(64, 0));
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> b.slice(8, 57));
        assertEquals("bytes 8 to 8 + 57 are not inside the remote buffer's 64 bytes (" + b + ")", e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> b.slice(-1, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> b.slice(Long.MAX_VALUE, 2));
    }

    @Test
    void refusesShortInputAndLengthsBeyond32Bits() {
        assertThrows(IllegalArgumentException.class, () -> RemoteBuffer.fromBytes(new byte[15]));
        assertThrows(IllegalArgumentException.class, () -> new RemoteBuffer(0, 0, 1L << 32));
        assertThrows(IllegalArgumentException.class, () -> new RemoteBuffer(0, 0, -1));
    }
}
