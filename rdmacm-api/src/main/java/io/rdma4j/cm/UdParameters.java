package io.rdma4j.cm;

import io.rdma4j.verbs.AddressVector;

/**
 * How to reach an unreliable-datagram peer or multicast group ({@code struct rdma_ud_param} of an ESTABLISHED event
 * on a {@link PortSpace#UDP} id, or of MULTICAST_JOIN): build an {@link io.rdma4j.verbs.AddressHandle} from
 * {@link #address()} and send to {@link #queuePairNumber()} with {@link #qkey()}.
 *
 * @param address         the address handle attributes ({@code ah_attr})
 * @param queuePairNumber the remote QP number ({@code 0xFFFFFF} for a multicast group)
 * @param qkey            the Q_Key to send with
 */
public record UdParameters(AddressVector address, int queuePairNumber, int qkey) {
}
