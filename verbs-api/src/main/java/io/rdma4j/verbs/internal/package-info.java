/**
 * rdma4j-internal, not an API: what the connection manager module needs of the verbs objects beyond their public
 * API — the native side every rdma4j object shares ({@link io.rdma4j.verbs.internal.NativeResource}: one lifetime
 * model in every module), and the verbs package's package-private operations ({@link
 * io.rdma4j.verbs.internal.VerbsInternals}). Exported to {@code io.rdma4j.cm} only; on the class path nothing
 * enforces that, so do not use it: it changes without notice.
 */
package io.rdma4j.verbs.internal;
