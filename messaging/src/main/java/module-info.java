/**
 * rdma4j's messaging layer: channels of whole messages over reliable connections, with credit-based flow control
 * and receive leases in registered memory, and groups that make progress on many channels with one thread. Start
 * at {@link io.rdma4j.messaging.MessagingGroup}.
 */
module io.rdma4j.messaging {
    requires transitive io.rdma4j.cm;
    requires org.slf4j;

    exports io.rdma4j.messaging;
}
