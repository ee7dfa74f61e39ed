/** A consumer of rdma4j: needs only the connection manager's module (which brings the verbs and the bindings). */
module io.rdma4j.consumer {
    requires io.rdma4j.cm;
}
