package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.Transport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The README's quick starts run as written, on the test device. */
@Tag("device")
class QuickStartTest {

    private String device;

    @BeforeEach
    void roceDevice() {
        device = InProcessServer.testDevice();
        Device found = Device.byName(device).orElseThrow(() -> new AssertionError("no RDMA device " + device));
        assumeFalse(found.transport() == Transport.IWARP, "the quick starts connect by GID (RoCE); iWARP needs rdma_cm");
    }

    @Test
    void sendAndReceive() {
        assertEquals("received: hello, RDMA", run(() -> QuickStartSendReceive.main(new String[] {device})));
    }

    @Test
    void rdmaWrite() {
        assertEquals("SUCCESS: target holds \"written by RDMA\"", run(() -> QuickStartRdmaWrite.main(new String[] {device})));
    }

    private static String run(Runnable main) {
        PrintStream stdout = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            main.run();
        } finally {
            System.setOut(stdout);
        }
        return captured.toString(StandardCharsets.UTF_8).strip();
    }
}
