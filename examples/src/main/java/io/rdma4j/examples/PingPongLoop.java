package io.rdma4j.examples;

import io.rdma4j.verbs.CompletionChannel;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.CompletionQueuePoller;
import io.rdma4j.verbs.QueuePairPoster;
import io.rdma4j.verbs.ReceiveWorkRequests;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

/**
 * The measured loop of rdma-core's pingpong tools: each queue pair sends its next SEND once its last SEND and a
 * receive have completed; receives are topped up to {@code -r} when only {@code threshold} remain; the time of
 * {@code -n} exchanges each way is printed as the C tools print it. With {@code -e} the loop sleeps on the CQ's
 * completion channel instead of polling. The loop polls through a {@link CompletionQueuePoller}, and the RC and UD
 * tools post through a {@link QueuePairPoster}: one thread does it all, so no call needs a pin of its own.
 *
 * <p>The one departure from the C tools, which wait forever: no completion for 10 s is an error, since a peer
 * that died while only a receive was outstanding would never produce one (a pending SEND ends in RETRY_EXCEEDED).
 */
final class PingPongLoop {

    static final long RECEIVE_ID = 1;
    static final long SEND_ID = 2;
    private static final long STALL_NANOS = 10_000_000_000L;
    private static final int PAGE_SIZE = 4096;

    /** What differs between the tools: where SENDs and receives go, and how a completion finds its queue pair. */
    interface Side {
        /** Posts the next SEND of queue pair {@code index}. */
        void send(int index);

        /** Posts {@code count} more receives (to the queue pair, or to the shared receive queue). */
        void postReceives(int count);

        /** The index of the queue pair with number {@code qpNumber}. */
        int indexOf(int qpNumber);
    }

    private PingPongLoop() {
    }

    /** The side of the RC and UD tools: one queue pair (posted to on this thread), its receive queue, one SEND batch. */
    static Side onOneQueuePair(QueuePairPoster qp, SendWorkRequests send, ReceiveWorkRequests receive) {
        return new Side() {
            @Override
            public void send(int index) {
                qp.postSend(send);
            }

            @Override
            public void postReceives(int count) {
                for (int i = 0; i < count; i++) {
                    qp.postReceive(receive);
                }
            }

            @Override
            public int indexOf(int qpNumber) {
                return 0;
            }
        };
    }

    /**
     * Runs the loop with {@code rxDepth} receives posted (and the CQ armed with {@code -e}); the client sends first.
     *
     * @param threshold how few posted receives trigger a top-up (1, or the number of QPs sharing a receive queue)
     * @return microseconds per iteration
     */
    static double run(PingPongOptions options, CompletionQueue cq, WorkCompletions completions, Side side,
                      int queuePairs, int threshold, PrintStream out) throws InterruptedException {
        int iters = options.iters();
        long[] pending = new long[queuePairs];
        for (int i = 0; i < queuePairs; i++) {
            pending[i] = RECEIVE_ID;
            if (options.server() != null) {
                side.send(i);
                pending[i] |= SEND_ID;
            }
        }
        long start;
        try (CompletionQueuePoller poller = cq.confinedPoller()) {
            start = System.nanoTime();
            exchange(options, poller, completions, side, pending, threshold);
        }
        double micros = (System.nanoTime() - start) / 1_000.0;
        long bytes = (long) options.size() * iters * 2;
        out.printf("%d bytes in %.2f seconds = %.2f Mbit/sec%n", bytes, micros / 1e6, bytes * 8 / micros);
        out.printf("%d iters in %.2f seconds = %.2f usec/iter%n", iters, micros / 1e6, micros / iters);
        return micros / iters;
    }

    /** Polls and sends until {@code -n} SENDs and receives have completed on each side. */
    private static void exchange(PingPongOptions options, CompletionQueuePoller poller, WorkCompletions completions,
                                 Side side, long[] pending, int threshold) throws InterruptedException {
        int iters = options.iters();
        int receivesPosted = options.rxDepth();
        CompletionChannel channel = poller.queue().channel();
        long progress = System.nanoTime();
        boolean progressed = false;
        int idle = 0;
        int sent = 0;
        int received = 0;
        while (sent < iters || received < iters) {
            int n;
            if (options.events()) {
                if (channel.await(Duration.ofNanos(STALL_NANOS)).isEmpty()) {
                    throw stalled(received);
                }
                poller.queue().requestNotification(false);
                n = poller.poll(completions);
            } else {
                n = poller.poll(completions);
                if (n > 0) {
                    progressed = true;
                } else if (++idle == 1 << 16) {
                    // The clock is read only here: it costs microseconds under emulation.
                    idle = 0;
                    long now = System.nanoTime();
                    if (progressed) {
                        progress = now;
                        progressed = false;
                    } else if (now - progress > STALL_NANOS) {
                        throw stalled(received);
                    }
                }
            }
            for (int i = 0; i < n; i++) {
                long id = completions.workRequestId(i);
                if (!completions.isSuccess(i)) {
                    throw new IllegalStateException("Failed status " + completions.statusText(i) + " ("
                            + completions.status(i).value() + ") for wr_id " + id);
                }
                int qp = side.indexOf(completions.queuePairNumber(i));
                if (id == SEND_ID) {
                    sent++;
                } else if (id == RECEIVE_ID) {
                    if (--receivesPosted <= threshold) {
                        side.postReceives(options.rxDepth() - receivesPosted);
                        receivesPosted = options.rxDepth();
                    }
                    received++;
                } else {
                    throw new IllegalStateException("Completion for unknown wr_id " + id);
                }
                pending[qp] &= ~id;
                if (sent < iters && pending[qp] == 0) {
                    side.send(qp);
                    pending[qp] = RECEIVE_ID | SEND_ID;
                }
            }
        }
    }

    /**
     * {@code -c} on the client: the first byte of each page of the message gets the C tools' mark,
     * {@code i / page_size % sizeof(char)}, which is always 0 (the buffer starts out as 0x7b).
     */
    static void markPages(MemorySegment message) {
        for (long i = 0; i < message.byteSize(); i += PAGE_SIZE) {
            message.set(ValueLayout.JAVA_BYTE, i, (byte) 0);
        }
    }

    /** {@code -c} on the server: prints "invalid data in page N" for each page whose mark did not arrive. */
    static void checkPages(MemorySegment message, PrintStream out) {
        for (long i = 0; i < message.byteSize(); i += PAGE_SIZE) {
            if (message.get(ValueLayout.JAVA_BYTE, i) != 0) {
                out.println("invalid data in page " + i / PAGE_SIZE);
            }
        }
    }

    private static IllegalStateException stalled(int received) {
        return new IllegalStateException("no completion for " + STALL_NANOS / 1_000_000_000 + " s after " + received
                + " receives: is the peer gone?");
    }
}
