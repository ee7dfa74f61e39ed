package io.rdma4j.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.Transport;
import io.rdma4j.verbs.WorkCompletionStatus;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One-sided operations of a channel on a buffer its peer handed out in a message, on the test device: READ, WRITE,
 * WRITE with immediate and the atomics, blocking and as futures, more of them than may be in flight; bounds and
 * capabilities checked before C; a failed operation named in its exception and ending the channel.
 */
@Tag("device")
class RemoteOperationsTest {

    private static final Duration TIMEOUT = ChannelPair.TIMEOUT;
    private static final int SIZE = 1 << 16;
    private static final Set<Access> SHARED = Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE,
            Access.REMOTE_ATOMIC);
    /** Few, so that the futures below wait for slots. */
    private static final MessagingOptions OPTIONS = MessagingOptions.builder().operationsInFlight(3).build();

    /** The server's region, handed to the client in a message, as an application hands out its buffers. */
    private static RemoteBuffer handOut(ChannelPair pair, MemoryRegion region) throws InterruptedException {
        byte[] bytes = RemoteBuffer.of(region).toBytes();
        pair.server().send(MemorySegment.ofArray(bytes));
        try (ReceivedMessage m = pair.client().receive(TIMEOUT)) {
            return RemoteBuffer.readFrom(m.segment(), 0);
        }
    }

    private static MemoryRegion region(MessageChannel channel) {
        return channel.connection().protectionDomain().allocateMemory(SIZE, SHARED);
    }

    private static byte pattern(long i) {
        return (byte) (i * 31 + 7);
    }

    @ParameterizedTest
    @EnumSource(ProgressMode.class)
    void readsAndWritesMoveTheBytesBlockingAndAsFuturesBeyondTheOperationsInFlight(ProgressMode mode)
            throws Exception {
        try (ChannelPair pair = ChannelPair.open(mode, OPTIONS);
             MemoryRegion shared = region(pair.server());
             MemoryRegion local = region(pair.client())) {
            for (long i = 0; i < SIZE; i++) {
                shared.segment().set(ValueLayout.JAVA_BYTE, i, pattern(i));
            }
            RemoteBuffer remote = handOut(pair, shared);
            MessageChannel client = pair.client();

            client.read(remote, local, 0);
            assertEquals(-1, local.segment().mismatch(shared.segment()), "the READ brought every byte");

            // Sixteen READs of 4 KiB slices, each to its place, 3 in flight at a time.
            local.segment().fill((byte) 0);
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (int k = 0; k < 16; k++) {
                reads.add(client.readAsync(remote.slice(k * 4096L, 4096), local, k * 4096L));
            }
            CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(-1, local.segment().mismatch(shared.segment()), "the READs brought every byte");

            // WRITE the local bytes back, reversed, in two halves (one blocking, one a future), then tell the server.
            for (long i = 0; i < SIZE; i++) {
                local.segment().set(ValueLayout.JAVA_BYTE, i, pattern(SIZE - 1 - i));
            }
            client.write(local, 0, remote.slice(0, SIZE / 2));
            client.writeAsync(local, SIZE / 2, remote.slice(SIZE / 2, SIZE / 2)).get(TIMEOUT.toSeconds(),
                    TimeUnit.SECONDS);
            client.send(MemorySegment.ofArray(new byte[] {1}));
            pair.server().receive(TIMEOUT).release();
            for (long i = 0; i < SIZE; i++) {
                if (shared.segment().get(ValueLayout.JAVA_BYTE, i) != pattern(SIZE - 1 - i)) {
                    throw new AssertionError("byte " + i + " of the WRITE differs");
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ProgressMode.class)
    void atomicsFromManyThreadsCountEveryAdditionAndSwapOnlyTheExpectedValue(ProgressMode mode) throws Exception {
        try (ChannelPair pair = ChannelPair.open(mode, OPTIONS);
             MemoryRegion shared = region(pair.server())) {
            RemoteBuffer remote = handOut(pair, shared);
            MessageChannel client = pair.client();
            if (!client.capabilities().atomics()) {
                UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                        () -> client.fetchAndAdd(remote, 0, 1));
                assertTrue(e.getMessage().contains("atomic_cap NONE"), e.getMessage());
                assumeTrue(false, "SKIPPED: " + client.connection().context().device().name()
                        + " reports atomic_cap NONE (refused before C, as checked)");
            }
            int threads = 4;
            int additions = 200;
            List<Thread> adders = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            long[] seen = new long[threads * additions * 2];
            for (int t = 0; t < threads; t++) {
                int id = t;
                adders.add(Thread.ofVirtual().start(() -> {
                    try {
                        List<CompletableFuture<Long>> futures = new ArrayList<>();
                        for (int n = 0; n < additions; n++) {
                            seen[(id * additions + n) * 2] = client.fetchAndAdd(remote, 64, 1);
                            futures.add(client.fetchAndAddAsync(remote, 64, 1));
                        }
                        for (int n = 0; n < additions; n++) {
                            seen[(id * additions + n) * 2 + 1] = futures.get(n).get(20, TimeUnit.SECONDS);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread adder : adders) {
                adder.join(TIMEOUT);
            }
            assertTrue(failures.isEmpty(), failures.toString());
            long total = 2L * threads * additions;
            assertEquals(total, shared.segment().get(ValueLayout.JAVA_LONG, 64), "every addition counted");
            java.util.Arrays.sort(seen);
            for (int i = 0; i < seen.length; i++) {
                assertEquals(i, seen[i], "each addition saw its own old value");
            }

            assertEquals(total, client.compareAndSwap(remote, 64, 7, 9), "no swap: the value was not 7");
            assertEquals(total, shared.segment().get(ValueLayout.JAVA_LONG, 64));
            assertEquals(total, client.compareAndSwapAsync(remote, 64, total, -5).get(20, TimeUnit.SECONDS));
            assertEquals(-5, shared.segment().get(ValueLayout.JAVA_LONG, 64), "swapped");
            // Messages go on after atomics (the verbs batch they share once kept an atomic's 8-byte rule).
            client.send(MemorySegment.ofArray(new byte[25]));
            try (ReceivedMessage message = pair.server().receive(TIMEOUT)) {
                assertEquals(25, message.length());
            }
        }
    }

    @Test
    void aWriteWithImmediateArrivesAsANoticeBetweenTheMessagesAroundIt() throws Exception {
        MessagingOptions options = MessagingOptions.builder().receiveCredits(4).build();
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, options);
             MemoryRegion shared = region(pair.server());
             MemoryRegion local = region(pair.client())) {
            RemoteBuffer remote = handOut(pair, shared);
            MessageChannel client = pair.client();
            if (!client.capabilities().immediateData()) {
                UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                        () -> client.writeWithImmediate(local, 0, remote.slice(0, 8), 1));
                assertTrue(e.getMessage().contains("no immediate data"), e.getMessage());
                assumeTrue(false, "SKIPPED: iWARP has no immediate data (refused before C, as checked)");
            }
            // Three times the server's credits: the notices take receives, so the writer must wait for credit.
            int rounds = 12;
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        local.segment().set(ValueLayout.JAVA_LONG, 8L * r, 1000 + r);
                        client.send(MemorySegment.ofArray(new byte[] {(byte) r}));
                        client.writeWithImmediate(local, 8L * r, remote.slice(8L * r, 8), 0xC0DE0000 | r);
                    }
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            for (int r = 0; r < rounds; r++) {
                Thread.sleep(20);
                try (ReceivedMessage message = pair.server().receive(TIMEOUT)) {
                    assertFalse(message.isWriteNotice());
                    assertEquals(r, message.byteAt(0));
                    assertEquals(2 * r, message.sequence(), "messages and notices are numbered together");
                    assertThrows(IllegalStateException.class, message::immediate);
                }
                try (ReceivedMessage notice = pair.server().receive(TIMEOUT)) {
                    assertTrue(notice.isWriteNotice(), notice.toString());
                    assertEquals(0xC0DE0000 | r, notice.immediate());
                    assertEquals(8, notice.writtenLength());
                    assertEquals(0, notice.length());
                    assertEquals(2 * r + 1, notice.sequence());
                    assertEquals(1000 + r, shared.segment().get(ValueLayout.JAVA_LONG, 8L * r),
                            "the bytes were there when the notice came");
                }
            }
            writer.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    @Test
    void rangesOutsideTheAdvertisedBufferAndForeignRegionsAreRefusedBeforeC() throws Exception {
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, OPTIONS);
             MemoryRegion shared = region(pair.server());
             MemoryRegion local = region(pair.client());
             ProtectionDomain other = pair.client().connection().context().allocateProtectionDomain();
             MemoryRegion foreign = other.allocateMemory(SIZE, SHARED)) {
            RemoteBuffer remote = handOut(pair, shared);
            MessageChannel client = pair.client();
            IndexOutOfBoundsException beyond = assertThrows(IndexOutOfBoundsException.class,
                    () -> client.read(remote.slice(SIZE - 8, 16), local, 0));
            assertTrue(beyond.getMessage().contains("not inside the remote buffer's " + SIZE), beyond.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> client.fetchAndAdd(remote, SIZE - 4, 1));
            if (client.capabilities().atomics()) {
                IllegalArgumentException unaligned = assertThrows(IllegalArgumentException.class,
                        () -> client.compareAndSwap(remote, 4, 0, 1));
                assertTrue(unaligned.getMessage().contains("8-byte aligned"), unaligned.getMessage());
            }
            IndexOutOfBoundsException localBeyond = assertThrows(IndexOutOfBoundsException.class,
                    () -> client.read(remote.slice(0, 4096), local, SIZE - 100));
            assertTrue(localBeyond.getMessage().contains("not inside the region"), localBeyond.getMessage());
            IllegalArgumentException foreignRegion = assertThrows(IllegalArgumentException.class,
                    () -> client.write(foreign, 0, remote.slice(0, 64)));
            assertTrue(foreignRegion.getMessage().contains("registered in"), foreignRegion.getMessage());

            // Nothing was posted: the channel goes on, with all its operation slots.
            for (int k = 0; k < OPTIONS.operationsInFlight() + 1; k++) {
                client.read(remote.slice(0, 64), local, 0);
            }
            client.send(MemorySegment.ofArray(new byte[] {9}));
            assertEquals(9, pair.server().receive(TIMEOUT).byteAt(0));
        }
    }

    @Test
    void aWrongRkeyFailsTheOperationWithItsAddressKeyAndStatusAndEndsTheChannel() throws Exception {
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, OPTIONS);
             MemoryRegion shared = region(pair.server());
             MemoryRegion local = region(pair.client())) {
            RemoteBuffer remote = handOut(pair, shared);
            RemoteBuffer wrong = new RemoteBuffer(remote.address(), remote.rkey() ^ 0x5A5A00, 256);
            MessageChannel client = pair.client();
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> client.readAsync(wrong, local, 0).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            boolean iwarp = client.capabilities().transport() == Transport.IWARP;
            if (iwarp && failed.getCause() instanceof ChannelException first) {
                // siw answers a bad STag with a TERMINATE and the connection ends: its DISCONNECTED may be taken
                // before the READ's flush is polled, and then fails the READ as it fails every pending call.
                assertEquals(ChannelException.Reason.PEER_DISCONNECTED, first.reason(), first.toString());
                return;
            }
            RemoteOperationException e = assertInstanceOf(RemoteOperationException.class, failed.getCause());
            assertEquals(RemoteOperation.READ, e.operation());
            assertEquals(wrong.rkey(), e.rkey());
            assertEquals(wrong.address(), e.remoteAddress());
            // On iWARP the READ's own completion, when it comes first, is the flush after siw's TERMINATE.
            assertEquals(iwarp ? WorkCompletionStatus.WORK_REQUEST_FLUSH_ERROR : WorkCompletionStatus.REMOTE_ACCESS_ERROR,
                    e.status());
            assertTrue(e.getMessage().contains("READ of 256 bytes at 0x" + Long.toHexString(wrong.address())
                    + " (rkey 0x" + Integer.toHexString(wrong.rkey()) + ") failed with " + e.status())
                    && e.getMessage().contains(client.toString()), e.getMessage());

            ChannelException after = assertThrows(ChannelException.class, () -> client.read(remote, local, 0));
            assertEquals(iwarp ? ChannelException.Reason.PEER_DISCONNECTED : ChannelException.Reason.TRANSPORT_FAILED,
                    after.reason());
            assertInstanceOf(RemoteOperationException.class, after.getCause().getCause(), after.toString());
        }
    }

    @Test
    void operationsOnAClosedChannelFailWithClosed() throws Exception {
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, OPTIONS);
             Arena arena = Arena.ofConfined()) {
            RemoteBuffer somewhere = new RemoteBuffer(arena.allocate(64, 8).address(), 1, 64);
            MemoryRegion local = region(pair.client());
            pair.client().close();
            ChannelException e = assertThrows(ChannelException.class, () -> pair.client().readAsync(somewhere, local,
                    0));
            assertEquals(ChannelException.Reason.CLOSED, e.reason());
            assertThrows(ChannelException.class, () -> pair.client().fetchAndAdd(somewhere, 0, 1));
            local.close();
        }
    }
}
