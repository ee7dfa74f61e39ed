package io.rdma4j.verbs;

/**
 * A device's capabilities and limits, from {@code ibv_query_device_ex} (which falls back to
 * {@code ibv_query_device} on providers without the extended verb).
 *
 * <p>Immutable and thread-safe; made only by rdma4j (a new C field becomes a new accessor, never a broken
 * constructor call).
 */
public final class DeviceAttributes {

    private final String firmwareVersion;
    private final long nodeGuid;
    private final int vendorId;
    private final int vendorPartId;
    private final int hardwareVersion;
    private final int physicalPortCount;
    private final long maxMemoryRegionSize;
    private final int maxQueuePairs;
    private final int maxQueuePairWorkRequests;
    private final int maxScatterGather;
    private final int maxScatterGatherRead;
    private final int maxCompletionQueues;
    private final int maxCompletionQueueEntries;
    private final int maxMemoryRegions;
    private final int maxProtectionDomains;
    private final int maxReadAtomicAsTarget;
    private final int maxReadAtomicAsInitiator;
    private final int maxMemoryWindows;
    private final int maxAddressHandles;
    private final int maxSharedReceiveQueues;
    private final int maxSharedReceiveQueueWorkRequests;
    private final AtomicCapability atomicCapability;
    private final int capabilityFlags;
    private final long odpCapabilities;

    DeviceAttributes(String firmwareVersion, long nodeGuid, int vendorId, int vendorPartId, int hardwareVersion,
                     int physicalPortCount, long maxMemoryRegionSize, int maxQueuePairs, int maxQueuePairWorkRequests,
                     int maxScatterGather, int maxScatterGatherRead, int maxCompletionQueues,
                     int maxCompletionQueueEntries, int maxMemoryRegions, int maxProtectionDomains,
                     int maxReadAtomicAsTarget, int maxReadAtomicAsInitiator, int maxMemoryWindows,
                     int maxAddressHandles, int maxSharedReceiveQueues, int maxSharedReceiveQueueWorkRequests,
                     AtomicCapability atomicCapability, int capabilityFlags, long odpCapabilities) {
        this.firmwareVersion = firmwareVersion;
        this.nodeGuid = nodeGuid;
        this.vendorId = vendorId;
        this.vendorPartId = vendorPartId;
        this.hardwareVersion = hardwareVersion;
        this.physicalPortCount = physicalPortCount;
        this.maxMemoryRegionSize = maxMemoryRegionSize;
        this.maxQueuePairs = maxQueuePairs;
        this.maxQueuePairWorkRequests = maxQueuePairWorkRequests;
        this.maxScatterGather = maxScatterGather;
        this.maxScatterGatherRead = maxScatterGatherRead;
        this.maxCompletionQueues = maxCompletionQueues;
        this.maxCompletionQueueEntries = maxCompletionQueueEntries;
        this.maxMemoryRegions = maxMemoryRegions;
        this.maxProtectionDomains = maxProtectionDomains;
        this.maxReadAtomicAsTarget = maxReadAtomicAsTarget;
        this.maxReadAtomicAsInitiator = maxReadAtomicAsInitiator;
        this.maxMemoryWindows = maxMemoryWindows;
        this.maxAddressHandles = maxAddressHandles;
        this.maxSharedReceiveQueues = maxSharedReceiveQueues;
        this.maxSharedReceiveQueueWorkRequests = maxSharedReceiveQueueWorkRequests;
        this.atomicCapability = atomicCapability;
        this.capabilityFlags = capabilityFlags;
        this.odpCapabilities = odpCapabilities;
    }

    /** {@code fw_ver}. */
    public String firmwareVersion() {
        return firmwareVersion;
    }

    /** {@code node_guid}, in host byte order. */
    public long nodeGuid() {
        return nodeGuid;
    }

    /** {@code vendor_id}. */
    public int vendorId() {
        return vendorId;
    }

    /** {@code vendor_part_id}. */
    public int vendorPartId() {
        return vendorPartId;
    }

    /** {@code hw_ver}. */
    public int hardwareVersion() {
        return hardwareVersion;
    }

    /** {@code phys_port_cnt}: ports are numbered 1..this. */
    public int physicalPortCount() {
        return physicalPortCount;
    }

