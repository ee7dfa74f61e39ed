/**
 * The hand-written part of rdma4j's raw layer: what jextract cannot bind from {@code <infiniband/verbs.h>}.
 *
 * <ul>
 *   <li>{@link io.rdma4j.bindings.shim.ContextOps}: the inline verbs that call through {@code ibv_context.ops}
 *       (post send/recv/SRQ recv, poll and arm a CQ, memory windows).</li>
 *   <li>{@link io.rdma4j.bindings.shim.VerbsContext}: {@code verbs_get_ctx} and the inline verbs that use the
 *       extended table (full {@code ibv_query_port}, {@code ibv_query_device_ex}, {@code ibv_create_cq_ex},
 *       {@code ibv_create_qp_ex}, {@code ibv_create_srq_ex}).</li>
 *   <li>{@link io.rdma4j.bindings.shim.ExportedVerbs} and {@link io.rdma4j.bindings.shim.Errno}: exported verbs
 *       that fail through errno, bound so that errno is captured by the call itself.</li>
 *   <li>{@link io.rdma4j.bindings.shim.NativeLibraries}: a clear error when rdma-core is not installed.</li>
 * </ul>
 *
 * <p>The {@code ibv_wr_*} and {@code ibv_start_poll}/{@code ibv_next_poll}/{@code ibv_end_poll}/{@code ibv_wc_read_*}
 * inline verbs are one-line calls through {@code ibv_qp_ex}/{@code ibv_cq_ex} members; jextract generates a
 * {@code static final} invoker for each member's signature (e.g. {@code ibv_qp_ex.wr_send.invoke(fn, qpx)}), so
 * callers read the member once per object and use that invoker; nothing is repeated here.
 */
package io.rdma4j.bindings.shim;
