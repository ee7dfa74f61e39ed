package io.rdma4j.verbs;

/**
 * Posting work requests failed ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_post_srq_recv}):
 * {@link #index()} says which request of the batch the provider rejected ({@code bad_wr}); those before it were
 * posted, it and those after it were not. Typical causes: ENOMEM for a full work queue, EINVAL for too many
 * scatter/gather entries, an opcode the QP type lacks, or a QP in a state that does not accept posts.
 */
public final class PostException extends VerbException {

    private static final long serialVersionUID = 1L;

    private final int index;

    /**
     * @param returned what the post verb returned: an errno value (some providers, e.g. siw, return it negated)
     */
    PostException(String verb, int returned, int index) {
        super(verb, Math.abs(returned), index < 0 ? "the provider did not say which request it rejected: those before"
                + " it were posted" : index == 0 ? "work request #0 of the batch was rejected; none was posted"
                : "work request #" + index + " of the batch was rejected; the " + index + " before it were posted");
        this.index = index;
    }

    /** The rejected request's index in its batch, or -1 if the provider did not say. */
    public int index() {
        return index;
    }
}
