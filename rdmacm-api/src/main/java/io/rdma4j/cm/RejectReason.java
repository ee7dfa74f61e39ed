package io.rdma4j.cm;

/**
 * Why a connect ended in {@link CmEventType#REJECTED}, told from the event's status as the transport reports it:
 * on InfiniBand and RoCE the CM's reject reason (IBTA's {@code ib_cm_rej_reason}, a positive number), on iWARP a
 * negative errno. Only {@link #CONSUMER} means that the peer's application called {@code rdma_reject}, and so that
 * the event's private data is its answer; the others are the transport's.
 */
public enum RejectReason {
    /** The peer's application rejected the request ({@code rdma_reject}; InfiniBand/RoCE reason 28). */
    CONSUMER,
    /**
     * Nobody listens at that address and port: InfiniBand/RoCE reason 8 (invalid service ID), iWARP
     * {@code -ECONNREFUSED} (the TCP connect was refused).
     */
    NO_LISTENER,
    /**
     * iWARP's {@code -ECONNRESET}: the peer's application rejected the request (an MPA reject, whose private data is
     * its answer), or the connection was reset during the MPA exchange (e.g. the peer's MPA timer ran out); iWARP
     * does not tell the two apart.
     */
    REJECTED_OR_RESET,
    /** The peer did not answer in time (InfiniBand/RoCE reason 4; iWARP {@code -ETIMEDOUT}). */
    TIMEOUT,
    /** Another reason of the transport's: the status says which ({@link ConnectionException#getMessage()} names it). */
    OTHER;

    private static final int IB_TIMEOUT = 4;
    private static final int IB_INVALID_SERVICE_ID = 8;
    private static final int IB_CONSUMER_DEFINED = 28;
    // Linux's errno values, as rdma_cm passes them on negated (rdma4j runs on Linux only).
    private static final int ECONNREFUSED = 111;
    private static final int ECONNRESET = 104;
    private static final int ETIMEDOUT = 110;

    /** IBTA's names of the InfiniBand CM's reject reasons, by number (librdmacm passes them on as the status). */
    private static final String[] IB_REASONS = {null, "no QP", "no EEC", "no resources", "timeout", "unsupported",
        "invalid comm ID", "invalid comm instance", "invalid service ID", "invalid transport type", "stale connection",
        "RDC does not exist", "invalid GID", "invalid LID", "invalid SL", "invalid traffic class", "invalid hop limit",
        "invalid packet rate", "invalid alternate GID", "invalid alternate LID", "invalid alternate SL",
        "invalid alternate traffic class", "invalid alternate hop limit", "invalid alternate packet rate",
        "port CM redirect", "port redirect", "invalid MTU", "insufficient responder resources", "consumer defined",
        "invalid RNR retry", "duplicate local comm ID", "invalid class version", "invalid flow label",
        "invalid alternate flow label", null, "vendor option not supported"};

    /** The reason of a REJECTED event's {@code status}. */
    static RejectReason of(int status) {
        return switch (status) {
            case IB_CONSUMER_DEFINED -> CONSUMER;
            case IB_INVALID_SERVICE_ID, -ECONNREFUSED -> NO_LISTENER;
            case IB_TIMEOUT, -ETIMEDOUT -> TIMEOUT;
            case -ECONNRESET -> REJECTED_OR_RESET;
            default -> OTHER;
        };
    }

    /** What a REJECTED event's {@code status} says, for messages. */
    static String describe(int status) {
        String what = switch (of(status)) {
            case CONSUMER -> "the peer's application rejected the connection";
            case NO_LISTENER -> "nobody listens at that address and port";
            case REJECTED_OR_RESET -> "the peer's application rejected it, or the connection was reset during the"
                    + " exchange";
            case TIMEOUT -> "the peer did not answer in time";
            case OTHER -> "the transport rejected it";
        };
        String code = status > 0
                ? "InfiniBand CM reject reason " + status + (status < IB_REASONS.length && IB_REASONS[status] != null
                        ? " (" + IB_REASONS[status] + ")" : "")
                : "iWARP status " + status;
        return what + ", " + code;
    }
}
