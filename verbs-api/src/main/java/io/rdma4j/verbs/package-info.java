/**
 * rdma4j's verbs, over libibverbs: devices, memory registration, queues and the data path of InfiniBand, RoCE and
 * iWARP.
 *
 * <ul>
 *   <li>Objects, each owning one C object: {@link io.rdma4j.verbs.Device} opens a {@link io.rdma4j.verbs.Context};
 *       on it, {@link io.rdma4j.verbs.ProtectionDomain}s, {@link io.rdma4j.verbs.CompletionQueue}s (woken through
 *       {@link io.rdma4j.verbs.CompletionChannel}s) and async events; on a protection domain,
 *       {@link io.rdma4j.verbs.MemoryRegion}s, {@link io.rdma4j.verbs.MemoryWindow}s,
 *       {@link io.rdma4j.verbs.AddressHandle}s, {@link io.rdma4j.verbs.SharedReceiveQueue}s and
 *       {@link io.rdma4j.verbs.QueuePair}s.</li>
 *   <li>The data path, allocation-free: {@link io.rdma4j.verbs.SendWorkRequests} and
 *       {@link io.rdma4j.verbs.ReceiveWorkRequests} are reusable native batches posted by
 *       {@link io.rdma4j.verbs.QueuePair#postSend}/{@code postReceive}; {@link io.rdma4j.verbs.WorkCompletions} is
 *       the reusable array {@link io.rdma4j.verbs.CompletionQueue#poll} fills. A loop on one thread posts and polls
 *       through a {@link io.rdma4j.verbs.QueuePairPoster}, {@link io.rdma4j.verbs.SharedReceiveQueuePoster} and
 *       {@link io.rdma4j.verbs.CompletionQueuePoller}, which hold their queue for that thread instead of pinning it
 *       per call. The extended API: {@link io.rdma4j.verbs.ExtendedSend}, {@link io.rdma4j.verbs.ExtendedPoll}.</li>
 *   <li>Values: {@link io.rdma4j.verbs.QueuePairAttributes} (checked against the state machine),
 *       {@link io.rdma4j.verbs.AddressVector}, {@link io.rdma4j.verbs.PortAttributes},
 *       {@link io.rdma4j.verbs.DeviceAttributes} and the enums of the C constants.</li>
 *   <li>Failures: every one is an {@link io.rdma4j.verbs.RdmaException} (in every module of rdma4j): a failed call
 *       is a {@link io.rdma4j.verbs.VerbException} carrying the verb and its errno, a failed work request a
 *       {@link io.rdma4j.verbs.WorkCompletionException}. Misuse is an {@link IllegalArgumentException} or
 *       {@link IllegalStateException} naming the verb and field, raised before C runs.</li>
 * </ul>
 *
 * <p>Lifetimes: a child holds its parent, closing a parent closes its children first in libibverbs' order, close
 * is idempotent and thread-safe and refused while a call on the object runs, and a forgotten tree of objects is
 * closed by a Cleaner with a warning. Objects may be used from any thread; batches and completion arrays belong
 * to one thread at a time.
 */
package io.rdma4j.verbs;
