package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/**
 * A libibverbs or librdmacm call failed. Carries the C function's name ({@link #verb()}) and the {@code errno} it
 * reported ({@link #errno()}); the message adds {@code strerror(errno)} and, where one is known, what to do about it.
 *
 * <p>Features a provider does not implement ({@code EOPNOTSUPP}, {@code ENOSYS}) are
 * {@link UnsupportedVerbException}s, so that callers can tell "not here" from "went wrong". Misuse that rdma4j
 * detects before calling C (closed objects, heap segments, bad arguments) is an {@link IllegalStateException} or
 * {@link IllegalArgumentException}, not this type.
 */
public class VerbException extends RdmaException {

    private static final long serialVersionUID = 1L;

    private final String verb;
    private final int errno;

    /**
     * @param verb  the C function that failed, e.g. {@code ibv_reg_mr_iova2}
     * @param errno the errno it reported
     * @param hint  extra advice for the message, or {@code null}
     */
    VerbException(String verb, int errno, String hint) {
        super(verb + " failed: errno " + errno + " (" + describe(errno) + ")" + (hint == null ? "" : "; " + hint));
        this.verb = verb;
        this.errno = errno;
    }

    /** Creates the exception for a failed verb: an {@link UnsupportedVerbException} for EOPNOTSUPP/ENOSYS. */
    public static VerbException of(String verb, int errno) {
        return of(verb, errno, null);
    }

    /**
     * As {@link #of(String, int)}, with advice or context appended to the message. Public for the modules built on
     * the verbs API (the connection manager).
     */
    public static VerbException of(String verb, int errno, String hint) {
        if (errno == RdmaCore.EOPNOTSUPP() || errno == RdmaCore.ENOSYS()) {
            return new UnsupportedVerbException(verb, errno, hint);
        }
        return new VerbException(verb, errno, hint);
    }

    /** The C verb that failed, e.g. {@code ibv_modify_qp}. */
    public String verb() {
        return verb;
    }

    /** The errno the verb reported (positive, as in {@code <errno.h>}). */
    public int errno() {
        return errno;
    }

    /** {@code strerror(errno)}. */
    static String describe(int errno) {
        return RdmaCore.strerror(errno).getString(0);
    }
}
