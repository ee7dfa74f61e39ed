/**
 * rdma4j's connection manager, over librdmacm: connect queue pairs over IP on InfiniBand, RoCE and iWARP.
 *
 * <ul>
 *   <li>High level: {@link io.rdma4j.cm.Connector} (active side) and {@link io.rdma4j.cm.Acceptor} (passive side)
 *       yield established {@link io.rdma4j.cm.Connection}s, set up by {@link io.rdma4j.cm.ConnectionOptions};
 *       {@link io.rdma4j.cm.RemoteBuffer} carries a buffer's address and rkey in the private data; failures are
 *       {@link io.rdma4j.cm.ConnectionException}s.</li>
 *   <li>Low level: an {@link io.rdma4j.cm.EventChannel} and its {@link io.rdma4j.cm.CmId}s (one per connection or
 *       listener, with a tracked {@link io.rdma4j.cm.CmIdState}); {@link io.rdma4j.cm.CmEvent}s with
 *       {@link io.rdma4j.cm.ConnectionParameters} or {@link io.rdma4j.cm.UdParameters}.</li>
 * </ul>
 *
 * <p>Every object follows the verbs objects' lifetime rules: children close before parents (an id's queue pair,
 * then the id, then its channel), close is idempotent and thread-safe, and a forgotten object is closed by a
 * Cleaner with a warning.
 */
package io.rdma4j.cm;
