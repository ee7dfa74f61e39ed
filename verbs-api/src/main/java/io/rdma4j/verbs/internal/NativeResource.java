package io.rdma4j.verbs.internal;

import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.verbs.RdmaException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
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
 * <p>Every call that gives the C object to C, or reads its struct, {@linkplain #pinned pins} it for the length of
 * the call; so does a post for the objects its requests name (regions, address handles, windows). A close refuses
 * while the object is pinned, so C never runs on an object that is being freed, and once a close has begun a pin
 * fails with {@link IllegalStateException} instead of touching freed memory. A pin is two atomic additions and
 * allocates nothing. (The pointer is a segment of the global scope: the first design scoped it to a shared
 * {@link java.lang.foreign.Arena}, whose close is a handshake with every thread of the JVM — ~40 µs per object on
 * a host, milliseconds under emulation — which made creating and closing queue pairs 20 times slower than in C.)
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
    // The lists and sets below are made when first needed, guarded by this: most objects (regions, queue pairs) never
    // need most of them, and creating and closing such objects is a rate that applications measure.
    /** Further owners that this object closes before, besides its parent (see {@link #closesWith}). */
    private List<NativeResource> owners;
    private final long address;
    private final int rank;
    private final String kind;
    private final String destroyVerb;
    private final Destroyer destroyer;
    private final Throwable createdAt;
    /** The open children; a set, because a PD may hold many thousands of regions, each leaving it when closed. */
    private Set<NativeResource> children;
    /** Objects that use this one without being its children (a QP uses its CQs and SRQ). */
    private List<NativeResource> users;
    /** What this object uses; it leaves their {@link #users} when destroyed. */
    private List<NativeResource> used;
    /**
     * The map of its parent's Java object that keeps this object's Java object reachable, held weakly (a strong path
     * from a Cleaner action to a Java object would keep it from ever being reclaimed); left once destroyed.
     */
    private volatile WeakReference<? extends Map<NativeResource, ?>> keptIn;
    /** Run once the C object is destroyed, however it was closed (by its owner, its parent or the Cleaner). */
    private List<Runnable> afterClose;
    /** The registration with the Cleaner, unregistered once the C object is destroyed. */
    private volatile Cleaner.Cleanable cleanable;
    /** The pointer, sized to its struct, in the global scope: only ever given out {@linkplain #pinned pinned}. */
    private final MemorySegment handle;
    private boolean closed;
    /** Whether a thread is inside {@link #close} for this object; guarded by this. */
    private boolean closeInProgress;
    /**
     * Whether a thread waits for that close; guarded by this. Notified only then: {@code notifyAll} inflates the
     * object's monitor, which cost every close of a region ~5% of a register + close (host, JMH's stack profiler).
     */
    private boolean closeAwaited;
    /** Calls in progress on this object or naming it (see {@link #pin}). */
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
        this.parent = parent;
        this.address = pointer.address();
        this.rank = rank;
        this.kind = kind;
        this.destroyVerb = destroyVerb;
        this.destroyer = destroyer;
        this.createdAt = TRACK_CREATION ? new Throwable(kind + " created here") : null;
        this.handle = Pointers.at(address, size);
        if (parent != null && !parent.adopt(this)) {
            destroyer.destroy(handle);
            throw new IllegalStateException(parent.kind + " was closed while a " + kind + " was created under it");
        }
    }

    /**
     * Records that {@code map} (its parent's Java object's) holds this object's Java object under this resource, and
     * takes it out of the map once the C object is destroyed, however it is closed. One weak reference per map, not
     * per object: creating and closing regions and queue pairs is a rate that applications measure.
     */
    public void keptIn(WeakReference<? extends Map<NativeResource, ?>> map) {
        keptIn = map;
        // Closed with its parent before the map was known? A close sets closing before it leaves the map, so one that
        // this read misses finds the map itself; closing alone may be a close that failed, hence isClosed (a lock).
        if (closing && isClosed()) {
            leaveMap();
        }
    }

    private void leaveMap() {
        WeakReference<? extends Map<NativeResource, ?>> ref = keptIn;
        Map<NativeResource, ?> map = ref == null ? null : ref.get();
        if (map != null) {
            map.remove(this);
        }
    }

    /**
     * Registers this resource as {@code owner}'s Cleaner action (closing the C object if the program drops
     * {@code owner} unclosed), and unregisters it once the object is closed, however: a registration left for a
     * collection to find would carry every closed object into the old generation (seen as growing garbage-collection
     * pauses in a register+close loop).
     */
    public void cleanedBy(Cleaner cleaner, Object owner) {
        cleanable = cleaner.register(owner, this);
    }

    /**
     * Runs {@code action} once the C object has been destroyed, however it is closed: e.g. waking the threads that
     * wait for its file descriptor. Must not capture the Java object, or the Cleaner could never run.
     */
    public synchronized void afterClose(Runnable action) {
        if (afterClose == null) {
            afterClose = new ArrayList<>(2);
        }
        afterClose.add(action);
    }

    /**
     * Records that this object uses {@code others} (nulls and repeats skipped: a QP's two CQs are often one), which
     * then refuse to close while this one lives.
     */
    public void uses(NativeResource... others) {
        List<NativeResource> distinct = new ArrayList<>(others.length);
        for (NativeResource other : others) {
            if (other != null && !distinct.contains(other)) {
                synchronized (other) {
                    other.users = added(other.users, this);
                }
                distinct.add(other);
            }
        }
        synchronized (this) {
            if (used == null) {
                used = distinct;
            } else {
                used.addAll(distinct);
            }
        }
    }

    /** {@code list} with {@code item} added, made if it is null. */
    private static <T> List<T> added(List<T> list, T item) {
        List<T> to = list == null ? new ArrayList<>(2) : list;
        to.add(item);
        return to;
    }

    /**
     * Marks the object as used by a call in progress (a verb on it, or a post whose requests name it), so that a
     * close on another thread refuses instead of freeing what the call reads. Allocates nothing; pair every
     * {@code true} with {@link #unpin()}.
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
     * {@linkplain #pin Pins} the object for one call and returns its pointer, sized to its struct; pair with
     * {@link #unpin()} in a {@code finally}. Allocates nothing.
     *
     * @throws IllegalStateException if the object is closed or being closed
     */
    public MemorySegment pinned() {
        if (!pin()) {
            throw closedException();
        }
        return handle;
    }

    /** As {@link #pinned()}, but returns null, pinning nothing, if the object is closed or being closed. */
    public MemorySegment pinnedOrNull() {
        return pin() ? handle : null;
    }

    /** Runs {@code call} with the object {@linkplain #pinned pinned} (off the data path: the lambda may allocate). */
    public <T> T withPinned(Function<MemorySegment, T> call) {
        MemorySegment pointer = pinned();
        try {
            return call.apply(pointer);
        } finally {
            unpin();
        }
    }

    /**
     * The address, for a caller that only records it (a work request naming a region, an id's lookup key).
     *
     * @throws IllegalStateException if the object is closed or being closed
     */
    public long openAddress() {
        if (closing) {
            throw closedException();
        }
        return address;
    }

    /**
     * The C address's hash: sets and maps of resources (a domain's children) hash them on every create and close, and
     * the identity hash, made on first use, was ~8% of a register + close. Equality stays identity.
     */
    @Override
    public int hashCode() {
        return Long.hashCode(address);
    }

    /** The kind and address, e.g. {@code MemoryRegion@0x55d0c1a0}, for messages. */
    private String name() {
        return kind + "@0x" + Long.toHexString(address);
    }

    private IllegalStateException closedException() {
        return new IllegalStateException(name() + " is closed");
    }

    /**
     * Whether the object is open and no close has begun, without pinning it: one volatile read, for callers that
     * need only to refuse an object closed before (a close may begin right after).
     */
    public boolean isUsable() {
        return !closing;
    }

    /**
     * Whether a call pins it right now (or a confined poster or poller holds it): for an owner that must refuse a
     * close before it starts a teardown that the pin would stop halfway.
     */
    public boolean isPinned() {
        return pins != 0;
    }

    /** Ends a {@link #pin()}. */
    public void unpin() {
        PINS.getAndAdd(this, -1);
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
     * @throws IllegalStateException if the object is {@linkplain #pin pinned} (a call on it or naming it runs)
     * @throws RdmaException         if the destroy verb fails; the object is then closed all the same and its C
     *                               object abandoned (a provider may have freed part of it before refusing)
     */
    public void close(Supplier<String> description) {
        boolean parentOfSome;
        synchronized (this) {
            // A close under way on another thread (the PD's own, while its context closes it as a descendant) is
            // waited for: returning early would let the parent be destroyed while this one still is.
            awaitCloseInProgress();
            if (closed) {
                return;
            }
            if (users != null && !users.isEmpty()) {
                throw new IllegalStateException(description.get() + " is still used by " + users.stream()
                        .map(NativeResource::name).distinct().toList()
                        + ": close them first (closing their protection domain or context closes everything in order)");
            }
            closed = true;
            closeInProgress = true;
            // No child is adopted once closed is set, so a leaf (a region, a queue pair) skips the walk and its lock.
            parentOfSome = children != null && !children.isEmpty();
        }
        try {
            destroy(description, parentOfSome);
        } finally {
            synchronized (this) {
                closeInProgress = false;
                if (closeAwaited) {
                    closeAwaited = false;
                    notifyAll();
                }
            }
        }
    }

    /** Waits, without giving up on interrupts (it keeps the flag), until no close of this object is under way. */
    private void awaitCloseInProgress() {
        boolean interrupted = false;
        while (closeInProgress) {
            try {
                closeAwaited = true;
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
    private void destroy(Supplier<String> description, boolean parentOfSome) {
        int destroyRc;
        try {
            if (parentOfSome) {
                for (NativeResource descendant : liveDescendants()) {
                    descendant.close(descendant::name);
                }
            }
            closing = true;
            if (pins != 0) {
                throw new IllegalStateException(description.get() + " cannot be closed while a call on it or naming"
                        + " it runs (a verb on another thread, a post whose requests name it, an extended poll or"
                        + " send between start and end, or an open confined poster or poller)");
            }
            destroyRc = destroyer == null ? 0 : destroyer.destroy(handle);
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
        List<NativeResource> ownersNow;
        List<Runnable> actions;
        synchronized (this) {
            usedNow = used;
            ownersNow = owners;
            actions = afterClose;
            used = null;
            owners = null;
            afterClose = null;
        }
        if (usedNow != null) {
            for (NativeResource other : usedNow) {
                synchronized (other) {
                    other.users.remove(this);
                }
            }
        }
        NativeResource parentNow = parent;
        if (parentNow != null) {
            parentNow.release(this);
        }
        if (ownersNow != null) {
            for (NativeResource other : ownersNow) {
                other.release(this);
            }
        }
        leaveMap();
        if (actions != null) {
            actions.forEach(Runnable::run);
        }
        Cleaner.Cleanable registration = cleanable;
        if (registration != null) {
            registration.clean();
        }
        if (destroyRc != 0) {
            // The object stays closed and its C object is left alone: providers may free part of it before the
            // kernel refuses (libsiw unmaps a CQ's and a QP's queues first), so touching it again could crash.
            String what = description.get();
            LOG.warn("{} failed: {} is abandoned (errno {})", destroyVerb, what, destroyRc);
            throw RdmaException.of(destroyVerb, destroyRc, what + " is abandoned: the C library refused to"
                    + " destroy it, and after a refusal it is not safe to use");
        }
    }

    /** The Cleaner action: the Java object was collected; close the C object if the program forgot to. */
    @Override
    public void run() {
        if (isClosed()) {
            return;
        }
        String name = name();
        if (createdAt == null) {
            LOG.warn("{} was never closed; closing it now (run with -Drdma4j.leakTracking=true to see where it was"
                    + " created)", name);
        } else {
            LOG.warn("{} was never closed; closing it now", name, createdAt);
        }
        try {
            close(() -> name);
        } catch (RuntimeException e) {
            LOG.warn("{} could not be closed", name, e);
        }
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
            owners = added(owners, owner);
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
        if (children == null) {
            children = new LinkedHashSet<>();
        }
        children.add(child);
        return true;
    }

    private synchronized void release(NativeResource child) {
        if (children != null) {
            children.remove(child);
        }
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
            snapshot = children == null ? List.of() : List.copyOf(children);
        }
        for (NativeResource child : snapshot) {
            into.add(child);
            child.collectDescendants(into);
        }
    }
}
