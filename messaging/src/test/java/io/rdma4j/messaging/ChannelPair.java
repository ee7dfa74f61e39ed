package io.rdma4j.messaging;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.cm.Acceptor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A connected pair of channels in two groups of this JVM, on the test device ({@code RDMA4J_TEST_ADDRESS}). */
record ChannelPair(MessagingGroup serverGroup, MessagingGroup clientGroup, Acceptor acceptor,
                   MessageChannel server, MessageChannel client) implements AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(20);

    static ChannelPair open(ProgressMode mode, MessagingOptions options) throws Exception {
        MessagingGroup serverGroup = MessagingGroup.create(mode);
        MessagingGroup clientGroup = MessagingGroup.create(mode);
        Acceptor acceptor = Acceptor.listen(new InetSocketAddress(address(), 0), 4);
        CompletableFuture<MessageChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return serverGroup.accept(acceptor, options, TIMEOUT).orElseThrow();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        MessageChannel client = clientGroup.connect(acceptor.localAddress(), options, TIMEOUT);
        return new ChannelPair(serverGroup, clientGroup, acceptor,
                accepted.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), client);
    }

    /** The IP address of the test device's port. */
    static InetAddress address() {
        String value = System.getenv("RDMA4J_TEST_ADDRESS");
        if (value == null || value.isBlank()) {
            return fail("RDMA4J_TEST_ADDRESS is not set: it names the IP address of the test device's port");
        }
        try {
            return InetAddress.getByName(value);
        } catch (java.net.UnknownHostException e) {
            return fail("RDMA4J_TEST_ADDRESS is not an IP address: " + value);
        }
    }

    @Override
    public void close() {
        client.close();
        server.close();
        acceptor.close();
        clientGroup.close();
        serverGroup.close();
    }
}
