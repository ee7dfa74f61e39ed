/**
 * rdma4j's verbs API: libibverbs from Java. Start at {@link io.rdma4j.verbs.Device#list()}.
 */
@SuppressWarnings("module") // the qualified export names a module that is compiled after this one
module io.rdma4j.verbs {
    requires io.rdma4j.bindings;
    requires org.slf4j;

    exports io.rdma4j.verbs;
    exports io.rdma4j.verbs.internal to io.rdma4j.cm, io.rdma4j.messaging;
}
