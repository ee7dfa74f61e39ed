package io.rdma4j.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Message channels on the test device ({@code RDMA4J_TEST_ADDRESS}): a fast sender against a receiver that holds
 * its messages and sleeps (credits must stop the sender: on iWARP a message without a posted receive ends the
 * connection), many connections on one group, and the ends of a channel reaching every waiting call.
 */
@Tag("device")
class MessageChannelTest {

    private static final Duration TIMEOUT = ChannelPair.TIMEOUT;

    /** Fills {@code message} with bytes that only message {@code n} has. */
    private static void fill(MemorySegment message, long n) {
        SplittableRandom bytes = new SplittableRandom(n);
        for (long i = 0; i < message.byteSize(); i++) {
            message.set(ValueLayout.JAVA_BYTE, i, (byte) bytes.nextInt());
        }
    }

    private static void check(ReceivedMessage message, long n, long length) {
        assertEquals(length, message.length(), "message " + n + "'s length");
        SplittableRandom bytes = new SplittableRandom(n);
        for (long i = 0; i < length; i++) {
            if (message.byteAt(i) != (byte) bytes.nextInt()) {
                fail("message " + n + " differs at byte " + i);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ProgressMode.class)
    void aFastSenderNeverOverrunsAReceiverThatHoldsItsMessagesAndSleeps(ProgressMode mode) throws Exception {
        int messages = 5_000;
        MessagingOptions options = MessagingOptions.builder().receiveCredits(8).sendBuffers(4).build();
        try (ChannelPair pair = ChannelPair.open(mode, options)) {
            int max = options.receiveBufferSize() - 16; // all in receive buffers, no rendezvous
            CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> {
                SplittableRandom sizes = new SplittableRandom(1);
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment message = arena.allocate(max);
                    for (int n = 0; n < messages; n++) {
                        MemorySegment m = message.asSlice(0, 1 + sizes.nextInt(max));
                        fill(m, n);
                        pair.client().send(m);
                    }
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            SplittableRandom pauses = new SplittableRandom(2);
            List<ReceivedMessage> held = new ArrayList<>();
            long[] expected = new long[messages];
            SplittableRandom sizesAgain = new SplittableRandom(1);
            for (int n = 0; n < messages; n++) {
                expected[n] = 1 + sizesAgain.nextInt(max);
            }
            for (int n = 0; n < messages; n++) {
                ReceivedMessage m = pair.server().receive(TIMEOUT);
                if (m == null) {
                    sender.getNow(null); // the sender's failure, if that is why
                    fail("message " + n + " did not arrive within " + TIMEOUT);
                }
                assertEquals(n, m.sequence());
                check(m, n, expected[n]);
                held.add(m);
                // Hold up to all credits' worth of messages, and now and then sleep with them held.
                if (held.size() == options.receiveCredits() || pauses.nextInt(8) == 0) {
                    if (pauses.nextInt(50) == 0) {
                        Thread.sleep(20);
                    }
                    held.forEach(ReceivedMessage::release);
                    held.clear();
                }
            }
            held.forEach(ReceivedMessage::release);
            sender.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertNull(pair.server().tryReceive(), "nothing more than was sent arrived");
            ReceivedMessage last = pair.client().tryReceive();
            assertNull(last, "nothing arrived the other way");
        }
    }

    @Test
    void manyConnectionsOnOneGroupEachDoRequestAndResponse() throws Exception {
        int connections = 16;
        int rounds = 200;
        MessagingOptions options = MessagingOptions.builder().receiveCredits(4).sendBuffers(4).build();
        try (MessagingGroup serverGroup = MessagingGroup.create(ProgressMode.EVENT_DRIVEN);
             MessagingGroup clientGroup = MessagingGroup.create(ProgressMode.EVENT_DRIVEN);
             Acceptor acceptor = Acceptor.listen(new InetSocketAddress(ChannelPair.address(), 0), connections)) {
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread server = Thread.ofVirtual().start(() -> {
                try {
                    for (int c = 0; c < connections; c++) {
                        MessageChannel channel = serverGroup.accept(acceptor, options, TIMEOUT).orElseThrow();
                        threads.add(Thread.ofVirtual().start(() -> echo(channel, rounds, failures)));
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            });
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                int id = c;
                clients.add(Thread.ofVirtual().start(() -> {
                    try (MessageChannel channel = clientGroup.connect(acceptor.localAddress(), options, TIMEOUT);
                         Arena arena = Arena.ofConfined()) {
                        MemorySegment request = arena.allocate(8);
                        for (int r = 0; r < rounds; r++) {
                            request.set(ValueLayout.JAVA_LONG, 0, (long) id << 32 | r);
                            channel.send(request);
                            try (ReceivedMessage answer = channel.receive(TIMEOUT)) {
                                assertEquals(((long) id << 32 | r) + 1, answer.segment().get(ValueLayout.JAVA_LONG, 0));
                            }
                        }
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }));
            }
            for (Thread t : clients) {
                t.join(TIMEOUT.toMillis() * 3);
            }
            server.join(TIMEOUT.toMillis());
            for (Thread t : threads) {
                t.join(TIMEOUT.toMillis());
            }
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError(failures.size() + " connections failed");
                failures.forEach(e::addSuppressed);
                throw e;
            }
        }
    }

    /** Answers each request with its number plus one, until the client disconnects. */
    private static void echo(MessageChannel channel, int rounds, List<Throwable> failures) {
        try (channel; Arena arena = Arena.ofConfined()) {
            MemorySegment answer = arena.allocate(8);
            for (int r = 0; r < rounds; r++) {
                try (ReceivedMessage request = channel.receive(TIMEOUT)) {
                    answer.set(ValueLayout.JAVA_LONG, 0, request.segment().get(ValueLayout.JAVA_LONG, 0) + 1);
                }
                channel.send(answer);
            }
            ChannelException end = assertThrows(ChannelException.class, () -> channel.receive(TIMEOUT));
            assertEquals(ChannelException.Reason.PEER_DISCONNECTED, end.reason(), end.toString());
        } catch (Throwable t) {
            failures.add(t);
        }
    }

    /**
     * Sizes from 1 byte to 1 MiB, log-uniform, over 4 KiB receive buffers: most messages travel by rendezvous (the
     * receiver READs the sender's copy and answers DONE), mixed with small ones that must not overtake them. The
     * receiver holds messages and sleeps, with a control window of 2, so that DONEs wait for the window and the
     * sender, which sends nothing but data, must acknowledge them. Every message arrives once, whole, in order, and
     * every copy the sender made is freed by its DONE.
     */
    @ParameterizedTest
    @EnumSource(ProgressMode.class)
    void messagesUpToAMebibyteArriveWholeAndInOrderThroughRendezvous(ProgressMode mode) throws Exception {
        int messages = 400;
        int largest = 1 << 20;
        MessagingOptions options = MessagingOptions.builder().receiveCredits(8).controlWindow(2).sendBuffers(4)
                .maxMessageSize(largest).build();
        long[] sizes = new long[messages];
        SplittableRandom random = new SplittableRandom(3);
        for (int n = 0; n < messages; n++) {
            sizes[n] = Math.max(1, (long) Math.pow(2, random.nextDouble(21)) - random.nextInt(8));
            sizes[n] = Math.min(sizes[n], largest);
        }
        try (ChannelPair pair = ChannelPair.open(mode, options)) {
            assertEquals(largest, pair.client().maxMessageSize());
            assertEquals(largest, pair.client().capabilities().maxMessageSize());
            CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment message = arena.allocate(largest);
                    for (int n = 0; n < messages; n++) {
                        MemorySegment m = message.asSlice(0, sizes[n]);
                        fill(m, n);
                        pair.client().send(m);
                    }
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            List<ReceivedMessage> held = new ArrayList<>();
            for (int n = 0; n < messages; n++) {
                ReceivedMessage m = pair.server().receive(TIMEOUT);
                if (m == null) {
                    sender.getNow(null);
                    fail("message " + n + " did not arrive within " + TIMEOUT);
                }
                assertEquals(n, m.sequence());
                check(m, n, sizes[n]);
                held.add(m);
                if (held.size() == options.receiveCredits() || random.nextInt(4) == 0) {
                    if (random.nextInt(10) == 0) {
                        Thread.sleep(20);
                    }
                    held.forEach(ReceivedMessage::release);
                    held.clear();
                }
            }
            held.forEach(ReceivedMessage::release);
            sender.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (pair.client().largeCopiesInFlight() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, pair.client().largeCopiesInFlight(), "every copy was freed by its DONE");
            assertNull(pair.server().tryReceive(), "nothing more than was sent arrived");
        }
    }

    /**
     * Zero-copy sends from a registered region, small (gathered behind a header) and large (READ by the peer from the
     * region itself), in order with copied ones; the region is pinned until the peer has the bytes, and a large one
     * needs REMOTE_READ.
     */
    @ParameterizedTest
    @EnumSource(ProgressMode.class)
    void zeroCopySendsArriveInOrderAndPinTheirRegionUntilThePeerHasTheBytes(ProgressMode mode) throws Exception {
        try (ChannelPair pair = ChannelPair.open(mode, MessagingOptions.builder().sendBuffers(4).build());
             Arena arena = Arena.ofConfined()) {
            MessageChannel client = pair.client();
            int size = 1 << 20;
            MemoryRegion region = client.connection().protectionDomain().allocateMemory(size,
                    Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
            MemoryRegion localOnly = client.connection().protectionDomain().allocateMemory(size,
                    Set.of(Access.LOCAL_WRITE));
            assertTrue(region.allows(Access.REMOTE_READ) && !localOnly.allows(Access.REMOTE_READ));

            fill(region.segment().asSlice(0, 1000), 0);
            client.send(region, 0, 1000);
            region.segment().asSlice(0, 1000).fill((byte) 0); // sent: the bytes may change
            MemorySegment copied = arena.allocate(3);
            fill(copied, 1);
            client.send(copied);
            client.send(region, 0, 0);
            fill(region.segment().asSlice(4096, 512 * 1024), 3);
            CompletableFuture<Void> large;
            // Hold the server channel's lock: its progress thread cannot READ the message before the close below.
            pair.server().lock.lock();
            try {
                large = client.sendAsync(region, 4096, 512 * 1024);
                IllegalStateException pinned = assertThrows(IllegalStateException.class, region::close,
                        "the peer has not READ the large message yet");
                assertTrue(pinned.getMessage().contains("zero-copy send in flight"), pinned.getMessage());
                assertFalse(large.isDone());
            } finally {
                pair.server().lock.unlock();
            }
            IllegalArgumentException noRemoteRead = assertThrows(IllegalArgumentException.class,
                    () -> client.send(localOnly, 0, 8192));
            assertTrue(noRemoteRead.getMessage().contains("REMOTE_READ"), noRemoteRead.getMessage());
            client.send(localOnly, 0, 100); // small: the device gathers it, no remote access needed
            assertThrows(IndexOutOfBoundsException.class, () -> client.send(region, size - 10, 11));

            MessageChannel server = pair.server();
            long[] lengths = {1000, 3, 0, 512 * 1024, 100};
            for (int n = 0; n < lengths.length; n++) {
                try (ReceivedMessage m = server.receive(TIMEOUT)) {
                    assertEquals(n, m.sequence());
                    if (n != 4) {
                        check(m, n, lengths[n]);
                    } else {
                        assertEquals(100, m.length());
                    }
                }
            }
            large.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(0, client.largeCopiesInFlight());
            region.close(); // unpinned once the peer said DONE
            localOnly.close();
        }
    }

    /**
     * A close right after the last send still delivers: it waits until the peer's device acknowledged every SEND and
     * the peer READ every large message, then disconnects; the peer receives all of them in order, then the end.
     */
    @Test
    void aCloseRightAfterTheLastSendDeliversEveryMessageBeforeItDisconnects() throws Exception {
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, MessagingOptions.defaults());
             Arena arena = Arena.ofConfined()) {
            int messages = MessagingOptions.defaults().receiveCredits() - 2; // all sent before the peer receives one
            long[] lengths = new long[messages];
            for (int n = 0; n < messages; n++) {
                lengths[n] = n % 4 == 0 ? 256 * 1024 + n : 100 + n; // every fourth by rendezvous
                MemorySegment m = arena.allocate(lengths[n]);
                fill(m, n);
                pair.client().send(m);
            }
            pair.client().close();
            for (int n = 0; n < messages; n++) {
                ReceivedMessage m = pair.server().receive(TIMEOUT);
                assertTrue(m != null, "message " + n + " arrived");
                check(m, n, lengths[n]);
                m.release();
            }
            ChannelException end = assertThrows(ChannelException.class, () -> pair.server().receive(TIMEOUT));
            assertEquals(ChannelException.Reason.PEER_DISCONNECTED, end.reason(), end.getMessage());
        }
    }

    @Test
    void closingFailsAWaitingReceiveAndThePeerLearnsOfIt() throws Exception {
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, MessagingOptions.defaults())) {
            CompletableFuture<Throwable> waiting = receiveInBackground(pair.client());
            CompletableFuture<Throwable> peerWaiting = receiveInBackground(pair.server());
            Thread.sleep(200);
            long start = System.nanoTime();
            pair.client().close();
            Throwable local = waiting.get(5, TimeUnit.SECONDS);
            assertTrue(local instanceof ChannelException c && c.reason() == ChannelException.Reason.CLOSED,
                    String.valueOf(local));
            Throwable remote = peerWaiting.get(10, TimeUnit.SECONDS);
            assertTrue(remote instanceof ChannelException c && c.reason() == ChannelException.Reason.PEER_DISCONNECTED,
                    String.valueOf(remote));
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos(), "the ends arrived within 5 s");
            ChannelException after = assertThrows(ChannelException.class,
                    () -> pair.client().send(MemorySegment.ofArray(new byte[1])));
            assertEquals(ChannelException.Reason.CLOSED, after.reason());
        }
    }

    /** A receive on another thread: what it threw, or null if a message came. */
    private static CompletableFuture<Throwable> receiveInBackground(MessageChannel channel) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                ReceivedMessage unexpected = channel.receive(TIMEOUT);
                if (unexpected != null) {
                    unexpected.release();
                }
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
    }

    @Test
    void misuseIsRefusedBeforeC() throws Exception {
        try (ChannelPair pair = ChannelPair.open(ProgressMode.EVENT_DRIVEN, MessagingOptions.defaults());
             Arena arena = Arena.ofConfined()) {
            MessageChannel client = pair.client();
            IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                    () -> client.send(arena.allocate(client.maxMessageSize() + 1L)));
            assertTrue(tooLong.getMessage().contains(String.valueOf(client.maxMessageSize())), tooLong.getMessage());
            client.send(arena.allocate(3));
            ReceivedMessage m = pair.server().receive(TIMEOUT);
            assertEquals(3, m.length());
            m.release();
            assertThrows(IllegalStateException.class, m::release);
            assertThrows(IllegalStateException.class, m::length);
            assertThrows(IllegalStateException.class, m::segment);
            m.close(); // a second close does nothing
        }
    }
}
