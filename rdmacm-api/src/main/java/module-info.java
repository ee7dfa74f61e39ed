/**
 * rdma4j's connection manager: librdmacm's {@code rdma_cm_id}s and event channels, to resolve IP addresses to RDMA
 * devices and to connect queue pairs over IP (the only way to connect them over iWARP).
 */
module io.rdma4j.cm {
    requires io.rdma4j.bindings;
    requires transitive io.rdma4j.verbs;

    exports io.rdma4j.cm;
}
