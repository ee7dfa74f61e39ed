/**
 * The examples jar ({@link io.rdma4j.examples.Main}): each example speaks the options and wire protocol of the
 * rdma-core tool it is named after, so either end can be the C tool — {@link io.rdma4j.examples.Rping} (rping),
 * {@link io.rdma4j.examples.Echo} (rdma_server/rdma_client), {@link io.rdma4j.examples.RcPingPong},
 * {@link io.rdma4j.examples.UdPingPong} and {@link io.rdma4j.examples.SrqPingPong} (ibv_rc/ud/srq_pingpong) — plus
 * {@link io.rdma4j.examples.WriteBw} (RDMA WRITE bandwidth over rdma_cm) and the README's quick starts.
 */
package io.rdma4j.examples;
