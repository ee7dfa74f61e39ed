package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The device the device tier runs on: {@code RDMA4J_TEST_DEVICE} names it (rxe0 and siw0 in the lab, e.g. mlx5_0
 * on real hardware). A device test never passes by finding no device: without the variable, or without that
 * device, it fails.
 */
final class TestDevice {

    static final String VARIABLE = "RDMA4J_TEST_DEVICE";

    private TestDevice() {
    }

    /** The device named by {@code RDMA4J_TEST_DEVICE}. */
    static Device device() {
        String name = System.getenv(VARIABLE);
        if (name == null || name.isBlank()) {
            return fail(VARIABLE + " is not set: device tests need a device (run them with src/test/lab/rdma-lab test)");
        }
        return Device.byName(name).orElseGet(() -> fail("RDMA device " + name + " not found; present: " + Device.list()));
    }

    /**
     * The IP address of the test device's port, from {@code RDMA4J_TEST_ADDRESS}: needed to connect iWARP queue
     * pairs (through rdma_cm) and to pick the RoCE GID of that address.
     */
    static java.net.InetAddress address() {
        String value = System.getenv("RDMA4J_TEST_ADDRESS");
        if (value == null || value.isBlank()) {
            return fail("RDMA4J_TEST_ADDRESS is not set: it names the IP address of the test device's port");
        }
        try {
            return java.net.InetAddress.getByName(value);
        } catch (java.net.UnknownHostException e) {
            return fail("RDMA4J_TEST_ADDRESS is not an IP address: " + value);
        }
    }

    /** siw's vendor id ({@code SIW_VENDOR_ID}, "bmt"): for tests that meet a known gap of soft-iWARP. */
    private static final int SIW_VENDOR_ID = 0x626d74;

    /** Whether {@code context} is a soft-iWARP (siw) device. */
    static boolean isSoftIwarp(Context context) {
        return context.queryDevice().vendorId() == SIW_VENDOR_ID;
    }

    /** Closes what a test's setup opened, in the order given, skipping what it never got to open. */
    static void closeAll(AutoCloseable... resources) throws Exception {
        for (AutoCloseable resource : resources) {
            if (resource != null) {
                resource.close();
            }
        }
    }

    /** Opens the test device. */
    static Context open() {
        return device().open();
    }
}
