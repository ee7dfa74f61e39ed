package io.rdma4j.verbs;

/**
 * A port's state and properties, from the full {@code ibv_query_port} (the verbs_context entry, which fills
 * every field; the exported compat symbol would not).
 *
 * @param state             logical state; data moves only when {@link PortState#ACTIVE}
 * @param maxMtu            the largest MTU the port supports
 * @param activeMtu         the MTU in use; a QP's path MTU must not exceed it
 * @param gidTableLength    {@code gid_tbl_len}
 * @param capabilityFlags   {@code port_cap_flags} ({@code IBV_PORT_*_SUP} bits)
 * @param maxMessageSize    {@code max_msg_sz}
 * @param lid               the port's LID (InfiniBand; 0 on RoCE and iWARP)
 * @param smLid             the subnet manager's LID
 * @param lmc               LID mask control
 * @param activeWidth       {@code active_width} (IB link width code)
 * @param activeSpeed       {@code active_speed} (IB link speed code)
 * @param physicalState     {@code phys_state} (5 = LinkUp)
 * @param linkLayer         InfiniBand or Ethernet (RoCE, iWARP)
 */
public record PortAttributes(PortState state, Mtu maxMtu, Mtu activeMtu, int gidTableLength, int capabilityFlags,
                             long maxMessageSize, int lid, int smLid, int lmc, int activeWidth, int activeSpeed,
                             int physicalState, LinkLayer linkLayer) {
}
