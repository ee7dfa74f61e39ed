package io.rdma4j.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Credit-based flow control, proven: a sender that never pauses against a receiver that holds messages and sleeps,
 * messages of random sizes from 1 byte to 1 MiB (so the large ones travel by rendezvous), every one checked to arrive
 * once, in order and intact (its sequence number and a CRC-32C of its bytes), with no receiver-not-ready retry
 * counted by the device ({@code rdma statistic}: on iWARP there is no such retry and a send without a posted receive
 * ends the connection, so there the channel still being open at the end is the proof) and no connection error.
 *
 * <p>{@code RDMA4J_PROOF_MESSAGES} messages (default 4,000, the CI's run); {@code src/test/lab/rdma-lab proof}
 * runs 1,000,000 on rxe0 and siw0.
 */
@Tag("device")
class FlowControlProofTest {

    private static final int MAX = 1 << 20;
    /** Sequence number (8 bytes) and CRC-32C of the rest (4): messages at least this long carry both. */
    private static final int HEADER = 12;

    @Test
    @Timeout(value = 6, unit = TimeUnit.HOURS) // the full run's million messages; a stall fails each receive in 20 s
    void aMillionMessagesOfRandomSizesArriveOnceInOrderIntactWithoutReceiverNotReady() throws Exception {
        String env = System.getenv("RDMA4J_PROOF_MESSAGES");
        long messages = env == null ? 4_000 : Long.parseLong(env);
        String device = System.getenv("RDMA4J_TEST_DEVICE");
        Map<String, Long> before = rnrCounters(device);
        MessagingOptions options = MessagingOptions.builder().receiveCredits(16).sendBuffers(8).build();
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, options)) {
            CompletableFuture<Long> sender = CompletableFuture.supplyAsync(() -> send(pair.client(), messages),
                    task -> Thread.ofPlatform().name("proof-sender").start(task));
            SplittableRandom sizes = new SplittableRandom(SEED);
            SplittableRandom pauses = new SplittableRandom(2);
            List<ReceivedMessage> held = new ArrayList<>();
            CRC32C crc = new CRC32C();
            long bytes = 0;
            for (long n = 0; n < messages; n++) {
                ReceivedMessage m = pair.server().receive(ChannelPair.TIMEOUT);
                if (m == null) {
                    sender.getNow(null); // the sender's failure, if that is why
                    fail("message " + n + " did not arrive within " + ChannelPair.TIMEOUT);
                }
                int length = size(sizes);
                assertEquals(length, m.length(), "message " + n + "'s length");
                MemorySegment s = m.segment();
                if (length >= HEADER) {
                    assertEquals(n, s.get(ValueLayout.JAVA_LONG_UNALIGNED, 0), "message " + n + " in its place");
                    crc.reset();
                    crc.update(s.asSlice(HEADER).asByteBuffer());
                    assertEquals(s.get(ValueLayout.JAVA_INT_UNALIGNED, 8), (int) crc.getValue(),
                            "message " + n + "'s CRC-32C");
                } else {
                    for (int i = 0; i < length; i++) {
                        assertEquals((byte) (n + i), s.get(ValueLayout.JAVA_BYTE, i), "message " + n + " byte " + i);
                    }
                }
                bytes += length;
                held.add(m);
                // Hold up to all credits' worth, and now and then sleep with them held: the sender must wait.
                if (held.size() == options.receiveCredits() || pauses.nextInt(8) == 0) {
                    if (pauses.nextInt(2000) == 0) {
                        Thread.sleep(5);
                    }
                    held.forEach(ReceivedMessage::release);
                    held.clear();
                }
            }
            held.forEach(ReceivedMessage::release);
            assertEquals(bytes, sender.get(ChannelPair.TIMEOUT.toSeconds(), TimeUnit.SECONDS), "bytes sent");
            assertNull(pair.server().tryReceive(), "nothing more than was sent arrived");
            // No connection error: both ends are still open and talk.
            pair.server().send(MemorySegment.ofArray(new byte[] {42}));
            try (ReceivedMessage last = pair.client().receive(ChannelPair.TIMEOUT)) {
                assertEquals(42, last.byteAt(0));
            }
            System.out.printf("%s: %d messages, %d bytes, arrived once, in order, intact%n", device, messages, bytes);
        }
        Map<String, Long> after = rnrCounters(device);
        if (before.isEmpty()) {
            System.out.println(device + " counts no receiver-not-ready retries (rdma statistic shows none): the open "
                    + "channel is the proof");
            assertTrue(device.startsWith("siw"), "rxe counts them: " + device + " showed no rnr counters");
        } else {
            assertEquals(before, after, "receiver-not-ready counters of " + device);
            System.out.println(device + "'s receiver-not-ready counters did not move: " + after);
        }
    }

    private static final long SEED = 1;

    /** 1 B to 1 MiB: a power-of-two band chosen evenly, then a size in it evenly, so that each band is well used. */
    private static int size(SplittableRandom random) {
        int band = random.nextInt(21); // 2^0 .. 2^20
        return Math.min(MAX, (1 << band) + random.nextInt(1 << band));
    }

    /** Sends {@code messages} without pause; returns their bytes. */
    private static long send(MessageChannel channel, long messages) {
        SplittableRandom sizes = new SplittableRandom(SEED);
        SplittableRandom content = new SplittableRandom(3);
        CRC32C crc = new CRC32C();
        long bytes = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(MAX);
            for (int i = 0; i < MAX; i += Long.BYTES) {
                buffer.set(ValueLayout.JAVA_LONG_UNALIGNED, i, content.nextLong());
            }
            for (long n = 0; n < messages; n++) {
                int length = size(sizes);
                MemorySegment m = buffer.asSlice(0, length);
                if (length >= HEADER) {
                    // New bytes where they start each time (the rest is the same random fill): no message repeats.
                    m.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, n);
                    if (length >= HEADER + Long.BYTES) {
                        m.set(ValueLayout.JAVA_LONG_UNALIGNED, HEADER, n * 0x9E3779B97F4A7C15L);
                    }
                    crc.reset();
                    crc.update(m.asSlice(HEADER).asByteBuffer());
                    m.set(ValueLayout.JAVA_INT_UNALIGNED, 8, (int) crc.getValue());
                } else {
                    for (int i = 0; i < length; i++) {
                        m.set(ValueLayout.JAVA_BYTE, i, (byte) (n + i));
                    }
                }
                channel.send(m);
                bytes += length;
            }
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return bytes;
    }

    /** The device's counters whose name says RNR (receiver not ready), by name; empty if it shows none. */
    private static Map<String, Long> rnrCounters(String device) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rdma", "-j", "statistic", "show", "link", device + "/1")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(30, TimeUnit.SECONDS);
        Map<String, Long> counters = new TreeMap<>();
        Matcher m = Pattern.compile("\"([a-z_]*rnr[a-z_]*)\":(\\d+)").matcher(out);
        while (m.find()) {
            counters.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return counters;
    }
}
