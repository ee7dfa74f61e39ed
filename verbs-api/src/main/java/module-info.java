/**
 * rdma4j's verbs API: libibverbs from Java. Start at {@link io.rdma4j.verbs.Device#list()}.
 */
module io.rdma4j.verbs {
    requires io.rdma4j.bindings;
    requires org.slf4j;

    exports io.rdma4j.verbs;
}
