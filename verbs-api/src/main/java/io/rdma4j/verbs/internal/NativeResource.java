package io.rdma4j.verbs.internal;

import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.verbs.VerbException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
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
    /** How many objects the Cleaner found dropped without a close. */
    private static final AtomicLong LEAKS = new AtomicLong();
    /** How many of those are each reported in a warning of their own. */
    private static final int LEAKS_WARNED_IN_FULL = 20;
    /** {@code -Drdma4j.leakTracking=true} records where each object was created, for leak warnings. */
    private static final boolean TRACK_CREATION = Boolean.getBoolean("rdma4j.leakTracking");

    private volatile NativeResource parent;
    // The lists and sets below are made when first needed, guarded by this: most objects (regions, queue pairs) never
    // need most of them, and creating and closing such objects is a rate that applications measure.
    /** Further owners that this object closes before, besides its parent (see {@link #closesWith}). */
    private List<NativeResource> owners;
    private final long address;
    private final Rank rank;
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
     * The Java object, weakly (the native side must never keep it from its Cleaner), for objects that C hands back by
     * address (a queue pair in an async event, an id in a connection-manager event); null for the others.
     */
    private volatile WeakReference<Object> owner;
    /** Run once the C object is destroyed, however it was closed (by its owner, its parent or the Cleaner). */
    private List<Runnable> afterClose;
    /** The registration with the Cleaner, unregistered once the C object is destroyed. */
    private volatile Cleaner.Cleanable cleanable;
    /** The pointer, sized to its struct, in the global scope: only ever given out {@linkplain #pinned pinned}. */
    private final MemorySegment handle;
    private boolean closed;
    /** Whether the Java object is gone while others still used this one: the last of them closes it. Guarded by this. */
    private boolean dropped;
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
    public NativeResource(NativeResource parent, MemorySegment pointer, long size, Rank rank, String kind,
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

    /** How many objects, in every module, were dropped unclosed and closed by the Cleaner (each with a warning). */
    public static long leaksReclaimed() {
        return LEAKS.get();
    }

    /**
     * Lets {@link #findDescendant} find {@code javaObject} by this C address, for an object that C hands back (a queue
     * pair in an async event, an id in a connection-manager event). Held weakly.
     */
    public void findableAs(Object javaObject) {
        owner = new WeakReference<>(javaObject);
    }

    /**
     * The Java object of the live, findable descendant at C address {@code address}, or null (none, closed, or its
     * Java object already collected). Walks the tree: off the data path.
     */
    public Object findDescendant(long address) {
        List<NativeResource> snapshot;
        synchronized (this) {
            snapshot = children == null ? List.of() : List.copyOf(children);
        }
        for (NativeResource child : snapshot) {
            WeakReference<Object> ref = child.owner;
            if (child.address == address && ref != null && !child.closing) {
                Object found = ref.get();
                if (found != null) {
                    return found;
                }
            }
            Object below = child.findDescendant(address);
            if (below != null) {
                return below;
            }
        }
        return null;
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
     * @throws VerbException         if the destroy verb fails; the object is then closed all the same and its C
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
                        + " send between start and end, an open confined poster or poller, or a zero-copy send in flight)");
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
                boolean lastUserOfDropped;
                synchronized (other) {
                    other.users.remove(this);
                    lastUserOfDropped = other.dropped && other.users.isEmpty();
                }
                if (lastUserOfDropped) {
                    other.closeDropped(other.name());
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
            throw VerbException.of(destroyVerb, destroyRc, what + " is abandoned: the C library refused to"
                    + " destroy it, and after a refusal it is not safe to use");
        }
    }

    /**
     * The Cleaner action: the Java object was collected; close the C object if the program forgot to, with a warning
     * (the first {@link #LEAKS_WARNED_IN_FULL} each in full, then one line at each power of two of the count, so that
     * a loop that forgets its regions cannot flood the log). An object that others still use (a completion channel
     * whose dropped CQ is not closed yet) is closed by the last of them to close.
     */
    @Override
    public void run() {
        if (isClosed()) {
            return;
        }
        long leaks = LEAKS.incrementAndGet();
        String name = name();
        if (leaks <= LEAKS_WARNED_IN_FULL) {
            if (createdAt == null) {
                LOG.warn("{} was never closed; closing it now (run with -Drdma4j.leakTracking=true to see where it"
                        + " was created)", name);
            } else {
                LOG.warn("{} was never closed; closing it now", name, createdAt);
            }
        } else if (Long.bitCount(leaks) == 1) {
            LOG.warn("{} objects so far were never closed and have been closed when dropped, the latest {}; close"
                    + " them (-Drdma4j.leakTracking=true shows where each was created)", leaks, name);
        }
        closeDropped(name);
    }

    /** Closes an object whose Java side is gone; if others still use it, the last of them to close closes it. */
    private void closeDropped(String name) {
        synchronized (this) {
            if (users != null && !users.isEmpty()) {
                dropped = true;
                return;
            }
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
        all.sort(Comparator.comparingInt(r -> r.rank.ordinal()));
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
