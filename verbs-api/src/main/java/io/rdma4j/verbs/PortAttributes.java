package io.rdma4j.verbs;

/**
 * A port's state and properties, from the full {@code ibv_query_port} (the verbs_context entry, which fills
 * every field; the exported compat symbol would not).
 *
 * <p>Immutable and thread-safe; made only by rdma4j (a new C field becomes a new accessor, never a broken
 * constructor call).
 */
public final class PortAttributes {

    private final PortState state;
    private final Mtu maxMtu;
    private final Mtu activeMtu;
    private final int gidTableLength;
    private final int capabilityFlags;
    private final long maxMessageSize;
    private final int lid;
    private final int smLid;
    private final int lmc;
    private final int activeWidth;
    private final int activeSpeed;
    private final int physicalState;
    private final LinkLayer linkLayer;

    PortAttributes(PortState state, Mtu maxMtu, Mtu activeMtu, int gidTableLength, int capabilityFlags,
                   long maxMessageSize, int lid, int smLid, int lmc, int activeWidth, int activeSpeed,
                   int physicalState, LinkLayer linkLayer) {
        this.state = state;
        this.maxMtu = maxMtu;
        this.activeMtu = activeMtu;
        this.gidTableLength = gidTableLength;
        this.capabilityFlags = capabilityFlags;
        this.maxMessageSize = maxMessageSize;
        this.lid = lid;
        this.smLid = smLid;
        this.lmc = lmc;
        this.activeWidth = activeWidth;
        this.activeSpeed = activeSpeed;
        this.physicalState = physicalState;
        this.linkLayer = linkLayer;
    }

    /** Logical state; data moves only when {@link PortState#ACTIVE}. */
    public PortState state() {
        return state;
    }

    /** The largest MTU the port supports. */
    public Mtu maxMtu() {
        return maxMtu;
    }

    /** The MTU in use; a QP's path MTU must not exceed it. */
    public Mtu activeMtu() {
        return activeMtu;
    }

    /** {@code gid_tbl_len}. */
    public int gidTableLength() {
        return gidTableLength;
    }

    /** {@code port_cap_flags} ({@code IBV_PORT_*_SUP} bits) */
    public int capabilityFlags() {
        return capabilityFlags;
    }

    /** {@code max_msg_sz}. */
    public long maxMessageSize() {
        return maxMessageSize;
    }

    /** The port's LID (InfiniBand; 0 on RoCE and iWARP) */
    public int lid() {
        return lid;
    }

    /** The subnet manager's LID. */
    public int smLid() {
        return smLid;
    }

    /** LID mask control. */
    public int lmc() {
        return lmc;
    }

    /** {@code active_width} (IB link width code) */
    public int activeWidth() {
        return activeWidth;
    }

    /** {@code active_speed} (IB link speed code) */
    public int activeSpeed() {
        return activeSpeed;
    }

    /** {@code phys_state} (5 = LinkUp) */
    public int physicalState() {
        return physicalState;
    }

    /** InfiniBand or Ethernet (RoCE, iWARP) */
    public LinkLayer linkLayer() {
        return linkLayer;
    }

    @Override
    public String toString() {
        return "PortAttributes[state=" + state
                + ", maxMtu=" + maxMtu
                + ", activeMtu=" + activeMtu
                + ", gidTableLength=" + gidTableLength
                + ", capabilityFlags=" + capabilityFlags
                + ", maxMessageSize=" + maxMessageSize
                + ", lid=" + lid
                + ", smLid=" + smLid
                + ", lmc=" + lmc
                + ", activeWidth=" + activeWidth
                + ", activeSpeed=" + activeSpeed
                + ", physicalState=" + physicalState
                + ", linkLayer=" + linkLayer + "]";
    }
}
