package io.rdma4j.verbs.internal;

import io.rdma4j.verbs.AddressVector;
import io.rdma4j.verbs.Context;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.QueuePair;
import io.rdma4j.verbs.QueuePairAttributes;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;

/**
 * What rdma4j's other modules (the connection manager) need of the verbs objects beyond their public API: the native
 * side of any {@link io.rdma4j.verbs.NativeObject}, and objects around C objects that librdmacm created. Not an
 * API: this package is exported to {@code io.rdma4j.cm} only. The verbs package registers the implementation when its classes
 * initialize (the JDK's "shared secrets" pattern), so that nothing of it becomes public.
 */
public final class VerbsInternals {

    /** The operations; implemented in {@code io.rdma4j.verbs}. */
    public interface Access {

        /** The one object of a device context that librdmacm opened and keeps open. */
        Context borrowedContext(MemorySegment context);

        /** The native side of any of rdma4j's native objects, in every module. */
        NativeResource resource(io.rdma4j.verbs.NativeObject object);

        /** Keeps {@code other} reachable as long as {@code verbsObject} is. */
        void keepReachable(Object verbsObject, Object other);

        /** The protection domain a queue pair builder creates in. */
        ProtectionDomain protectionDomain(QueuePair.Builder builder);

        /** Creates the queue pair {@code builder} describes through {@code factory}. */
        QueuePair createQueuePair(QueuePair.Builder builder, QueuePairFactory factory);

        /** The attributes of a {@code struct ibv_qp_attr} that {@code mask} names. */
        QueuePairAttributes queuePairAttributes(MemorySegment attr, int mask);

        /** A {@code struct ibv_ah_attr}. */
        AddressVector addressVector(MemorySegment ahAttr);
    }

    private static volatile Access access;

    private VerbsInternals() {
    }

    /**
     * Called once, by the verbs package.
     *
     * @throws IllegalStateException on a second call
     */
    public static synchronized void register(Access implementation) {
        if (access != null) {
            throw new IllegalStateException("VerbsInternals is registered already");
        }
        access = implementation;
    }

    /** The implementation (initializing the verbs package if needed). */
    public static Access access() {
        Access a = access;
        if (a == null) {
            try {
                MethodHandles.lookup().ensureInitialized(Context.class);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            a = access;
        }
        return a;
    }
}