    /** {@code max_mr_size}. */
    public long maxMemoryRegionSize() {
        return maxMemoryRegionSize;
    }

    /** {@code max_qp}. */
    public int maxQueuePairs() {
        return maxQueuePairs;
    }

    /** {@code max_qp_wr}: the deepest send or receive queue. */
    public int maxQueuePairWorkRequests() {
        return maxQueuePairWorkRequests;
    }

    /** {@code max_sge}: SGEs per send/receive work request. */
    public int maxScatterGather() {
        return maxScatterGather;
    }

    /** {@code max_sge_rd}: SGEs per RDMA READ. */
    public int maxScatterGatherRead() {
        return maxScatterGatherRead;
    }

    /** {@code max_cq}. */
    public int maxCompletionQueues() {
        return maxCompletionQueues;
    }

    /** {@code max_cqe}. */
    public int maxCompletionQueueEntries() {
        return maxCompletionQueueEntries;
    }

    /** {@code max_mr}. */
    public int maxMemoryRegions() {
        return maxMemoryRegions;
    }

    /** {@code max_pd}. */
    public int maxProtectionDomains() {
        return maxProtectionDomains;
    }

    /** {@code max_qp_rd_atom}: outstanding RDMA READ/atomics a QP accepts. */
    public int maxReadAtomicAsTarget() {
        return maxReadAtomicAsTarget;
    }

    /** {@code max_qp_init_rd_atom}: outstanding RDMA READ/atomics a QP issues. */
    public int maxReadAtomicAsInitiator() {
        return maxReadAtomicAsInitiator;
    }

    /** {@code max_mw}. */
    public int maxMemoryWindows() {
        return maxMemoryWindows;
    }

    /** {@code max_ah}. */
    public int maxAddressHandles() {
        return maxAddressHandles;
    }

    /** {@code max_srq}. */
    public int maxSharedReceiveQueues() {
        return maxSharedReceiveQueues;
    }

    /** {@code max_srq_wr}. */
    public int maxSharedReceiveQueueWorkRequests() {
        return maxSharedReceiveQueueWorkRequests;
    }

    /** {@code atomic_cap}. */
    public AtomicCapability atomicCapability() {
        return atomicCapability;
    }

    /** {@code device_cap_flags} ({@code IBV_DEVICE_*} bits) */
    public int capabilityFlags() {
        return capabilityFlags;
    }

    /** {@code odp_caps.general_caps} ({@code IBV_ODP_SUPPORT*} bits; 0 without ODP) */
    public long odpCapabilities() {
        return odpCapabilities;
    }

    @Override
    public String toString() {
        return "DeviceAttributes[firmwareVersion=" + firmwareVersion
                + ", nodeGuid=" + nodeGuid
                + ", vendorId=" + vendorId
                + ", vendorPartId=" + vendorPartId
                + ", hardwareVersion=" + hardwareVersion
                + ", physicalPortCount=" + physicalPortCount
                + ", maxMemoryRegionSize=" + maxMemoryRegionSize
                + ", maxQueuePairs=" + maxQueuePairs
                + ", maxQueuePairWorkRequests=" + maxQueuePairWorkRequests
                + ", maxScatterGather=" + maxScatterGather
                + ", maxScatterGatherRead=" + maxScatterGatherRead
                + ", maxCompletionQueues=" + maxCompletionQueues
                + ", maxCompletionQueueEntries=" + maxCompletionQueueEntries
                + ", maxMemoryRegions=" + maxMemoryRegions
                + ", maxProtectionDomains=" + maxProtectionDomains
                + ", maxReadAtomicAsTarget=" + maxReadAtomicAsTarget
                + ", maxReadAtomicAsInitiator=" + maxReadAtomicAsInitiator
                + ", maxMemoryWindows=" + maxMemoryWindows
                + ", maxAddressHandles=" + maxAddressHandles
                + ", maxSharedReceiveQueues=" + maxSharedReceiveQueues
                + ", maxSharedReceiveQueueWorkRequests=" + maxSharedReceiveQueueWorkRequests
                + ", atomicCapability=" + atomicCapability
                + ", capabilityFlags=" + capabilityFlags
                + ", odpCapabilities=" + odpCapabilities + "]";
    }
}
