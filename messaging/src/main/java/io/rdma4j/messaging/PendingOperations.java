package io.rdma4j.messaging;

import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.RdmaException;
import io.rdma4j.verbs.internal.NativeResource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The one-sided operations, or the zero-copy sends, a {@link MessageChannel} has in flight: a fixed number of slots
 * (the send queue has room for all of them), each with what it was (the operation and remote buffer, for the error
 * message; none for a send), the region it pins (a zero-copy send's, so that it cannot be closed under the device),
 * its result, and who waits for it: a blocking caller, which takes the result itself, or a future, completed on a
 * thread of its own so that the progress thread never runs application code. Not thread-safe: the channel calls it
 * under its lock.
 */
final class PendingOperations {

    /** Completes the futures: a virtual thread each, off the progress thread. */
    private static final Executor COMPLETER = task -> Thread.ofVirtual().name("rdma4j-operation-done").start(task);

    private enum State { FREE, BLOCKING, ASYNC, DETACHED, DONE }

    private final int[] free;
    private int freeCount;
    private final State[] states;
    private final RemoteOperation[] operations;
    private final RemoteBuffer[] remotes;
    private final NativeResource[] pins;
    private final CompletableFuture<?>[] futures;
    private final long[] results;
    private final RdmaException[] failures;

    PendingOperations(int slots) {
        free = new int[slots];
        states = new State[slots];
        operations = new RemoteOperation[slots];
        remotes = new RemoteBuffer[slots];
        pins = new NativeResource[slots];
        futures = new CompletableFuture<?>[slots];
        results = new long[slots];
        failures = new RdmaException[slots];
        for (int slot = slots - 1; slot >= 0; slot--) {
            states[slot] = State.FREE;
            free[freeCount++] = slot;
        }
    }

    boolean hasFree() {
        return freeCount > 0;
    }

    /** Whether no slot is in use: nothing in flight, no result left untaken. */
    boolean idle() {
        return freeCount == states.length;
    }

    /**
     * Takes a free slot for {@code operation} on {@code remote} (both {@code null} for a send); {@code future} is
     * completed when it ends, or {@code null} when the caller waits and takes the result with {@link #take};
     * {@code pinned}, if not {@code null}, was pinned by the caller and is unpinned when the slot is freed.
     */
    int start(RemoteOperation operation, RemoteBuffer remote, CompletableFuture<?> future, NativeResource pinned) {
        int slot = free[--freeCount];
        pins[slot] = pinned;
        states[slot] = future == null ? State.BLOCKING : State.ASYNC;
        operations[slot] = operation;
        remotes[slot] = remote;
        futures[slot] = future;
        failures[slot] = null;
        return slot;
    }

    /** Gives back a slot whose request was never posted. */
    void abandon(int slot) {
        clear(slot);
    }

    RemoteOperation operation(int slot) {
        return operations[slot];
    }

    RemoteBuffer remote(int slot) {
        return remotes[slot];
    }

    /** Whether the blocking operation in {@code slot} has ended. */
    boolean isDone(int slot) {
        return states[slot] == State.DONE;
    }

    /**
     * The ended blocking operation's result (the old value of an atomic), freeing its slot.
     *
     * @throws RdmaException how it failed
     */
    long take(int slot) {
        RdmaException failure = failures[slot];
        long result = results[slot];
        clear(slot);
        if (failure != null) {
            throw failure;
        }
        return result;
    }

    /** The blocking caller stopped waiting (interrupted, or the channel ended): its completion frees the slot. */
    void detach(int slot) {
        if (states[slot] == State.DONE) {
            clear(slot);
        } else if (states[slot] == State.BLOCKING) {
            states[slot] = State.DETACHED;
        }
    }

    /**
     * Ends the operation in {@code slot}: with {@code failure}, or else with {@code result}. The channel wakes the
     * caller that waits for it or for a free slot.
     */
    void end(int slot, long result, RdmaException failure) {
        switch (states[slot]) {
            case BLOCKING -> {
                results[slot] = result;
                failures[slot] = failure;
                states[slot] = State.DONE;
            }
            case ASYNC -> {
                CompletableFuture<?> future = futures[slot];
                boolean atomic = operations[slot] != null && operations[slot].isAtomic();
                clear(slot);
                COMPLETER.execute(() -> complete(future, atomic ? (Object) result : null, failure));
            }
            case DETACHED -> clear(slot);
            default -> {
                // FREE or DONE: a completion for a slot that no request holds; the channel checks ids, so never.
            }
        }
    }

    /** Fails every future still pending with {@code failure} (the channel ended; their requests will flush). */
    void failFutures(RdmaException failure) {
        for (int slot = 0; slot < states.length; slot++) {
            if (states[slot] == State.ASYNC) {
                CompletableFuture<?> future = futures[slot];
                futures[slot] = null;
                states[slot] = State.DETACHED;
                COMPLETER.execute(() -> complete(future, null, failure));
            }
        }
    }

    /**
     * Frees every slot, unpinning what they pin and failing their futures with {@code failure}: the channel's queue
     * pair is gone, so no completion will come for them.
     */
    void abandonAll(RdmaException failure) {
        failFutures(failure);
        for (int slot = 0; slot < states.length; slot++) {
            if (states[slot] != State.FREE) {
                clear(slot);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static void complete(CompletableFuture<?> future, Object value, RdmaException failure) {
        if (failure != null) {
            future.completeExceptionally(failure);
        } else {
            ((CompletableFuture<Object>) future).complete(value);
        }
    }

    private void clear(int slot) {
        if (pins[slot] != null) {
            pins[slot].unpin();
            pins[slot] = null;
        }
        states[slot] = State.FREE;
        operations[slot] = null;
        remotes[slot] = null;
        futures[slot] = null;
        failures[slot] = null;
        free[freeCount++] = slot;
    }
}
