package io.rdma4j.verbs;

/** An enum constant that stands for one value of a C enum; {@link #of} maps C values back. */
interface CValue {

    /** The C value. */
    int value();

    /**
     * The constant of {@code type} whose C value is {@code value}.
     *
     * @throws IllegalArgumentException if none is
     */
    static <E extends Enum<E> & CValue> E of(Class<E> type, int value) {
        for (E e : type.getEnumConstants()) {
            if (e.value() == value) {
                return e;
            }
        }
        throw new IllegalArgumentException("no " + type.getSimpleName() + " has the C value " + value);
    }

    /** The constant of {@code type} for a C value, or {@code unknown} if none has it. */
    static <E extends Enum<E> & CValue> E of(Class<E> type, int value, E unknown) {
        for (E e : type.getEnumConstants()) {
            if (e.value() == value) {
                return e;
            }
        }
        return unknown;
    }

    /** A table from C value to constant, for enums whose C values are small and looked up on the data path. */
    static <E extends Enum<E> & CValue> E[] table(E[] values, java.util.function.IntFunction<E[]> newArray) {
        int max = 0;
        for (E e : values) {
            max = Math.max(max, e.value());
        }
        E[] table = newArray.apply(max + 1);
        for (E e : values) {
            if (e.value() >= 0) { // UNKNOWN (-1) stands for every value not in the table
                table[e.value()] = e;
            }
        }
        return table;
    }

    /** {@code table[value]}, or {@code unknown} for a value the table lacks (from a newer rdma-core). */
    static <E> E lookUp(E[] table, int value, E unknown) {
        E e = value >= 0 && value < table.length ? table[value] : null;
        return e != null ? e : unknown;
    }

    /** The C bit mask of a set of flag constants. */
    static int mask(java.util.Set<? extends CValue> flags) {
        int mask = 0;
        for (CValue flag : flags) {
            mask |= flag.value();
        }
        return mask;
    }
}
