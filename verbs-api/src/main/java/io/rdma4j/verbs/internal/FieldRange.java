package io.rdma4j.verbs.internal;

/**
 * Range checks for values bound for C fields narrower than Java's {@code int} ({@code uint8_t} ports and GID
 * indexes, 24-bit QP numbers and PSNs, 3-bit retry counts): a value out of range is an
 * {@link IllegalArgumentException} naming the field and its range, never silently truncated into another valid
 * value (port 257 would otherwise become port 1).
 */
public final class FieldRange {

    private FieldRange() {
    }

    /** Returns {@code value} if it is within {@code min..max}. */
    public static int check(String field, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(field + " is " + min + ".." + max + ", not " + value);
        }
        return value;
    }

    /** Returns {@code value} if it fits a {@code uint8_t}. */
    public static int unsigned8(String field, int value) {
        return check(field, value, 0, 0xFF);
    }

    /** Returns {@code value} if it fits a {@code uint16_t}. */
    public static int unsigned16(String field, int value) {
        return check(field, value, 0, 0xFFFF);
    }

    /** Returns {@code value} as the C {@code uint32_t} it fits (an SGE's length up to 4 GiB - 1). */
    public static int unsigned32(String field, long value) {
        if (value < 0 || value > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException(field + " is 0.." + 0xFFFF_FFFFL + ", not " + value);
        }
        return (int) value;
    }

    /** Returns {@code value} if it fits {@code bits} unsigned bits (a 24-bit QP number, a 20-bit flow label). */
    public static int bits(String field, int value, int bits) {
        return check(field, value, 0, (1 << bits) - 1);
    }
}
