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
}
