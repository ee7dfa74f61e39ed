package io.rdma4j.verbs;

import io.rdma4j.bindings.verbs.RdmaCore;

/**
 * A verb failed. Carries the C verb's name ({@link #verb()}) and the {@code errno} it reported ({@link #errno()});
 * the message adds {@code strerror(errno)} and, where one is known, what to do about it.
 *
 * <p>Features a provider does not implement ({@code EOPNOTSUPP}, {@code ENOSYS}) are
 * {@link UnsupportedVerbException}s, so that callers can tell "not here" from "went wrong". Misuse that rdma4j
 * detects before calling C (closed objects, heap segments, bad arguments) is an {@link IllegalStateException} or
 * {@link IllegalArgumentException}, not this type.
 */
public class RdmaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String verb;
    private final int errno;

    /**
     * @param verb  the C function that failed, e.g. {@code ibv_reg_mr_iova2}
     * @param errno the errno it reported
     * @param hint  extra advice for the message, or {@code null}
     */
    protected RdmaException(String verb, int errno, String hint) {
        super(verb + " failed: errno " + errno + " (" + describe(errno) + ")" + (hint == null ? "" : "; " + hint));
        this.verb = verb;
        this.errno = errno;
    }

    /** Creates the exception for a failed verb: an {@link UnsupportedVerbException} for EOPNOTSUPP/ENOSYS. */
    public static RdmaException of(String verb, int errno) {
        return of(verb, errno, null);
    }

    /**
     * As {@link #of(String, int)}, with advice or context appended to the message. Public for the modules built on
     * the verbs API (the connection manager).
     */
    public static RdmaException of(String verb, int errno, String hint) {
        if (errno == RdmaCore.EOPNOTSUPP() || errno == RdmaCore.ENOSYS()) {
            return new UnsupportedVerbException(verb, errno, hint);
        }
        return new RdmaException(verb, errno, hint);
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
