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
 * header; on InfiniBand within a subnet, by LID.
 *
 * @param global            whether a GRH is used ({@code is_global}); always on RoCE
 * @param destinationGid    the remote GID (16 bytes) when global
 * @param sourceGidIndex    the local GID table index to send from ({@code grh.sgid_index}), e.g. a RoCE v2 entry
 * @param hopLimit          {@code grh.hop_limit}
 * @param trafficClass      {@code grh.traffic_class}
 * @param flowLabel         {@code grh.flow_label}
 * @param destinationLid    {@code dlid} (InfiniBand)
 * @param serviceLevel      {@code sl}
 * @param sourcePathBits    {@code src_path_bits}
 * @param staticRate        {@code static_rate} (0: no limit)
 * @param port              the local port number
 */
public record AddressVector(boolean global, byte[] destinationGid, int sourceGidIndex, int hopLimit, int trafficClass,
                            int flowLabel, int destinationLid, int serviceLevel, int sourcePathBits, int staticRate,
                            int port) {

    /** Copies the GID and checks every field against its C field's range. */
    public AddressVector {
        destinationGid = destinationGid == null ? new byte[16] : destinationGid.clone();
        if (destinationGid.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, not " + destinationGid.length);
        }
        FieldRange.unsigned8("grh.sgid_index", sourceGidIndex);
        FieldRange.unsigned8("grh.hop_limit", hopLimit);
        FieldRange.unsigned8("grh.traffic_class", trafficClass);
        FieldRange.bits("grh.flow_label", flowLabel, 20);
        FieldRange.unsigned16("dlid", destinationLid);
        FieldRange.bits("sl", serviceLevel, 4);
        FieldRange.bits("src_path_bits", sourcePathBits, 7);
        FieldRange.unsigned8("static_rate", staticRate);
        FieldRange.unsigned8("port_num", port);
    }

    /** Addresses {@code gid} from local GID index {@code sourceGidIndex} on {@code port}, hop limit 64. */
    public static AddressVector ofGid(byte[] gid, int sourceGidIndex, int port) {
        return new AddressVector(true, gid, sourceGidIndex, 64, 0, 0, 0, 0, 0, 0, port);
    }

    /** Addresses {@code lid} on {@code port} within an InfiniBand subnet (no GRH). */
    public static AddressVector ofLid(int lid, int port) {
        return new AddressVector(false, null, 0, 0, 0, 0, lid, 0, 0, 0, port);
    }

    @Override
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
