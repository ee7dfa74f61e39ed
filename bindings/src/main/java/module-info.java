/**
 * rdma4j's raw layer: the jextract output for libibverbs and librdmacm ({@code io.rdma4j.bindings.verbs}) and
 * the hand-written shim for what jextract cannot bind ({@code io.rdma4j.bindings.shim}).
 *
 * <p>Internal, and closed to applications: this is the one module that an application grants native access, so
 * whatever it exports could read or write any address or call any verb without having been granted anything
 * ({@code Pointers.ALL} is all of memory). Its packages are exported only to rdma4j's own modules; rdma4j's tests
 * and benchmarks that need them on the module path add {@code --add-exports}. On the class path there is no module
 * boundary to keep: everything there is one unnamed module, granted or not as a whole. Applications use
 * {@code io.rdma4j.verbs} and {@code io.rdma4j.cm}.
 */
@SuppressWarnings("module") // the qualified exports name modules that are compiled after this one
module io.rdma4j.bindings {
    exports io.rdma4j.bindings.verbs to io.rdma4j.verbs, io.rdma4j.cm;
    exports io.rdma4j.bindings.shim to io.rdma4j.verbs, io.rdma4j.cm;
}
