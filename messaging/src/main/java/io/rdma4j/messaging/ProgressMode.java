package io.rdma4j.messaging;

/**
 * How a {@link MessagingGroup} makes progress on its channels: which thread polls their completion queue, and how
 * it waits when there is nothing to poll.
 */
public enum ProgressMode {
    /**
     * One platform thread per device sleeps on the completion channel (through rdma4j's epoll poller) and wakes
     * for each batch of completions. Costs no CPU while idle; a wake-up adds the kernel's and the scheduler's
     * latency. Threads waiting in a channel's calls park (virtual threads hold no carrier).
     */
    EVENT_DRIVEN,
    /**
     * One platform thread per device spins on the completion queue: the lowest latency, at the price of a core.
     * Threads waiting in a channel's calls spin (up to 50 µs) before they park, so that the progress thread's news
     * reaches them without a wake-up.
     */
    BUSY_POLLING
}
