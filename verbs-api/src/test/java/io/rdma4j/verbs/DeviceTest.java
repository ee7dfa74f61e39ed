package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("device")
class DeviceTest {

    @Test
    void theTestDeviceIsListedWithItsTransport() {
        Device device = TestDevice.device();
        assertTrue(Device.list().contains(device));
        if (device.name().startsWith("siw")) {
            assertEquals(Transport.IWARP, device.transport());
            assertEquals(NodeType.RNIC, device.nodeType());
        } else if (device.name().startsWith("rxe")) {
            assertEquals(Transport.INFINIBAND, device.transport());
            assertEquals(NodeType.CHANNEL_ADAPTER, device.nodeType());
        }
    }

    @Test
    void queryDeviceReportsUsableLimits() {
        try (Context context = TestDevice.open()) {
            DeviceAttributes attributes = context.queryDevice();
            assertTrue(attributes.physicalPortCount() >= 1, attributes.toString());
            assertTrue(attributes.maxQueuePairs() > 0, attributes.toString());
            assertTrue(attributes.maxScatterGather() > 0, attributes.toString());
            assertTrue(attributes.maxCompletionQueueEntries() > 0, attributes.toString());
            if (context.device().name().startsWith("siw")) {
                assertEquals(AtomicCapability.NONE, attributes.atomicCapability());
            }
        }
    }

    @Test
    void portOneIsAnActiveEthernetPort() {
        try (Context context = TestDevice.open()) {
            PortAttributes port = context.queryPort(1);
            assertEquals(PortState.ACTIVE, port.state(), port.toString());
            assertEquals(LinkLayer.ETHERNET, port.linkLayer(), "rxe and siw run over Ethernet: " + port);
            assertTrue(port.activeMtu().compareTo(port.maxMtu()) <= 0, port.toString());
            assertTrue(port.gidTableLength() > 0, port.toString());
        }
    }

    @Test
    void aPortTheDeviceDoesNotHaveIsAnError() {
        try (Context context = TestDevice.open()) {
            int beyond = context.queryDevice().physicalPortCount() + 1;
            VerbException e = assertThrows(VerbException.class, () -> context.queryPort(beyond));
            assertEquals("ibv_query_port", e.verb());
            assertThrows(IllegalArgumentException.class, () -> context.queryPort(0));
        }
    }

    @Test
    void softRoceHasARoceV2Gid() {
        try (Context context = TestDevice.open()) {
            List<GidEntry> table = context.gidTable();
            assertTrue(!table.isEmpty(), "the GID table has entries");
            if (context.device().transport() == Transport.INFINIBAND
                    && context.queryPort(1).linkLayer() == LinkLayer.ETHERNET) {
                assertTrue(table.stream().anyMatch(g -> g.type() == GidType.ROCE_V2), table.toString());
            }
            table.forEach(g -> assertEquals(16, g.gid().length));
        }
    }

    @Test
    void aClosedContextRefusesUseAndClosesTwiceQuietly() {
        Context context = TestDevice.open();
        context.close();
        context.close();
        assertTrue(context.isClosed());
        IllegalStateException e = assertThrows(IllegalStateException.class, context::queryDevice);
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IllegalStateException.class, context::allocateProtectionDomain);
    }
}
