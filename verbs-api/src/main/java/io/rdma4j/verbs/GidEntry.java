package io.rdma4j.verbs;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HexFormat;

/**
 * One entry of a port's GID table ({@code struct ibv_gid_entry}, from {@code ibv_query_gid_table}).
 *
 * @param index            the GID index to put in an address vector ({@code sgid_index})
 * @param port             the port number
 * @param gid              the 16-byte GID (network byte order); for RoCE an IPv6 or IPv4-mapped address
 * @param type             InfiniBand, RoCE v1 or RoCE v2
 * @param netdevIfindex    the interface index of the netdev behind it (0 for none)
 */
public record GidEntry(int index, int port, byte[] gid, GidType type, int netdevIfindex) {

    /** Copies {@code gid}: records should not share mutable arrays. */
    public GidEntry {
        gid = gid.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** The GID as an IP address (RoCE GIDs are IPv6 or IPv4-mapped addresses). */
    public InetAddress asInetAddress() {
        try {
            return InetAddress.getByAddress(gid);
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    @Override
    public String toString() {
        return "GidEntry[index=" + index + ", port=" + port + ", gid=" + HexFormat.ofDelimiter(":").formatHex(gid)
                + ", type=" + type + ", netdevIfindex=" + netdevIfindex + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GidEntry e && e.index == index && e.port == port
                && java.util.Arrays.equals(e.gid, gid) && e.type == type && e.netdevIfindex == netdevIfindex;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(index, port, java.util.Arrays.hashCode(gid), type, netdevIfindex);
    }
}
