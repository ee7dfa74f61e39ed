package io.rdma4j.examples;

import io.rdma4j.verbs.AddressVector;
import io.rdma4j.verbs.CompletionChannel;
import io.rdma4j.verbs.CompletionQueue;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.GidEntry;
import io.rdma4j.verbs.LinkLayer;
import io.rdma4j.verbs.PortAttributes;
import io.rdma4j.verbs.PortState;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * What the pingpong tools set up before their queue pairs, with their error messages: the device ({@code -d}, else
 * the first), its port ({@code -i}, which must be active), the local GID ({@code -g}), a protection domain, and one
 * completion queue of {@code entries}, on a completion channel with {@code -e}. Closing closes all of it.
 */
final class PingPongDevice implements AutoCloseable {

    private final PingPongOptions options;
    private final Context context;
    private final PortAttributes port;
    private final byte[] gid;
    private final ProtectionDomain protectionDomain;
    private final CompletionQueue completionQueue;
    private final SecureRandom random = new SecureRandom();
    private final List<Integer> psns = new ArrayList<>();

    private PingPongDevice(PingPongOptions options, Context context, int entries) {
        this.options = options;
        this.context = context;
        this.port = context.queryPort(options.ibPort());
        if (port.state() != PortState.ACTIVE) {
            throw new IllegalStateException("port " + options.ibPort() + " of " + context.device().name() + " is "
                    + port.state() + ", not ACTIVE");
        }
        if (port.linkLayer() != LinkLayer.ETHERNET && port.lid() == 0) {
            throw new IllegalStateException("Couldn't get local LID");
        }
        this.gid = options.gidIndex() < 0 ? new byte[16] : context.gidTable().stream()
                .filter(g -> g.port() == options.ibPort() && g.index() == options.gidIndex()).map(GidEntry::gid)
                .findFirst().orElseThrow(() -> new IllegalArgumentException("Could not get local gid for gid index "
                        + options.gidIndex() + " (port " + options.ibPort() + " of " + context.device().name()
                        + " has " + port.gidTableLength() + " entries; see ibv_devinfo -v)"));
        this.protectionDomain = context.allocateProtectionDomain();
        CompletionChannel channel = options.events() ? context.createCompletionChannel() : null;
        this.completionQueue = channel == null ? context.createCompletionQueue(entries)
                : context.createCompletionQueue(entries, channel, 0);
    }

    /** Opens the device of {@code -d} (or the first) and sets up the rest; refuses a device that is not there. */
    static PingPongDevice open(PingPongOptions options, int entries) {
        List<Device> devices = Device.list();
        Device device;
        if (options.device() == null) {
            if (devices.isEmpty()) {
                throw new IllegalStateException("No IB devices found");
            }
            device = devices.getFirst();
        } else {
            device = devices.stream().filter(d -> d.name().equals(options.device())).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("IB device " + options.device() + " not found"
                            + " (devices: " + devices.stream().map(Device::name).toList() + ")"));
        }
        Context context = device.open();
        try {
            return new PingPongDevice(options, context, entries);
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
    }

    ProtectionDomain protectionDomain() {
        return protectionDomain;
    }

    CompletionQueue completionQueue() {
        return completionQueue;
    }

    /** The path MTU the port runs at (what the UD tool checks {@code -s} against). */
    int activeMtuBytes() {
        return 1 << (port.activeMtu().value() + 7);
    }

    /** {@code qp}'s destination for the peer, with a new random PSN (the {@code psns.size()}-th). */
    PingPongWire.Destination destination(QueuePair qp) {
        int psn = random.nextInt(1 << 24);
        psns.add(psn);
        return new PingPongWire.Destination(port.lid(), qp.number(), psn, gid);
    }

    /** The PSN of the {@code index}-th destination. */
    int psn(int index) {
        return psns.get(index);
    }

    /**
     * The path to a peer as the C tools build it: by GID ({@code -g}'s source index, {@code hopLimit}) when
     * {@code global}, else by LID; {@code -l}'s service level, {@code -i}'s port.
     */
    AddressVector pathTo(boolean global, byte[] gid, int lid, int hopLimit) {
        AddressVector path = global
                ? AddressVector.ofGid(gid, options.gidIndex(), options.ibPort()).withHopLimit(hopLimit)
                        .withDestinationLid(lid)
                : AddressVector.ofLid(lid, options.ibPort());
        return path.withServiceLevel(options.serviceLevel());
    }

    /** With {@code -e}: arms the CQ, as the C tools do before the exchange. */
    void armForEvents() {
        if (options.events()) {
            completionQueue.requestNotification(false);
        }
    }

    @Override
    public void close() {
        // The context closes the QPs, CQ, channel, regions and PD on it, in order.
        context.close();
    }
}
