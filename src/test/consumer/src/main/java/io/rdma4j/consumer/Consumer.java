package io.rdma4j.consumer;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.cm.Connection;
import io.rdma4j.cm.ConnectionOptions;
import io.rdma4j.cm.Connector;
import io.rdma4j.cm.RemoteBuffer;
import io.rdma4j.verbs.Access;
import io.rdma4j.verbs.MemoryRegion;
import io.rdma4j.verbs.ProtectionDomain;
import io.rdma4j.verbs.SendWorkRequests;
import io.rdma4j.verbs.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;

/**
 * Connects to itself over rdma_cm on the given address (an acceptor advertising a buffer, a connector RDMA-writing
 * into it) and checks what arrived; prints "consumer: ok" and exits 0, or fails.
 *
 * <pre>java ... io.rdma4j.consumer.Consumer IP_ADDRESS</pre>
 */
public final class Consumer {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Consumer() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress ip = InetAddress.getByName(args[0]);
        try (Acceptor acceptor = Acceptor.listen(new InetSocketAddress(ip, 0), 1);
             ProtectionDomain pd = acceptor.context().allocateProtectionDomain();
             MemoryRegion target = pd.allocateMemory(4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE))) {
            ConnectionOptions serving = ConnectionOptions.builder().protectionDomain(pd)
                    .privateData(RemoteBuffer.of(target, 0, 4096).toBytes()).build();
            CompletableFuture<Connection> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return acceptor.accept(serving, TIMEOUT).orElseThrow();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (Connection client = Connector.connect(acceptor.localAddress(), ConnectionOptions.defaults(), TIMEOUT);
                 Connection server = accepted.get();
                 MemoryRegion source = client.protectionDomain().allocateMemory(4096, EnumSet.of(Access.LOCAL_WRITE));
                 SendWorkRequests sends = new SendWorkRequests(1, 1);
                 WorkCompletions done = new WorkCompletions(1)) {
                RemoteBuffer buffer = RemoteBuffer.fromBytes(client.peerPrivateData());
                source.segment().set(ValueLayout.JAVA_LONG, 0, 0x5ca1ab1eL);
                client.queuePair().postSend(sends.rdmaWrite(1, buffer.address(), buffer.rkey())
                        .gather(source, 0, 8).signaled());
                long deadline = System.nanoTime() + TIMEOUT.toNanos();
                while (client.completionQueue().poll(done) == 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("no completion within " + TIMEOUT);
                    }
                    Thread.onSpinWait();
                }
                if (!done.isSuccess(0) || target.segment().get(ValueLayout.JAVA_LONG, 0) != 0x5ca1ab1eL) {
                    throw new IllegalStateException("the RDMA WRITE did not arrive: " + done.statusText(0));
                }
                System.out.println("consumer: ok (" + server.peerAddress() + " wrote into " + buffer + ")");
            }
        }
    }
}
