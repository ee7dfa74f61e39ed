package io.rdma4j.verbs.internal;

import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.verbs.RdmaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The native side of every rdma4j object, in every module (verbs objects, connection-manager ids and channels): its
 * C pointer, its place in the tree of C objects, and how to destroy it. Kept apart from the Java object, which it
 * never references strongly, so that it can serve as the {@link java.lang.ref.Cleaner} action of a forgotten
 * object: when the Java object becomes unreachable without having been closed, {@link #run()} logs a warning and
 * destroys the C object and everything under it.
 *
 * <p>The rules: a child is created under an open parent and closes before it; closing closes every live
 * descendant first, lowest rank first; close is idempotent and thread-safe; an object that others use
 * ({@link #uses}) refuses to close until they are closed. An object can also close with a second owner
 * ({@link #closesWith}): a queue pair that librdmacm made for an id closes before that id, and before its
 * protection domain.
 *
 * <p>A post names objects that are not its arguments (the regions, address handles and windows of a batch's
 * requests); it {@link #pin}s them for the length of the call, and a close refuses while an object is pinned, so
 * the provider never reads a region or handle that is being freed.
 *
 * <p>The pointer is held as a segment scoped to a shared {@link Arena}. A downcall keeps the scopes of its segment
 * arguments alive while it runs, and closing a shared arena fails while a call holds it, so {@link #close} can
 * never free the C object under a verb running on another thread; after it, any use of the segment throws
 * {@link IllegalStateException} instead of touching freed memory. Closing a shared arena costs a handshake with
 * every thread of the JVM (about 25 µs on a host, a millisecond under emulation): objects that no verb but their
 * destroy is ever given ({@linkplain #unguarded a memory region}: requests name it by key and {@link #pin} it when
 * the provider reads it) hold their pointer in the global scope instead and close without it.
 */
public final class NativeResource implements Runnable {

    /** Calls a C destroy verb; returns 0 or an errno value. Must not capture the Java object. */
    @FunctionalInterface
    public interface Destroyer {
        int destroy(MemorySegment pointer);
    }

    private static final Logger LOG = LoggerFactory.getLogger(NativeResource.class);
    /** {@code -Drdma4j.leakTracking=true} records where each object was created, for leak warnings. */
    private static final boolean TRACK_CREATION = Boolean.getBoolean("rdma4j.leakTracking");

    private volatile NativeResource parent;
    /** Further owners that this object closes before, besides its parent (see {@link #closesWith}). */
    private final List<NativeResource> owners = new ArrayList<>();
    private final long address;
    private final long size;
    private final int rank;
    private final String kind;
    private final String destroyVerb;
    private final Destroyer destroyer;
    private final Throwable createdAt;
    private final List<NativeResource> children = new ArrayList<>();
    /** Objects that use this one without being its children (a QP uses its CQs and SRQ); guarded by this. */
    private final List<NativeResource> users = new ArrayList<>();
    /** What this object uses; it leaves their {@link #users} when destroyed. */
    private final List<NativeResource> used = new ArrayList<>();
    private volatile WeakReference<Object> owner = new WeakReference<>(null);
    /** Run once the C object is destroyed, however it was closed (by its owner, its parent or the Cleaner). */
    private final List<Runnable> afterClose = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The scope of {@link #handle}, or null for an {@link #unguarded} object. */
    private final Arena arena;
    private final MemorySegment handle;
    private boolean closed;
    /** Whether a thread is inside {@link #close} for this object; guarded by this. */
    private boolean closeInProgress;
    /** Calls in progress that name this object without passing it (see {@link #pin}). */
    private volatile int pins;
    /** Set before a close checks {@link #pins}, and kept once closed; a pin that sees it backs off. */
    private volatile boolean closing;
    private static final VarHandle PINS;

    static {
        try {
            PINS = MethodHandles.lookup().findVarHandle(NativeResource.class, "pins", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Takes over a C object just created under {@code parent}. If the parent was closed meanwhile, destroys the
     * new C object again and throws {@link IllegalStateException}.
     */
    public NativeResource(NativeResource parent, MemorySegment pointer, long size, int rank, String kind,
                          String destroyVerb, Destroyer destroyer) {
        this(parent, pointer, size, rank, kind, destroyVerb, destroyer, Arena.ofShared());
    }

    /**
     * As the constructor, for a C object that is passed to no verb but its destroy verb, whose pointer is then held
     * in the global scope (no shared arena to close): a memory region, which work requests name by its keys.
     */
    public static NativeResource unguarded(NativeResource parent, MemorySegment pointer, long size, int rank,
                                           String kind, String destroyVerb, Destroyer destroyer) {
        return new NativeResource(parent, pointer, size, rank, kind, destroyVerb, destroyer, null);
    }

    private NativeResource(NativeResource parent, MemorySegment pointer, long size, int rank, String kind,
                           String destroyVerb, Destroyer destroyer, Arena arena) {
        this.parent = parent;
        this.address = pointer.address();
        this.size = size;
        this.rank = rank;
        this.kind = kind;
        this.destroyVerb = destroyVerb;
        this.destroyer = destroyer;
        this.createdAt = TRACK_CREATION ? new Throwable(kind + " created here") : null;
        this.arena = arena;
        this.handle = arena == null ? Pointers.at(address, size) : Pointers.sized(pointer, size, arena);
        if (parent != null && !parent.adopt(this)) {
            if (arena != null) {
                arena.close();
            }
            destroyer.destroy(MemorySegment.ofAddress(address));
            throw new IllegalStateException(parent.kind + " was closed while a " + kind + " was created under it");
        }
    }

    /** Links the Java object, weakly, for {@link #findDescendant}. */
    public void owner(Object object) {
        owner = new WeakReference<>(object);
    }

    /**
     * Registers this resource as {@code owner}'s Cleaner action (closing the C object if the program drops
     * {@code owner} unclosed), and unregisters it once the object is closed, however: a registration left for a
     * collection to find would carry every closed object into the old generation (seen as growing garbage-collection
     * pauses in a register+close loop).
     */
    public void cleanedBy(Cleaner cleaner, Object owner) {
        Cleaner.Cleanable cleanable = cleaner.register(owner, this);
        afterClose.add(cleanable::clean);
    }

    /**
     * Runs {@code action} once the C object has been destroyed, however it is closed: e.g. waking the threads that
     * wait for its file descriptor. Must not capture the Java object, or the Cleaner could never run.
     */
    public void afterClose(Runnable action) {
        afterClose.add(action);
    }

    /** Records that this object uses {@code other}, which then refuses to close while this one lives. */
    public void uses(NativeResource other) {
        synchronized (other) {
            other.users.add(this);
        }
        synchronized (this) {
            used.add(other);
        }
    }

    /**
     * Marks the object as named by a call in progress (a post whose requests name this region), so that a close on
     * another thread refuses instead of freeing what the call reads. Allocates nothing; pair every {@code true}
     * with {@link #unpin()}.
     *
     * @return false if the object is closed or being closed (then nothing is pinned)
     */
    public boolean pin() {
        PINS.getAndAdd(this, 1);
        // The close sets closing, then reads pins; this adds to pins, then reads closing: one of the two sees the other.
        if (closing) {
            PINS.getAndAdd(this, -1);
            return false;
        }
        return true;
    }

    /**
     * Whether the object is open and no close has begun, without pinning it: one volatile read, for callers that
     * need only to refuse an object closed before (a close may begin right after).
     */
    public boolean isUsable() {
        return !closing;
    }

    /** Ends a {@link #pin()}. */
    public void unpin() {
        PINS.getAndAdd(this, -1);
    }

    /**
     * The C pointer, whose scope is dead once the object is closed; an {@link #unguarded} object's is global, and
     * asking for it once a close has begun throws as a dead scope would.
     *
     * @throws IllegalStateException if the object is unguarded and closed or being closed
     */
    public MemorySegment handle() {
        if (arena == null && closing) {
            throw new IllegalStateException(kind + "@0x" + Long.toHexString(address) + " is closed");
        }
        return handle;
    }

    public long address() {
        return address;
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Closes every live descendant in rank order, then destroys this C object. Idempotent and thread-safe.
     *
     * @throws IllegalStateException if a verb on the object is running on another thread right now
     * @throws RdmaException         if the destroy verb fails; the object is then closed all the same and its C
     *                               object abandoned (a provider may have freed part of it before refusing)
     */
    public void close(String description) {
        synchronized (this) {
            // A close under way on another thread (the PD's own, while its context closes it as a descendant) is
            // waited for: returning early would let the parent be destroyed while this one still is.
            awaitCloseInProgress();
            if (closed) {
                return;
            }
            if (!users.isEmpty()) {
                throw new IllegalStateException(description + " is still used by " + users.stream()
                        .map(u -> u.kind + "@0x" + Long.toHexString(u.address)).distinct().toList()
                        + ": close them first (closing their protection domain or context closes everything in order)");
            }
            closed = true;
            closeInProgress = true;
        }
        try {
            destroy(description);
        } finally {
            synchronized (this) {
                closeInProgress = false;
                notifyAll();
            }
        }
    }

    /** Waits, without giving up on interrupts (it keeps the flag), until no close of this object is under way. */
    private void awaitCloseInProgress() {
        boolean interrupted = false;
        while (closeInProgress) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The body of {@link #close}: descendants, the C object, then the links to other objects. */
    private void destroy(String description) {
        int destroyRc;
        try {
            for (NativeResource descendant : liveDescendants()) {
                descendant.close(descendant.kind);
            }
            closing = true;
            if (pins != 0) {
                throw new IllegalStateException(description + " cannot be closed while a call naming it runs (a post"
                        + " whose requests name it, or an extended poll between start and end)");
            }
            try {
                if (arena != null) {
                    arena.close();
                }
            } catch (IllegalStateException inUse) {
                throw new IllegalStateException(description + " cannot be closed while a verb on it is running", inUse);
            }
            destroyRc = destroyer == null ? 0 : destroyer.destroy(MemorySegment.ofAddress(address));
        } catch (RuntimeException failed) {
            closing = false;
            synchronized (this) {
                closed = false;
            }
            throw failed;
        }
        // Leave the users of what this used first: a parent's close running on another thread may no longer see
        // this object among its descendants once it is released below, and must then find its CQs free.
        List<NativeResource> usedNow;
        synchronized (this) {
            usedNow = List.copyOf(used);
            used.clear();
        }
        for (NativeResource other : usedNow) {
            synchronized (other) {
                other.users.remove(this);
            }
        }
        NativeResource parentNow = parent;
        if (parentNow != null) {
            parentNow.release(this);
        }
        List<NativeResource> ownersNow;
        synchronized (this) {
            ownersNow = List.copyOf(owners);
            owners.clear();
        }
        for (NativeResource other : ownersNow) {
            other.release(this);
        }
        afterClose.forEach(Runnable::run);
        if (destroyRc != 0) {
            // The object stays closed and its C object is left alone: providers may free part of it before the
            // kernel refuses (libsiw unmaps a CQ's and a QP's queues first), so touching it again could crash.
            LOG.warn("{} failed: {} is abandoned (errno {})", destroyVerb, description, destroyRc);
            throw RdmaException.of(destroyVerb, destroyRc, description + " is abandoned: the C library refused to"
                    + " destroy it, and after a refusal it is not safe to use");
        }
    }

    /** The Cleaner action: the Java object was collected; close the C object if the program forgot to. */
    @Override
    public void run() {
        if (isClosed()) {
            return;
        }
        String name = kind + "@0x" + Long.toHexString(address);
        if (createdAt == null) {
            LOG.warn("{} was never closed; closing it now (run with -Drdma4j.leakTracking=true to see where it was"
                    + " created)", name);
        } else {
            LOG.warn("{} was never closed; closing it now", name, createdAt);
        }
        try {
            close(name);
        } catch (RuntimeException e) {
            LOG.warn("{} could not be closed", name, e);
        }
    }

    /** The live Java object of type {@code type} below this one whose C pointer is {@code address}, or null. */
    public <T> T findDescendant(long address, Class<T> type) {
        for (NativeResource d : liveDescendants()) {
            Object object = d.owner.get();
            if (d.address == address && type.isInstance(object)) {
                return type.cast(object);
            }
        }
        return null;
    }

    /**
     * Makes this object close before {@code owner} too, not only before its parent: closing {@code owner} closes
     * this object first.
     *
     * @throws IllegalStateException if {@code owner} is closed
     */
    public void closesWith(NativeResource owner) {
        if (!owner.adopt(this)) {
            throw new IllegalStateException(owner.kind + " is closed");
        }
        synchronized (this) {
            owners.add(owner);
        }
    }

    /**
     * Moves this object under {@code newParent} (librdmacm's {@code rdma_migrate_id} moves an id to another event
     * channel).
     *
     * @throws IllegalStateException if {@code newParent} is closed
     */
    public void moveTo(NativeResource newParent) {
        if (!newParent.adopt(this)) {
            throw new IllegalStateException(newParent.kind + " is closed");
        }
        NativeResource old = parent;
        parent = newParent;
        if (old != null) {
            old.release(this);
        }
    }

    private synchronized boolean adopt(NativeResource child) {
        if (closed) {
            return false;
        }
        children.add(child);
        return true;
    }

    private synchronized void release(NativeResource child) {
        children.remove(child);
    }

    private List<NativeResource> liveDescendants() {
        List<NativeResource> all = new ArrayList<>();
        collectDescendants(all);
        all.sort(Comparator.comparingInt(r -> r.rank));
        return all;
    }

    private void collectDescendants(List<NativeResource> into) {
        List<NativeResource> snapshot;
        synchronized (this) {
            snapshot = List.copyOf(children);
        }
        for (NativeResource child : snapshot) {
            into.add(child);
            child.collectDescendants(into);
        }
    }
}
