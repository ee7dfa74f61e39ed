package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.NativeResource;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * What every verbs object shares: a C object ({@link NativeResource}) with an idempotent, thread-safe close that
 * is safe against concurrent use, a place in the object tree, and a {@link Cleaner} that closes it, with a warning,
 * if the program drops it without closing it.
 *
 * <p>A child keeps its parent alive (a strong reference to the Java object), and an open parent keeps its open
 * children alive, so the Cleaner reclaims a tree of objects (a context and everything created on it) only as a
 * whole, once none of its objects is reachable: a connected queue pair whose last reference the program dropped
 * keeps working as long as its protection domain, its CQ or anything else of its tree is in use. Closing a parent
 * first closes every live descendant, in the order libibverbs requires: QP, SRQ, CQ, completion channel, MW/AH,
 * MR (a bound window holds its region), PD, context ({@link Rank}).
 */
abstract class VerbsObject implements AutoCloseable {

    /** Close order: lower ranks close first. */
    enum Rank {
        QUEUE_PAIR, SHARED_RECEIVE_QUEUE, COMPLETION_QUEUE, COMPLETION_CHANNEL, WINDOW_OR_ADDRESS_HANDLE,
        MEMORY_REGION, PROTECTION_DOMAIN, CONTEXT
    }

    /**
     * Each class's simple name, for messages: {@link Class#getSimpleName()} goes through a soft reference whose
     * first read after a garbage collection took a path the compiled code had never seen, and the compiled
     * create it sat in was thrown away (a queue pair loop in the lab, -XX:+PrintCompilation).
     */
    private static final ClassValue<String> KIND = new ClassValue<>() {
        @Override
        protected String computeValue(Class<?> type) {
            return type.getSimpleName();
        }
    };

    /** The one Cleaner of rdma4j's objects, in every module. */
    static final Cleaner CLEANER = Cleaner.create();

    static {
        VerbsBridge.register();
    }

    private final NativeResource resource;
    /** Whether the C object belongs to another library (librdmacm's device contexts): the user cannot close it. */
    private final boolean borrowed;
    /**
     * What this object uses, kept reachable so that their Cleaners cannot run while it lives; made when first needed
     * (most objects use nothing), guarded by this.
     */
    private List<Object> used;
    /**
     * The open children, kept reachable while this object is; each leaves the map when its C object is destroyed.
     * Made when the first child is (regions and queue pairs never have any), with the one weak reference to it that
     * its children's native sides hold.
     */
    private volatile Map<NativeResource, VerbsObject> children;
    private WeakReference<Map<NativeResource, VerbsObject>> childrenRef;

    /**
     * Wraps a C object that was just created under {@code parent}.
     *
     * @param destroyer the C destroy verb; must not capture this object, or the Cleaner could never run
     * @throws IllegalStateException if the parent was closed meanwhile (the new C object is destroyed again)
     */
    VerbsObject(VerbsObject parent, MemorySegment pointer, long size, Rank rank, String destroyVerb,
                NativeResource.Destroyer destroyer) {
        this.resource = new NativeResource(parent == null ? null : parent.resource, pointer, size, rank.ordinal(),
                KIND.get(getClass()), destroyVerb, destroyer);
        this.borrowed = destroyer == null;
        if (parent != null) {
            parent.keepChild(resource, this);
        }
        if (!borrowed) {
            resource.cleanedBy(CLEANER, this);
        }
    }

    /** Keeps {@code child} reachable until its C object is destroyed (see NativeResource#keptIn). */
    private void keepChild(NativeResource resource, VerbsObject child) {
        Map<NativeResource, VerbsObject> map = children;
        if (map == null) {
            synchronized (this) {
                map = children;
                if (map == null) {
                    map = new ConcurrentHashMap<>();
                    childrenRef = new WeakReference<>(map);
                    children = map;
                }
            }
        }
        map.put(resource, child);
        resource.keptIn(childrenRef);
    }

    /** Wraps a C object that another library owns and destroys: {@link #close()} is refused, no Cleaner runs. */
    VerbsObject(MemorySegment pointer, long size, Rank rank) {
        this(null, pointer, size, rank, null, null);
    }

    /** The native side, for objects of other modules that close with this one (a CM id's queue pair). */
    final NativeResource resource() {
        return resource;
    }

    /** Runs {@code action} once the C object is destroyed, however it is closed (see NativeResource#afterClose). */
    final void afterClose(Runnable action) {
        resource.afterClose(action);
    }

