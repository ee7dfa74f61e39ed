package io.rdma4j.verbs;

import io.rdma4j.verbs.internal.NativeResource;
import io.rdma4j.verbs.internal.QueuePairFactory;
import io.rdma4j.verbs.internal.VerbsInternals;
import java.lang.foreign.MemorySegment;

/** The implementation of {@link VerbsInternals.Access}: package-private access for rdma4j's other modules. */
final class VerbsBridge implements VerbsInternals.Access {

    private VerbsBridge() {
    }

    static void register() {
        VerbsInternals.register(new VerbsBridge());
    }

    @Override
    public Context borrowedContext(MemorySegment context) {
        return Context.borrowed(context);
    }

    @Override
    public NativeResource resource(NativeObject object) {
        return object.nativeResource();
    }

    @Override
    public void keepReachable(Object verbsObject, Object other) {
        ((NativeObject) verbsObject).keepReachable(other);
    }

    @Override
    public ProtectionDomain protectionDomain(QueuePair.Builder builder) {
        return builder.protectionDomain();
    }

    @Override
    public QueuePair createQueuePair(QueuePair.Builder builder, QueuePairFactory factory) {
        return builder.create(factory);
    }

    @Override
    public QueuePairAttributes queuePairAttributes(MemorySegment attr, int mask) {
        return QueuePairAttributes.readFrom(attr, mask);
    }

    @Override
    public AddressVector addressVector(MemorySegment ahAttr) {
        return AddressVector.readFrom(ahAttr);
    }
}
