/**
 * rdma4j's raw layer: the jextract output for libibverbs and librdmacm ({@code io.rdma4j.bindings.verbs}) and
 * the hand-written shim for what jextract cannot bind ({@code io.rdma4j.bindings.shim}).
 *
 * <p>Internal: no compatibility promise is made for either package. They are exported (unqualified, because
 * javac compiles this module before the API modules exist and would warn about a qualified export to them) only
 * so that rdma4j's API modules, benchmarks and tests can reach them. Applications use {@code io.rdma4j.verbs}
 * and {@code io.rdma4j.cm}.
 */
module io.rdma4j.bindings {
    exports io.rdma4j.bindings.verbs;
    exports io.rdma4j.bindings.shim;
}
