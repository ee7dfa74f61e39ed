package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.FieldRange;
import io.rdma4j.bindings.verbs.ibv_ah_attr;
import io.rdma4j.bindings.verbs.ibv_global_route;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Where packets go ({@code struct ibv_ah_attr}): the remote end of a connected QP's path (set at
 * ready-to-receive) or of a UD {@link AddressHandle}. On RoCE and iWARP addressing is by GID, with a global route
 * header ({@link #ofGid}); on InfiniBand within a subnet, by LID ({@link #ofLid}). The other fields start at the C
 * defaults (0; a hop limit of 64 with a GID) and change with the {@code with} methods:
 *
 * <pre>{@code
 * AddressVector.ofGid(gid, gidIndex, port).withServiceLevel(3).withTrafficClass(106)
 * }</pre>
 *
 * <p>Every value is checked against its C field's range, with the field's name. Immutable and thread-safe.
 */
public final class AddressVector {

    private final boolean global;
    private final byte[] destinationGid;
    private final int sourceGidIndex;
    private final int hopLimit;
    private final int trafficClass;
    private final int flowLabel;
    private final int destinationLid;
    private final int serviceLevel;
    private final int sourcePathBits;
    private final int staticRate;
    private final int port;

    /** Copies the GID and checks every field against its C field's range. */
    private AddressVector(boolean global, byte[] destinationGid, int sourceGidIndex, int hopLimit, int trafficClass,
                          int flowLabel, int destinationLid, int serviceLevel, int sourcePathBits, int staticRate,
                          int port) {
        byte[] gid = destinationGid == null ? new byte[16] : destinationGid.clone();
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, not " + gid.length);
        }
        this.global = global;
        this.destinationGid = gid;
        this.sourceGidIndex = FieldRange.unsigned8("grh.sgid_index", sourceGidIndex);
        this.hopLimit = FieldRange.unsigned8("grh.hop_limit", hopLimit);
        this.trafficClass = FieldRange.unsigned8("grh.traffic_class", trafficClass);
        this.flowLabel = FieldRange.bits("grh.flow_label", flowLabel, 20);
        this.destinationLid = FieldRange.unsigned16("dlid", destinationLid);
        this.serviceLevel = FieldRange.bits("sl", serviceLevel, 4);
        this.sourcePathBits = FieldRange.bits("src_path_bits", sourcePathBits, 7);
        this.staticRate = FieldRange.unsigned8("static_rate", staticRate);
        this.port = FieldRange.unsigned8("port_num", port);
    }

    /** Addresses {@code gid} from local GID index {@code sourceGidIndex} on {@code port}, hop limit 64. */
    public static AddressVector ofGid(byte[] gid, int sourceGidIndex, int port) {
        return new AddressVector(true, gid, sourceGidIndex, 64, 0, 0, 0, 0, 0, 0, port);
    }

    /** Addresses {@code lid} on {@code port} within an InfiniBand subnet (no GRH). */
    public static AddressVector ofLid(int lid, int port) {
        return new AddressVector(false, null, 0, 0, 0, 0, lid, 0, 0, 0, port);
    }

    /** With {@code grh.hop_limit} (0..255). */
    public AddressVector withHopLimit(int value) {
        return new AddressVector(global, destinationGid, sourceGidIndex, value, trafficClass, flowLabel,
                destinationLid, serviceLevel, sourcePathBits, staticRate, port);
    }

    /** With {@code grh.traffic_class} (0..255). */
    public AddressVector withTrafficClass(int value) {
        return new AddressVector(global, destinationGid, sourceGidIndex, hopLimit, value, flowLabel,
                destinationLid, serviceLevel, sourcePathBits, staticRate, port);
    }

    /** With {@code grh.flow_label} (20 bits). */
    public AddressVector withFlowLabel(int value) {
        return new AddressVector(global, destinationGid, sourceGidIndex, hopLimit, trafficClass, value,
                destinationLid, serviceLevel, sourcePathBits, staticRate, port);
    }

    /** With {@code dlid} (0..65535): InfiniBand's destination LID, also kept beside a GID. */
    public AddressVector withDestinationLid(int value) {
        return new AddressVector(global, destinationGid, sourceGidIndex, hopLimit, trafficClass, flowLabel,
                value, serviceLevel, sourcePathBits, staticRate, port);
    }

    /** With {@code sl}, the service level (0..15). */
    public AddressVector withServiceLevel(int value) {
        return new AddressVector(global, destinationGid, sourceGidIndex, hopLimit, trafficClass, flowLabel,
                destinationLid, value, sourcePathBits, staticRate, port);
    }

    /** With {@code src_path_bits} (7 bits). */
    public AddressVector withSourcePathBits(int value) {
        return new AddressVector(global, destinationGid, sourceGidIndex, hopLimit, trafficClass, flowLabel,
                destinationLid, serviceLevel, value, staticRate, port);
    }

    /** With {@code static_rate} (0..255; 0: no limit). */
    public AddressVector withStaticRate(int value) {
        return new AddressVector(global, destinationGid, sourceGidIndex, hopLimit, trafficClass, flowLabel,
                destinationLid, serviceLevel, sourcePathBits, value, port);
    }

    /** {@code is_global}: whether a GRH is used; always on RoCE. */
    public boolean global() {
        return global;
    }

    /** {@code grh.sgid_index}: the local GID table index to send from, e.g. a RoCE v2 entry. */
    public int sourceGidIndex() {
        return sourceGidIndex;
    }

    /** {@code grh.hop_limit}. */
    public int hopLimit() {
        return hopLimit;
    }

    /** {@code grh.traffic_class}. */
    public int trafficClass() {
        return trafficClass;
    }

    /** {@code grh.flow_label}. */
    public int flowLabel() {
        return flowLabel;
    }

    /** {@code dlid} (InfiniBand). */
    public int destinationLid() {
        return destinationLid;
    }

    /** {@code sl}. */
    public int serviceLevel() {
        return serviceLevel;
    }

    /** {@code src_path_bits}. */
    public int sourcePathBits() {
        return sourcePathBits;
    }

    /** {@code static_rate} (0: no limit). */
    public int staticRate() {
        return staticRate;
    }

    /** {@code port_num}: the local port number. */
    public int port() {
        return port;
    }

    /** The remote GID (16 bytes, a copy) when global; zeros otherwise. */
    public byte[] destinationGid() {
        return destinationGid.clone();
    }

    /** Writes this vector into a {@code struct ibv_ah_attr}. */
    void writeTo(MemorySegment ah) {
        ibv_ah_attr.dlid(ah, (short) destinationLid);
        ibv_ah_attr.sl(ah, (byte) serviceLevel);
        ibv_ah_attr.src_path_bits(ah, (byte) sourcePathBits);
        ibv_ah_attr.static_rate(ah, (byte) staticRate);
        ibv_ah_attr.is_global(ah, (byte) (global ? 1 : 0));
        ibv_ah_attr.port_num(ah, (byte) port);
        MemorySegment grh = ibv_ah_attr.grh(ah);
        MemorySegment.copy(destinationGid, 0, ibv_global_route.dgid(grh), ValueLayout.JAVA_BYTE, 0, 16);
        ibv_global_route.sgid_index(grh, (byte) sourceGidIndex);
        ibv_global_route.hop_limit(grh, (byte) hopLimit);
        ibv_global_route.traffic_class(grh, (byte) trafficClass);
        ibv_global_route.flow_label(grh, flowLabel);
    }

    /** Reads a {@code struct ibv_ah_attr}. */
    static AddressVector readFrom(MemorySegment ah) {
        MemorySegment grh = ibv_ah_attr.grh(ah);
        return new AddressVector(ibv_ah_attr.is_global(ah) != 0,
                ibv_global_route.dgid(grh).toArray(ValueLayout.JAVA_BYTE),
                Byte.toUnsignedInt(ibv_global_route.sgid_index(grh)), Byte.toUnsignedInt(ibv_global_route.hop_limit(grh)),
                Byte.toUnsignedInt(ibv_global_route.traffic_class(grh)), ibv_global_route.flow_label(grh),
                Short.toUnsignedInt(ibv_ah_attr.dlid(ah)), Byte.toUnsignedInt(ibv_ah_attr.sl(ah)),
                Byte.toUnsignedInt(ibv_ah_attr.src_path_bits(ah)), Byte.toUnsignedInt(ibv_ah_attr.static_rate(ah)),
                Byte.toUnsignedInt(ibv_ah_attr.port_num(ah)));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AddressVector v && v.global == global && Arrays.equals(v.destinationGid, destinationGid)
                && v.sourceGidIndex == sourceGidIndex && v.hopLimit == hopLimit && v.trafficClass == trafficClass
                && v.flowLabel == flowLabel && v.destinationLid == destinationLid && v.serviceLevel == serviceLevel
                && v.sourcePathBits == sourcePathBits && v.staticRate == staticRate && v.port == port;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(destinationGid) * 31 + java.util.Objects.hash(global, sourceGidIndex, destinationLid, port);
    }

    @Override
    public String toString() {
        return "AddressVector[" + (global ? "gid=" + HexFormat.ofDelimiter(":").formatHex(destinationGid)
                + ", sgidIndex=" + sourceGidIndex + ", hopLimit=" + hopLimit : "lid=" + destinationLid)
                + ", sl=" + serviceLevel + ", port=" + port + "]";
    }
}
