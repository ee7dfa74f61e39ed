package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.rdma4j.verbs.Device;
import io.rdma4j.verbs.Transport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The README's quick starts run as written, on the test device. */
@Tag("device")
class QuickStartTest {

    private final String device = InProcessServer.testDevice();

    /** The verbs quick starts connect their queue pairs by GID (RoCE); iWARP connects only through rdma_cm. */
    private void roceDevice() {
        Device found = Device.byName(device).orElseThrow(() -> new AssertionError("no RDMA device " + device));
        assumeFalse(found.transport() == Transport.IWARP, "the quick starts connect by GID (RoCE); iWARP needs rdma_cm");
    }

    @Test
    void sendAndReceive() {
        roceDevice();
        assertEquals("received: hello, RDMA", run(() -> QuickStartSendReceive.main(new String[] {device})));
    }

    @Test
    void rdmaWrite() {
        roceDevice();
        assertEquals("SUCCESS: target holds \"written by RDMA\"", run(() -> QuickStartRdmaWrite.main(new String[] {device})));
    }

    @Test
    void messaging() {
        assertEquals("echoed: hello, messages", run(() -> {
            try {
                QuickStartMessaging.main(new String[] {InProcessServer.testAddress()});
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }));
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
