package io.rdma4j.verbs;

/**
 * An asynchronous event of a context ({@code struct ibv_async_event}, from {@code ibv_get_async_event}; already
 * acknowledged with {@code ibv_ack_async_event} when returned).
 *
 * @param type        what happened
 * @param queuePair   the affected QP for QP events, else {@code null} (also if it was closed meanwhile)
 * @param completionQueue the affected CQ for {@link AsyncEventType#CQ_ERROR}, else {@code null}
 * @param sharedReceiveQueue the affected SRQ for SRQ events, else {@code null}
 * @param port        the port for port events, else 0
 * @param description the library's text ({@code ibv_event_type_str})
 */
public record AsyncEvent(AsyncEventType type, QueuePair queuePair, CompletionQueue completionQueue,
                         SharedReceiveQueue sharedReceiveQueue, int port, String description) {
}
