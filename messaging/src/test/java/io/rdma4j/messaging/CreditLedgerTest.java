package io.rdma4j.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayDeque;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The credit protocol between two ledgers over a simulated reliable connection: receive queues that must never be
 * found empty, applications that send at random and hold their messages for random times, and the control messages
 * each side's rules produce. Checks safety (no message without a posted receive), liveness (a sender with data
 * always gets credit once the peer's application releases) and quiescence (idle sides stop exchanging control
 * messages).
 */
class CreditLedgerTest {

    /** One message on the wire. */
    private record Message(byte type, byte flags, int granted, int controls) {
    }

    /** One side: its ledger, its receive queue's posted count, the messages its application holds. */
    private static final class Side {
        final String name;
        final CreditLedger ledger;
        int receivesPosted;
        int held;
        int delivered;
        int controlsSent;
        /** Large messages read (their READ is taken as done at once) whose DONE is not sent yet; DONEs received. */
        int pendingDones;
        int donesReceived;
        final ArrayDeque<Message> outbound = new ArrayDeque<>();
        final ArrayDeque<Message> completions = new ArrayDeque<>();

        Side(String name, int q, int k, int peerQ, int peerK) {
            this.name = name;
            this.ledger = new CreditLedger(q, k, peerQ, peerK);
            this.receivesPosted = CreditLedger.receivesPosted(q, k);
        }

        boolean sendData() {
            return sendData(Header.DATA);
        }

        /** A DATA or RENDEZVOUS message, if there is credit. */
        boolean sendData(byte type) {
            if (ledger.dataCredits() <= 0) {
                return false;
            }
            byte flags = ledger.dataSent();
            outbound.add(new Message(type, flags, ledger.granted(), ledger.controls()));
            return true;
        }

        /** What the progress thread does after any event: the control messages the rules call for. */
        void controls() {
            if (ledger.creditDue()) {
                ledger.creditSent();
                outbound.add(new Message(Header.CREDIT, (byte) 0, ledger.granted(), ledger.controls()));
                controlsSent++;
            }
            while (pendingDones > 0 && ledger.windowOpen()) {
                ledger.doneSent();
                outbound.add(new Message(Header.DONE, (byte) 0, ledger.granted(), ledger.controls()));
                controlsSent++;
                pendingDones--;
            }
            if (ledger.ackDue()) {
                ledger.ackSent();
                outbound.add(new Message(Header.ACK, (byte) 0, ledger.granted(), ledger.controls()));
                controlsSent++;
            }
        }

        /** A message lands in a posted receive; the progress thread polls it later ({@link #process}). */
        void arrive(Message m) {
            receivesPosted--;
            if (receivesPosted < 0) {
                fail(name + ": a " + Header.typeName(m.type()) + " found no receive posted (" + ledger + ")");
            }
            completions.add(m);
        }

        /** The progress thread polls the oldest completion. */
        void process() {
            Message m = completions.poll();
            ledger.headerReceived(m.type(), m.flags(), m.granted(), m.controls());
            if (Header.isData(m.type())) {
                held++;
                delivered++;
                if (m.type() == Header.RENDEZVOUS) {
                    pendingDones++;
                }
            } else {
                receivesPosted++;
                ledger.controlProcessed();
                if (m.type() == Header.DONE) {
                    donesReceived++;
                }
            }
            controls();
        }

        void release() {
            held--;
            receivesPosted++;
            ledger.dataReceivePosted();
            controls();
        }
    }

    @ParameterizedTest
    @CsvSource({"1, 2, 1, 2", "2, 2, 8, 3", "16, 4, 16, 4", "64, 4, 4, 2", "3, 7, 5, 2"})
    void randomTrafficNeverFindsAnEmptyReceiveQueueAndAlwaysGoesOn(int qa, int ka, int qb, int kb) {
        for (long seed = 0; seed < 200; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            Side a = new Side("A", qa, ka, qb, kb);
            Side b = new Side("B", qb, kb, qa, ka);
            int holdA = random.nextInt(qa + 1);
            int holdB = random.nextInt(qb + 1);
            for (int step = 0; step < 20_000; step++) {
                Side s = random.nextBoolean() ? a : b;
                Side peer = s == a ? b : a;
                int hold = s == a ? holdA : holdB;
                switch (random.nextInt(5)) {
                    case 0 -> s.sendData(random.nextBoolean() ? Header.DATA : Header.RENDEZVOUS);
                    case 1 -> {
                        if (s.held > hold) {
                            s.release();
                        }
                    }
                    case 2 -> {
                        if (!s.completions.isEmpty()) {
                            s.process();
                        }
                    }
                    default -> {
                        if (!s.outbound.isEmpty()) {
                            peer.arrive(s.outbound.poll());
                        }
                    }
                }
            }
            // Each side in turn sends until it runs dry; each message the peer's application releases then gives
            // it one more (grants wait for half the window only while the sender has credit).
            for (Side sender : new Side[] {a, b}) {
                Side receiver = sender == a ? b : a;
                quiesce(a, b);
                while (sender.sendData()) {
                    quiesce(a, b);
                }
                for (int held = receiver.held; held > 0; held--) {
                    receiver.release();
                    quiesce(a, b);
                    assertTrue(sender.sendData(), "seed " + seed + ": " + sender.name + " has credit once "
                            + receiver.name + " released a message: " + sender.ledger + " / " + receiver.ledger);
                    quiesce(a, b);
                }
            }
        }
    }

