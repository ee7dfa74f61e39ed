package io.rdma4j.cm;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.sockaddr;
import io.rdma4j.bindings.verbs.sockaddr_in;
import io.rdma4j.bindings.verbs.sockaddr_in6;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** {@code struct sockaddr_in}/{@code sockaddr_in6} to and from {@link InetSocketAddress}, ports in network order. */
final class SocketAddresses {

    private SocketAddresses() {
    }

    /** A {@code sockaddr_in} or {@code sockaddr_in6} for {@code address}, allocated in {@code arena}. */
    static MemorySegment toC(InetSocketAddress address, Arena arena) {
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address: " + address);
        }
        short port = Short.reverseBytes((short) address.getPort());
        byte[] ip = address.getAddress().getAddress();
        if (address.getAddress() instanceof Inet4Address) {
            MemorySegment sa = arena.allocate(sockaddr_in.layout());
            sockaddr_in.sin_family(sa, (short) RdmaCore.AF_INET());
            sockaddr_in.sin_port(sa, port);
            MemorySegment.copy(ip, 0, sockaddr_in.sin_addr(sa), ValueLayout.JAVA_BYTE, 0, 4);
            return sa;
        }
        MemorySegment sa = arena.allocate(sockaddr_in6.layout());
        sockaddr_in6.sin6_family(sa, (short) RdmaCore.AF_INET6());
        sockaddr_in6.sin6_port(sa, port);
        MemorySegment.copy(ip, 0, sockaddr_in6.sin6_addr(sa), ValueLayout.JAVA_BYTE, 0, 16);
        return sa;
    }

    /**
     * The address in a {@code struct sockaddr} (at least {@code sockaddr_in6}'s size, as in {@code rdma_addr}).
     *
     * @throws IllegalStateException for a family other than AF_INET or AF_INET6 (e.g. AF_IB, or none yet)
     */
    static InetSocketAddress fromC(MemorySegment sa) {
        int family = sockaddr.sa_family(sa);
        try {
            if (family == RdmaCore.AF_INET()) {
                byte[] ip = sockaddr_in.sin_addr(sa).toArray(ValueLayout.JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(ip), port(sockaddr_in.sin_port(sa)));
            }
            if (family == RdmaCore.AF_INET6()) {
                byte[] ip = sockaddr_in6.sin6_addr(sa).toArray(ValueLayout.JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(ip), port(sockaddr_in6.sin6_port(sa)));
            }
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
        throw new IllegalStateException("no IP address (address family " + family + ")");
    }

    private static int port(short networkOrder) {
        return Short.toUnsignedInt(Short.reverseBytes(networkOrder));
    }
}