    /** Keeps {@code other} reachable as long as this object is (a queue pair its connection-manager id). */
    final synchronized void keepReachable(Object other) {
        if (used == null) {
            used = new ArrayList<>(2);
        }
        used.add(other);
    }

    /**
     * Pins this object for one call and returns its C pointer, sized to its struct: a close on another thread is
     * refused until {@link #unpin()}, which the caller runs in a {@code finally}. Allocates nothing.
     *
     * @throws IllegalStateException if this object is closed
     */
    final MemorySegment pinned() {
        return resource.pinned();
    }

    /** Ends a {@link #pinned()}. */
    final void unpin() {
        resource.unpin();
    }

    /** Runs {@code call} on the {@linkplain #pinned pinned} pointer (off the data path: the lambda may allocate). */
    final <T> T withPinned(Function<MemorySegment, T> call) {
        return resource.withPinned(call);
    }

    /**
     * Pins every non-null object of {@code objects} (those a create verb reads, some through its attribute struct:
     * a QP's PD, CQs and SRQ) and returns their pointers, null for null; if one is closed, unpins those pinned so
     * far and throws.
     */
    static MemorySegment[] pinAll(VerbsObject... objects) {
        MemorySegment[] pointers = new MemorySegment[objects.length];
        for (int i = 0; i < objects.length; i++) {
            try {
                pointers[i] = objects[i] == null ? null : objects[i].pinned();
            } catch (IllegalStateException closed) {
                unpinAll(Arrays.copyOf(objects, i));
                throw closed;
            }
        }
        return pointers;
    }

    /** Ends a {@link #pinAll}. */
    static void unpinAll(VerbsObject... objects) {
        for (VerbsObject object : objects) {
            if (object != null) {
                object.unpin();
            }
        }
    }

    /**
     * Records that this object uses {@code others} (a QP its CQs and SRQ; nulls and repeats are skipped): each then
     * refuses to close, with a message naming this object, until this one is closed. The caller keeps them
     * reachable (in fields) as long as this object is.
     */
    final void uses(VerbsObject... others) {
        NativeResource[] resources = new NativeResource[others.length];
        for (int i = 0; i < others.length; i++) {
            resources[i] = others[i] == null ? null : others[i].resource;
        }
        resource.uses(resources);
    }

    /**
     * The C address, for a caller that only records it (a request naming a region, handle or window, pinned again
     * when posted).
     *
     * @throws IllegalStateException if this object has been closed
     */
    final long openAddress() {
        return resource.openAddress();
    }

    /** Throws {@link IllegalStateException} if this object has been closed. */
    final void checkOpen() {
        openAddress();
    }

    /** Whether {@link #close()} has completed (or is under way). */
    public final boolean isClosed() {
        return resource.isClosed();
    }

    /** A short description for messages, e.g. {@code "ProtectionDomain@0x55d0c1a0"}. */
    String describe() {
        return getClass().getSimpleName() + "@0x" + Long.toHexString(resource.address());
    }

    /** The same short description: the kind of object and its C address (a QP's type and number). */
    @Override
    public final String toString() {
        return describe();
    }

    /**
     * Closes every live object created from this one, then destroys this one. Idempotent and thread-safe.
     *
     * @throws IllegalStateException if a verb on this object is running on another thread right now
     * @throws RdmaException         if the destroy verb fails (e.g. EBUSY: still used by an object elsewhere); the
     *                               object is closed all the same and its C object abandoned, never touched
     *                               again (libsiw unmaps a CQ's or QP's queues before the kernel refuses)
     */
    @Override
    public final void close() {
        if (borrowed) {
            throw new IllegalStateException(describe() + " belongs to librdmacm and stays open as long as its ids:"
                    + " close the objects created on it instead");
        }
        resource.close(this::describe);
    }

    /** The live descendant of type {@code type} whose C pointer is {@code address}, or {@code null}. */
    final <T extends VerbsObject> T findDescendant(long address, Class<T> type) {
        Map<NativeResource, VerbsObject> map = children;
        if (map == null) {
            return null;
        }
        for (VerbsObject child : map.values()) {
            if (child.resource.address() == address && type.isInstance(child) && child.resource.isUsable()) {
                return type.cast(child);
            }
            T below = child.findDescendant(address, type);
            if (below != null) {
                return below;
            }
        }
        return null;
    }
}
