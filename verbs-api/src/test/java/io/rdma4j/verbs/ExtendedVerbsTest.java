package io.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The extended verbs: work requests built with ibv_wr_*, completions read with ibv_start_poll and ibv_wc_read_*. */
@Tag("device")
class ExtendedVerbsTest {

    private static final Set<CompletionField> FIELDS =
            EnumSet.of(CompletionField.BYTE_LENGTH, CompletionField.IMMEDIATE_DATA, CompletionField.QUEUE_PAIR_NUMBER);

    @Test
    void workRequestsBuiltInPlaceAndCompletionsReadFieldByField() {
        try (Context context = TestDevice.open()) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            CompletionQueue clientCq = supported(() -> context.createExtendedCompletionQueue(16, null, FIELDS));
            CompletionQueue serverCq = context.createExtendedCompletionQueue(16, null, FIELDS);
            QueuePair client = supported(() -> pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(clientCq)
                    .extendedOperations(EnumSet.of(ExtendedOperation.SEND_WITH_IMMEDIATE, ExtendedOperation.RDMA_WRITE))
                    .create());
            QueuePair server = pd.queuePair(QueuePairType.RELIABLE_CONNECTED).completionQueue(serverCq).create();
            IwarpConnector connector = ConnectedPair.connect(context, client, server, a -> a);
            try (MemoryRegion memory = pd.allocateMemory(8192, ConnectedPair.REMOTE_ACCESS);
                 ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1)) {
                receives.clear().add(70).scatter(memory, 4096, 128);
                server.postReceive(receives);
                DataPathTest.write(memory, 0, "built in place");

                ExtendedSend send = client.extendedSend();
                send.start();
                send.next(1, true).rdmaWrite(memory.rkey(), memory.address() + 2048).gather(memory, 0, 15);
                send.next(2, true).sendWithImmediate(99).gather(memory, 0, 15);
                send.complete();

                ExtendedPoll clientPoll = clientCq.extendedPoll();
                assertEquals(java.util.List.of(1L, 2L), drain(clientPoll, 2));
                ExtendedPoll serverPoll = serverCq.extendedPoll();
                awaitStart(serverPoll);
                try {
                    assertEquals(70, serverPoll.workRequestId());
                    assertEquals(WorkCompletionStatus.SUCCESS, serverPoll.status());
                    assertEquals(WorkCompletionOpcode.RECEIVE, serverPoll.opcode());
                    assertEquals(15, serverPoll.byteLength());
                    assertEquals(99, serverPoll.immediateData());
                    assertEquals(server.number(), serverPoll.queuePairNumber());
                    assertThrows(IllegalStateException.class, serverPoll::sourceQueuePair, "a field not chosen");
                    assertThrows(IllegalStateException.class, serverPoll::start, "one poll at a time");
                    assertFalse(serverPoll.next());
                } finally {
                    serverPoll.end();
                }
                assertThrows(IllegalStateException.class, serverPoll::end, "no poll under way");
                assertEquals("built in place", DataPathTest.read(memory, 2048));
                assertEquals("built in place", DataPathTest.read(memory, 4096));

                // Inline data only from native memory the JVM holds open for the copy: misuse is an exception.
                java.lang.foreign.MemorySegment freed;
                try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
                    freed = arena.allocate(8);
                }
                send.start();
                IllegalStateException notEnabled = assertThrows(IllegalStateException.class, () -> send.send(),
                        "plain SEND was not among the queue pair's operations");
                assertTrue(notEnabled.getMessage().startsWith("ibv_wr_send: ") && notEnabled.getMessage()
                        .contains("ExtendedOperation.SEND "), notEnabled.getMessage());
                send.next(3, true).sendWithImmediate(7);
                assertThrows(IllegalArgumentException.class,
                        () -> send.inline(java.lang.foreign.MemorySegment.ofArray(new byte[8])), "a heap segment");
                assertThrows(IllegalStateException.class, () -> send.inline(freed), "a closed arena");
                send.abort();
                client.close();
                assertThrows(IllegalStateException.class, send::start, "the queue pair is closed");
                assertThrows(IllegalStateException.class, () -> send.next(3, true));
                server.close();
                serverCq.close();
                assertThrows(IllegalStateException.class, serverPoll::start, "the queue is closed");
            } finally {
                if (connector != null) {
                    connector.close();
                }
            }
        }
    }

    @Test
    void aPlainQueueHasNoExtendedApi() {
        try (Context context = TestDevice.open()) {
            CompletionQueue cq = context.createCompletionQueue(4);
            assertThrows(IllegalStateException.class, cq::extendedPoll);
            QueuePair qp = context.allocateProtectionDomain().queuePair(QueuePairType.RELIABLE_CONNECTED)
                    .completionQueue(cq).create();
            assertThrows(IllegalStateException.class, qp::extendedSend);
        }
    }

    @Test
    void resizingACompletionQueueKeepsItUsable() {
        try (Context context = TestDevice.open(); CompletionQueue cq = context.createCompletionQueue(8)) {
            try {
                cq.resize(64);
            } catch (UnsupportedVerbException e) {
                abort("the provider cannot resize completion queues: " + e.getMessage());
            }
            assertTrue(cq.capacity() >= 64, "capacity " + cq.capacity());
            try (WorkCompletions completions = new WorkCompletions(4)) {
                assertEquals(0, cq.poll(completions));
            }
        }
    }

    @Test
    void unreliableConnectedQueuePairsCarrySendsAndWrites() {
        try (Context context = TestDevice.open()) {
            if (context.device().transport() == Transport.IWARP) {
                abort("iWARP has only reliable connections: no UC");
            }
            try (ConnectedPair pair = ConnectedPair.unreliable(context);
                 MemoryRegion memory = pair.pd.allocateMemory(4096, ConnectedPair.REMOTE_ACCESS);
                 SendWorkRequests sends = new SendWorkRequests(2, 1);
                 ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
                 WorkCompletions completions = new WorkCompletions(1)) {
                receives.clear().add(8).scatter(memory, 1024, 64);
                pair.server.postReceive(receives);
                DataPathTest.write(memory, 0, "unreliable");
                sends.clear().rdmaWrite(1, memory.address() + 2048, memory.rkey()).gather(memory, 0, 11)
                        .send(2).gather(memory, 0, 11).signaled();
                pair.client.postSend(sends);
                ConnectedPair.await(pair.serverCq, completions, 1);
                assertTrue(completions.isSuccess(0), completions.statusText(0));
                assertEquals("unreliable", DataPathTest.read(memory, 1024));
                assertEquals("unreliable", DataPathTest.read(memory, 2048));
            }
        }
    }

    private static java.util.List<Long> drain(ExtendedPoll poll, int expected) {
        java.util.List<Long> ids = new java.util.ArrayList<>();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (ids.size() < expected) {
            if (poll.start()) {
                try {
                    do {
                        assertEquals(WorkCompletionStatus.SUCCESS, poll.status());
                        ids.add(poll.workRequestId());
                    } while (poll.next());
                } finally {
                    poll.end();
                }
            } else if (System.nanoTime() > deadline) {
                fail("only " + ids + " completed within 10 s");
            }
        }
        return ids;
    }

    private static void awaitStart(ExtendedPoll poll) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!poll.start()) {
            if (System.nanoTime() > deadline) {
                fail("no completion within 10 s");
            }
        }
    }

    private static <T> T supported(java.util.function.Supplier<T> create) {
        try {
            return create.get();
        } catch (UnsupportedVerbException e) {
            return abort("the provider lacks the extended verbs: " + e.getMessage());
        }
    }
}
