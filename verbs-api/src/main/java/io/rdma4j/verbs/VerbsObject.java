package io.rdma4j.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What every verbs object shares: its C pointer, its place in the object tree, and a close that is idempotent,
 * thread-safe and safe against concurrent use.
 *
 * <p>The pointer is held as a segment scoped to a shared {@link Arena} owned by this object. A downcall keeps the
 * scopes of its segment arguments alive while it runs, and closing a shared arena fails while any call holds it,
 * so {@link #close()} can never free the C object under a verb still running on another thread; once closed, any
 * use of the segment throws {@link IllegalStateException} instead of touching freed memory.
 *
 * <p>A child keeps its parent (a strong reference), and the parent keeps its live children, so closing a parent
 * first closes every live descendant, in the order libibverbs requires: QP, SRQ, CQ, completion channel,
 * MW/AH, MR (a bound window holds its region), PD, context ({@link #closeRank()}).
 */
abstract class VerbsObject implements AutoCloseable {

    private final VerbsObject parent;
    private final long address;
    private final long size;
    private final List<VerbsObject> children = new ArrayList<>();
    private volatile Arena arena;
    private volatile MemorySegment handle;
    private boolean closed;

    /**
     * Wraps a C object that was just created under {@code parent}. If the parent was closed meanwhile, the new C
     * object is destroyed again and {@link IllegalStateException} thrown.
     */
    VerbsObject(VerbsObject parent, MemorySegment pointer, long size) {
        this.parent = parent;
        this.address = pointer.address();
        this.size = size;
        this.arena = Arena.ofShared();
        this.handle = pointer.reinterpret(size, arena, null);
        if (parent != null && !parent.adopt(this)) {
            arena.close();
            destroy(MemorySegment.ofAddress(address));
            throw new IllegalStateException(parent.describe() + " was closed while " + describe() + " was created");
        }
    }

    /** The C pointer, sized to its struct; throws {@link IllegalStateException} once this object is closed. */
    final MemorySegment handle() {
        MemorySegment h = handle;
        if (!h.scope().isAlive()) {
            throw closedException();
        }
        return h;
    }

    /** Throws {@link IllegalStateException} if this object has been closed. */
    final void checkOpen() {
        handle();
    }

    /** Whether {@link #close()} has completed (or is under way). */
    public final synchronized boolean isClosed() {
        return closed;
    }

    /** The object this one was created from, or {@code null} for a context. */
    final VerbsObject parent() {
        return parent;
    }

    /** A short description for messages, e.g. {@code "ProtectionDomain@0x55d0c1a0"}. */
    String describe() {
        return getClass().getSimpleName() + "@0x" + Long.toHexString(address);
    }

    /** Position in the close order: lower ranks are closed first. */
    abstract int closeRank();

    /** The C destroy verb's name, for error messages. */
    abstract String destroyVerb();

    /** Work before the object's scope closes, while it is still usable (e.g. acknowledging CQ events). */
    void beforeDestroy() {
    }

    /** Work after the C object was destroyed (e.g. leaving a channel's registry). */
    void afterDestroy() {
    }

    /** Calls the C destroy verb on {@code pointer}; returns 0 or an errno value. */
    abstract int destroy(MemorySegment pointer);

    /**
     * Closes every live descendant, then destroys this object. Idempotent and thread-safe.
     *
     * @throws IllegalStateException if a verb on this object is running on another thread right now
     * @throws RdmaException         if the destroy verb fails (e.g. EBUSY: still used by an object elsewhere); the
     *                               object then stays open and usable
     */
    @Override
    public final void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            for (VerbsObject descendant : liveDescendants()) {
                descendant.close();
            }
            beforeDestroy();
            Arena a = arena;
            try {
                a.close();
            } catch (IllegalStateException inUse) {
                throw new IllegalStateException(describe() + " cannot be closed while a verb on it is running", inUse);
            }
            int rc = destroy(MemorySegment.ofAddress(address));
            if (rc != 0) {
                // Nothing was freed: give the object a new scope so that it stays usable, and report.
                Arena revived = Arena.ofShared();
                handle = MemorySegment.ofAddress(address).reinterpret(size, revived, null);
                arena = revived;
                throw RdmaException.of(destroyVerb(), rc, describe() + " is still in use");
            }
        } catch (RuntimeException failed) {
            synchronized (this) {
                closed = false;
            }
            throw failed;
        }
        afterDestroy();
        if (parent != null) {
            parent.release(this);
        }
    }

    /** The live descendant of type {@code type} whose C pointer is {@code address}, or {@code null}. */
    final <T extends VerbsObject> T findDescendant(long address, Class<T> type) {
        for (VerbsObject d : liveDescendants()) {
            if (d.address == address && type.isInstance(d)) {
                return type.cast(d);
            }
        }
        return null;
    }

    private synchronized boolean adopt(VerbsObject child) {
        if (closed) {
            return false;
        }
        children.add(child);
        return true;
    }

    private synchronized void release(VerbsObject child) {
        children.remove(child);
    }

    private List<VerbsObject> liveDescendants() {
        List<VerbsObject> all = new ArrayList<>();
        collectDescendants(all);
        all.sort(Comparator.comparingInt(VerbsObject::closeRank));
        return all;
    }

    private void collectDescendants(List<VerbsObject> into) {
        List<VerbsObject> snapshot;
        synchronized (this) {
            snapshot = List.copyOf(children);
        }
        for (VerbsObject child : snapshot) {
            into.add(child);
            child.collectDescendants(into);
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException(describe() + " is closed");
    }
}
