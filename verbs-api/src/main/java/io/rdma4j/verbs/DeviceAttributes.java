package io.rdma4j.verbs;

/**
 * A device's capabilities and limits, from {@code ibv_query_device_ex} (which falls back to
 * {@code ibv_query_device} on providers without the extended verb).
 *
 * @param firmwareVersion     {@code fw_ver}
 * @param nodeGuid            {@code node_guid}, in host byte order
 * @param vendorId            {@code vendor_id}
 * @param vendorPartId        {@code vendor_part_id}
 * @param hardwareVersion     {@code hw_ver}
 * @param physicalPortCount   {@code phys_port_cnt}: ports are numbered 1..this
 * @param maxMemoryRegionSize {@code max_mr_size}
 * @param maxQueuePairs       {@code max_qp}
 * @param maxQueuePairWorkRequests {@code max_qp_wr}: the deepest send or receive queue
 * @param maxScatterGather    {@code max_sge}: SGEs per send/receive work request
 * @param maxScatterGatherRead {@code max_sge_rd}: SGEs per RDMA READ
 * @param maxCompletionQueues {@code max_cq}
 * @param maxCompletionQueueEntries {@code max_cqe}
 * @param maxMemoryRegions    {@code max_mr}
 * @param maxProtectionDomains {@code max_pd}
 * @param maxReadAtomicAsTarget {@code max_qp_rd_atom}: outstanding RDMA READ/atomics a QP accepts
 * @param maxReadAtomicAsInitiator {@code max_qp_init_rd_atom}: outstanding RDMA READ/atomics a QP issues
 * @param maxMemoryWindows    {@code max_mw}
 * @param maxAddressHandles   {@code max_ah}
 * @param maxSharedReceiveQueues {@code max_srq}
 * @param maxSharedReceiveQueueWorkRequests {@code max_srq_wr}
 * @param atomicCapability    {@code atomic_cap}
 * @param capabilityFlags     {@code device_cap_flags} ({@code IBV_DEVICE_*} bits)
 * @param odpCapabilities     {@code odp_caps.general_caps} ({@code IBV_ODP_SUPPORT*} bits; 0 without ODP)
 */
public record DeviceAttributes(String firmwareVersion, long nodeGuid, int vendorId, int vendorPartId,
                               int hardwareVersion, int physicalPortCount, long maxMemoryRegionSize,
                               int maxQueuePairs, int maxQueuePairWorkRequests, int maxScatterGather,
                               int maxScatterGatherRead, int maxCompletionQueues, int maxCompletionQueueEntries,
                               int maxMemoryRegions, int maxProtectionDomains, int maxReadAtomicAsTarget,
                               int maxReadAtomicAsInitiator, int maxMemoryWindows, int maxAddressHandles,
                               int maxSharedReceiveQueues, int maxSharedReceiveQueueWorkRequests,
                               AtomicCapability atomicCapability, int capabilityFlags, long odpCapabilities) {
}
