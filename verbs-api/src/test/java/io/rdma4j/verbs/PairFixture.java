package io.rdma4j.verbs;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The setup that the data-path device tests share: the test device opened, a {@link ConnectedPair} on it, and
 * reusable batches. Subclasses add their memory in their own {@code @BeforeEach} (which runs after this one).
 */
abstract class PairFixture {

    Context context;
    ConnectedPair pair;
    SendWorkRequests sends;
    ReceiveWorkRequests receives;
    WorkCompletions completions;

    private final int batchCapacity;
    private final int scatterGather;

    PairFixture(int batchCapacity, int scatterGather) {
        this.batchCapacity = batchCapacity;
        this.scatterGather = scatterGather;
    }

    /** The pair under test; override to connect differently. */
    ConnectedPair connect(Context device) {
        return ConnectedPair.reliable(device);
    }

    /** What to close after the pair and before the context (e.g. a completion channel its CQs use). */
    AutoCloseable closeAfterPair() {
        return null;
    }

    @BeforeEach
    final void openPair() {
        context = TestDevice.open();
        pair = connect(context);
        sends = new SendWorkRequests(batchCapacity, scatterGather);
        receives = new ReceiveWorkRequests(batchCapacity, scatterGather);
        completions = new WorkCompletions(1);
    }

    @AfterEach
    final void closePair() throws Exception {
        TestDevice.closeAll(sends, receives, completions, pair, closeAfterPair(), context);
    }
}
