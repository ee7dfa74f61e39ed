package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.NativeResource;
import io.rdma4j.verbs.internal.Rank;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * A C object of rdma-core that rdma4j owns: the one base of every native object in every module of rdma4j (the verbs
 * objects here, the connection manager's ids and channels, and the layers above them), with one lifetime model.
 *
 * <ul>
 *   <li>A child keeps its parent alive and is created under an open one (a region under its protection domain, a
 *       queue pair under its domain, an id under its event channel).</li>
 *   <li>Closing a parent first closes its live descendants, in the one order that libibverbs and librdmacm require
 *       (queue pair, SRQ, CQ, completion channel, window or address handle, region, protection domain, context;
 *       then connection-manager ids, then their channel).</li>
 *   <li>{@link #close()} is idempotent and thread-safe, and refused ({@link IllegalStateException}) while a call on
 *       the object, or a post that names it, runs on another thread, or while another object uses it (a CQ used by a
 *       queue pair); a failed C destroy is a {@link VerbException}, after which the object is closed to Java and its
 *       C object abandoned, never touched again.</li>
 *   <li>A parent does not keep its children reachable: an object the program drops without closing it is closed by
 *       a {@link Cleaner}, with a warning ({@code -Drdma4j.leakTracking=true} adds where it was created), even while
 *       its parent lives, so a forgotten region or queue pair never pins memory or a device resource for good.</li>
 * </ul>
 *
 * <p>Not for subclassing outside rdma4j: its constructor takes rdma4j's internal types. Thread-safety: {@code close}
 * and {@code isClosed} from any thread; each subclass states the rest.
 */
public abstract class NativeObject implements AutoCloseable {

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
     * Wraps a C object that was just created under {@code parent}. For rdma4j's own modules.
     *
     * @param destroyer the C destroy verb; must not capture this object, or the Cleaner could never run
     * @throws IllegalStateException if the parent was closed meanwhile (the new C object is destroyed again)
     */
    // Internal types: no class outside rdma4j can call it. It registers the Cleaner for this object, and rdma4j's
    // subclasses (in every module) are written for that: none reads a field of its own before its super call ends.
    @SuppressWarnings({"exports", "this-escape"})
    protected NativeObject(NativeObject parent, MemorySegment pointer, long size, Rank rank, String destroyVerb,
                           NativeResource.Destroyer destroyer) {
        this.resource = new NativeResource(parent == null ? null : parent.resource, pointer, size, rank,
                KIND.get(getClass()), destroyVerb, destroyer);
        this.borrowed = destroyer == null;
        if (!borrowed) {
            resource.cleanedBy(CLEANER, this);
        }
    }

    /** Wraps a C object that another library owns and destroys: {@link #close()} is refused, no Cleaner runs. */
    NativeObject(MemorySegment pointer, long size, Rank rank) {
        this(null, pointer, size, rank, null, null);
    }

    /** The native side, for rdma4j's own modules and this package (which pin it around their calls). */
    @SuppressWarnings("exports") // an internal type: no class outside rdma4j can use it
    protected final NativeResource nativeResource() {
        return resource;
    }

    /**
     * Lets {@link #findDescendant} of its ancestors find this object by its C address: for objects that C hands back
     * by address (a queue pair in an async event, an id in a connection-manager event). Costs one weak reference.
     */
    protected final void findable() {
        resource.findableAs(this);
    }

    /** The live, {@linkplain #findable findable} descendant of {@code type} at C address {@code address}, or null. */
    protected final <T extends NativeObject> T findDescendant(long address, Class<T> type) {
        Object found = resource.findDescendant(address);
        return type.isInstance(found) ? type.cast(found) : null;
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
    static MemorySegment[] pinAll(NativeObject... objects) {
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
    static void unpinAll(NativeObject... objects) {
        for (NativeObject object : objects) {
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
    final void uses(NativeObject... others) {
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

    /** A short description for messages, e.g. {@code "ProtectionDomain@0x55d0c1a0"}; subclasses add what they are. */
    protected String describe() {
        return KIND.get(getClass()) + "@0x" + Long.toHexString(resource.address());
    }

    /** The same short description: the kind of object and its C address (a QP's type and number). */
    @Override
    public final String toString() {
        return describe();
    }

    /**
     * Closes every live object created from this one, then destroys this one. Idempotent and thread-safe.
     *
     * @throws IllegalStateException if a call on this object, or a post naming it, is running on another thread right
     *                               now, or another object still uses it
     * @throws VerbException         if the destroy verb fails (e.g. EBUSY: still used by an object elsewhere); the
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
}