    @Test
    void aFastSenderAndASlowReceiverMoveEveryMessageWithFewControlMessages() {
        Side sender = new Side("sender", 32, 4, 32, 4);
        Side receiver = new Side("receiver", 32, 4, 32, 4);
        int messages = 100_000;
        int sent = 0;
        while (receiver.delivered < messages) {
            while (sent < messages && sender.sendData()) {
                sent++;
            }
            // The receiver reads slowly: one message per round, while many arrive.
            while (!sender.outbound.isEmpty()) {
                receiver.arrive(sender.outbound.poll());
                receiver.process();
            }
            if (receiver.held > 0) {
                receiver.release();
            }
            while (!receiver.outbound.isEmpty()) {
                sender.arrive(receiver.outbound.poll());
                sender.process();
            }
            if (sent < messages && sender.ledger.dataCredits() == 0 && receiver.held == 0
                    && receiver.outbound.isEmpty()) {
                fail("stuck at " + sent + ": " + sender.ledger + " / " + receiver.ledger);
            }
        }
        assertEquals(messages, receiver.delivered);
        // Grants travel in batches of half the window, or one by one only when the sender ran dry.
        assertTrue(receiver.controlsSent < messages, "control messages: " + receiver.controlsSent);
    }

    /**
     * A sender of large messages only: each RENDEZVOUS is answered by a DONE, a control message, and the sender
     * sends nothing but data, and at the end nothing at all. The receiver's DONEs fill its control window, so the
     * sender must acknowledge them with an ACK, or the last ones never leave.
     */
    @Test
    void doneMessagesToASenderThatSendsNothingElseAreAcknowledgedAndAllArrive() {
        Side sender = new Side("sender", 4, 2, 4, 2);
        Side receiver = new Side("receiver", 4, 2, 4, 2);
        int messages = 50;
        int sent = 0;
        while (sent < messages) {
            int before = sent;
            while (sent < messages && sender.sendData(Header.RENDEZVOUS)) {
                sent++;
            }
            if (sent == before) {
                fail("stuck at " + sent + ": " + sender.ledger + " / " + receiver.ledger);
            }
            quiesce(sender, receiver);
            while (receiver.held > 0) {
                receiver.release();
                quiesce(sender, receiver);
            }
        }
        quiesce(sender, receiver);
        assertEquals(messages, receiver.delivered);
        assertEquals(messages, sender.donesReceived, "every DONE arrived: " + sender.ledger + " / "
                + receiver.ledger);
        assertTrue(sender.controlsSent > 0, "the sender acknowledged DONEs with ACKs");
    }

    /**
     * A WRITE with immediate takes a data receive but carries no header, so it cannot flag LOW: the receiver must
     * see for itself that the sender spent every grant announced to it, or a sender stopped by its last notice waits
     * for half the credits to be released instead of one.
     */
    @Test
    void aSenderThatSpentItsLastCreditOnAWriteNoticeCountsAsLow() {
        CreditLedger receiver = new CreditLedger(8, 2, 8, 2);
        for (int i = 0; i < 7; i++) {
            receiver.noticeReceived();
        }
        receiver.dataReceivePosted();
        assertFalse(receiver.creditDue(), "the sender has a credit left: one grant waits for more");
        receiver.noticeReceived();
        assertTrue(receiver.creditDue(), "the sender has spent every credit: one grant is worth a CREDIT now");
    }

    @Test
    void aSenderOutOfCreditIsRefusedAndAnOverGrantIsAProtocolViolation() {
        CreditLedger ledger = new CreditLedger(2, 2, 1, 2);
        assertEquals(Header.LOW, ledger.dataSent());
        assertThrows(IllegalStateException.class, ledger::dataSent);
        assertThrows(CreditLedger.ProtocolViolation.class,
                () -> ledger.headerReceived(Header.CREDIT, (byte) 0, 3, 0));
        CreditLedger other = new CreditLedger(2, 2, 1, 2);
        assertThrows(CreditLedger.ProtocolViolation.class,
                () -> other.headerReceived(Header.CREDIT, (byte) 0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new CreditLedger(1, 1, 1, 2));
    }

    /** Delivers until neither side has anything in flight; bounded, or it is a livelock. */
    private static void quiesce(Side a, Side b) {
        for (int i = 0; i < 1_000_000; i++) {
            if (a.outbound.isEmpty() && b.outbound.isEmpty() && a.completions.isEmpty() && b.completions.isEmpty()) {
                return;
            }
            if (!a.outbound.isEmpty()) {
                b.arrive(a.outbound.poll());
            }
            if (!b.outbound.isEmpty()) {
                a.arrive(b.outbound.poll());
            }
            if (!a.completions.isEmpty()) {
                a.process();
            }
            if (!b.completions.isEmpty()) {
                b.process();
            }
        }
        fail("control messages never stop: " + a.ledger + " / " + b.ledger);
    }
}
