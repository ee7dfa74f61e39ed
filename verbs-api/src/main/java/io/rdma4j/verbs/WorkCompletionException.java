package io.rdma4j.verbs;

/**
 * A work request completed with an error status (a {@code struct ibv_wc} whose {@code status} is not
 * {@code IBV_WC_SUCCESS}): what it was ({@link #opcode()}, as the poster knew it, since libibverbs leaves a failed
 * completion's opcode undefined), which one ({@link #workRequestId()}, {@link #queuePairNumber()}), and why
 * ({@link #status()} with libibverbs' text, {@link #vendorError()}). Made by
 * {@link WorkCompletions#failure(int, WorkCompletionOpcode, String)} and
 * {@link ExtendedPoll#failure(WorkCompletionOpcode, String)}; the layers above throw it for the request a caller
 * waited on. Immutable.
 */
public final class WorkCompletionException extends RdmaException {

    private static final long serialVersionUID = 1L;

    private final WorkCompletionOpcode opcode;
    private final long workRequestId;
    private final int queuePairNumber;
    private final WorkCompletionStatus status;
    private final String statusText;
    private final int vendorError;

    WorkCompletionException(WorkCompletionOpcode opcode, long workRequestId, int queuePairNumber, int status,
                            String statusText, int vendorError, String context) {
        super((context == null ? "" : context + ": ") + opcode + " (work request " + workRequestId + ") on "
                + (queuePairNumber < 0 ? "a QP not read" : "QP 0x" + Integer.toHexString(queuePairNumber))
                + " completed with " + WorkCompletionStatus.fromC(status)
                + " (" + statusText + ", status " + status + ", vendor error 0x" + Integer.toHexString(vendorError)
                + ")");
        this.opcode = opcode;
        this.workRequestId = workRequestId;
        this.queuePairNumber = queuePairNumber;
        this.status = WorkCompletionStatus.fromC(status);
        this.statusText = statusText;
        this.vendorError = vendorError;
    }

    /** The operation of the failed request as its poster named it ({@link WorkCompletionOpcode#UNKNOWN} if not). */
    public WorkCompletionOpcode opcode() {
        return opcode;
    }

    /** {@code wr_id}: what the failed request carried. */
    public long workRequestId() {
        return workRequestId;
    }

    /** {@code qp_num}: the local queue pair the request was posted on, or -1 if the completion did not carry it. */
    public int queuePairNumber() {
        return queuePairNumber;
    }

    /** {@code status}: never {@link WorkCompletionStatus#SUCCESS}. */
    public WorkCompletionStatus status() {
        return status;
    }

    /** libibverbs' description of the status ({@code ibv_wc_status_str}). */
    public String statusText() {
        return statusText;
    }

    /** {@code vendor_err}: the provider's own code for the failure. */
    public int vendorError() {
        return vendorError;
    }
}
