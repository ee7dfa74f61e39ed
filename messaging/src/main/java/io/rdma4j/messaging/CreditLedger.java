package io.rdma4j.messaging;

/**
 * The credit accounting of one channel (docs/messaging.md): what this side may send into the peer's receive queue,
 * what it owes the peer in grants and acknowledgements, and when a control message must carry them. Pure
 * bookkeeping, no I/O; counters are cumulative and compared modulo 2^32, as they travel in 32-bit header fields.
 * Not thread-safe: the channel calls it under its lock.
 */
final class CreditLedger {

    /** Data receives the peer posted for us at the start, and its control window. */
    private final int peerDataReceives;
    private final int peerControlWindow;
    /** Our own: data receives posted for the peer at the start, and our control window. */
    private final int dataReceives;
    private final int controlWindow;

    // Towards the peer.
    private int dataSent;
    private int peerGranted;
    private int controlsSent;
    private int peerProcessedOurControls;
    /** Number of our last ACK among our control messages; 0 for none. */
    private int ackNumber;

    // From the peer.
    private int posted;
    private int announced;
    private int controlsProcessed;
    private int controlsAnnounced;
    private int dataReceived;
    private boolean peerLow;

    /**
     * @param dataReceives      the data receives we post for the peer
     * @param controlWindow     our control window (we post it + 1 receives for control messages), at least 2
     * @param peerDataReceives  the peer's, from its handshake
     * @param peerControlWindow the peer's, from its handshake
     */
    CreditLedger(int dataReceives, int controlWindow, int peerDataReceives, int peerControlWindow) {
        if (controlWindow < 2 || peerControlWindow < 2 || dataReceives < 1 || peerDataReceives < 1) {
            throw new IllegalArgumentException("at least 1 data receive and a control window of 2 on each side, not "
                    + dataReceives + "/" + controlWindow + " and " + peerDataReceives + "/" + peerControlWindow);
        }
        this.dataReceives = dataReceives;
        this.controlWindow = controlWindow;
        this.peerDataReceives = peerDataReceives;
        this.peerControlWindow = peerControlWindow;
        this.peerGranted = peerDataReceives;
        this.posted = dataReceives;
        this.announced = dataReceives;
    }

    /** Data messages we may still send before the peer grants more. */
    int dataCredits() {
        return peerGranted - dataSent;
    }

    /** Counts a data message going out; its header carries {@link #granted()} and {@link #controls()}. */
    byte dataSent() {
        if (dataCredits() <= 0) {
            throw new IllegalStateException("no data credit: the peer has no receive posted for it");
        }
        dataSent++;
        announce();
        return dataCredits() == 0 ? Header.LOW : 0;
    }

    /** What the next header announces: our data receives posted for the peer, cumulative. */
    int granted() {
        return posted;
    }

    /** What the next header announces: the peer's control messages we processed, cumulative. */
    int controls() {
        return controlsProcessed;
    }

    /** Whether a CREDIT message is due now: new grants the peer needs, and room in its control window. */
    boolean creditDue() {
        int newGrants = posted - announced;
        return newGrants > 0 && (peerLow || newGrants >= Math.max(1, dataReceives / 2)) && windowOpen();
    }

    /** Whether an ACK is due now: the peer's control window is full of messages we processed, and ours is free. */
    boolean ackDue() {
        return controlsProcessed - controlsAnnounced >= controlWindow && !ackOutstanding();
    }

    /** Counts a CREDIT going out (the caller checked {@link #creditDue()}). */
    void creditSent() {
        windowedControlSent();
    }

    /** Counts a DONE going out (the caller checked {@link #windowOpen()}). */
    void doneSent() {
        windowedControlSent();
    }

    private void windowedControlSent() {
        if (!windowOpen()) {
            throw new IllegalStateException("the peer's control window is full");
        }
        controlsSent++;
        announce();
    }

    /** Counts an ACK going out (the caller checked {@link #ackDue()}). */
    void ackSent() {
        if (ackOutstanding()) {
            throw new IllegalStateException("an ACK is still outstanding");
        }
        controlsSent++;
        ackNumber = controlsSent;
        announce();
    }

    /**
     * Takes what a header from the peer says.
     *
     * @return whether it brought new data credits (a waiting sender may go on)
     */
    boolean headerReceived(byte type, byte flags, int granted, int controls) {
        boolean more = granted - peerGranted > 0;
        if (more) {
            peerGranted = granted;
        }
        if (controls - peerProcessedOurControls > 0) {
            if (controls - controlsSent > 0) {
                throw new ProtocolViolation("the peer acknowledges " + Integer.toUnsignedString(controls)
                        + " control messages, but " + Integer.toUnsignedString(controlsSent) + " were sent");
            }
            peerProcessedOurControls = controls;
        }
        if (peerGranted - dataSent > peerDataReceives) {
            throw new ProtocolViolation("the peer grants " + (peerGranted - dataSent) + " data credits, more than the "
                    + peerDataReceives + " receives it announced");
        }
        if (Header.isData(type)) {
            dataReceived++;
            if ((flags & Header.LOW) != 0) {
                peerLow = true;
            }
        }
        return more;
    }

    /**
     * Counts a data message that came without a header (the notice of a WRITE with immediate, whose 32 bits belong
     * to the application): it cannot say LOW, so the peer counts as low when it cannot have a credit left, i.e. when
     * every grant announced to it is used up.
     */
    void noticeReceived() {
        dataReceived++;
        if (announced - dataReceived <= 0) {
            peerLow = true;
        }
    }

    /** Counts a data receive re-posted for the peer (the application released a message). */
    void dataReceivePosted() {
        posted++;
    }

    /** Counts a control message of the peer processed (its receive re-posted). */
    void controlProcessed() {
        controlsProcessed++;
    }

    /** Whether a CREDIT or (later) DONE fits the peer's control window now. */
    boolean windowOpen() {
        int outstanding = controlsSent - peerProcessedOurControls - (ackOutstanding() ? 1 : 0);
        return outstanding < peerControlWindow;
    }

    private boolean ackOutstanding() {
        return ackNumber != 0 && ackNumber - peerProcessedOurControls > 0;
    }

    private void announce() {
        if (posted - announced > 0) {
            peerLow = false;
        }
        announced = posted;
        controlsAnnounced = controlsProcessed;
    }

    /** The receives this side posts when it starts: its data receives, its control window and the ACK slot. */
    static int receivesPosted(int dataReceives, int controlWindow) {
        return dataReceives + controlWindow + 1;
    }

    @Override
    public String toString() {
        return "credits " + dataCredits() + "/" + peerDataReceives + ", controls outstanding "
                + (controlsSent - peerProcessedOurControls) + "/" + peerControlWindow + ", grants owed "
                + (posted - announced) + ", acknowledgements owed " + (controlsProcessed - controlsAnnounced);
    }

    /** The peer broke the protocol: the channel cannot go on. */
    static final class ProtocolViolation extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ProtocolViolation(String message) {
            super(message);
        }
    }
}
