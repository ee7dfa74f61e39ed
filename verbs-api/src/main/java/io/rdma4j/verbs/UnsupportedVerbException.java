package io.rdma4j.verbs;

/**
 * The provider does not implement this verb or feature ({@code EOPNOTSUPP} or {@code ENOSYS}), e.g. memory windows
 * on Soft-RoCE or UD queue pairs on iWARP. Tests skip on it; applications can fall back.
 */
public final class UnsupportedVerbException extends VerbException {

    private static final long serialVersionUID = 1L;

    UnsupportedVerbException(String verb, int errno, String hint) {
        super(verb, errno, hint);
    }
}
