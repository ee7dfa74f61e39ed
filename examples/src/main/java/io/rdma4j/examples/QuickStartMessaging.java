package io.rdma4j.examples;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.nio.charset.StandardCharsets.UTF_8;

import io.rdma4j.cm.Acceptor;
import io.rdma4j.messaging.MessageChannel;
import io.rdma4j.messaging.MessagingGroup;
import io.rdma4j.messaging.MessagingOptions;
import io.rdma4j.messaging.ProgressMode;
import io.rdma4j.messaging.ReceivedMessage;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

/** The README's messaging quick start: a message channel's server echoes the client's message (one process). */
public final class QuickStartMessaging {

    private QuickStartMessaging() {
    }

    /** {@code QuickStartMessaging ADDRESS}, the IP address of an RDMA device's port; prints the echo. */
    public static void main(String[] args) throws InterruptedException {
        InetSocketAddress address = new InetSocketAddress(args[0], 7471);
        try (MessagingGroup group = MessagingGroup.create(ProgressMode.EVENT_DRIVEN);
             Acceptor acceptor = Acceptor.listen(address, 16)) {
            Thread server = Thread.ofVirtual().start(() -> {
                try (MessageChannel channel = group.accept(acceptor, MessagingOptions.defaults(),
                        Duration.ofSeconds(30)).orElseThrow();
                     ReceivedMessage request = channel.receive()) {     // in place, in registered memory
                    channel.send(request.segment());                    // copied out: echoed
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try (MessageChannel channel = group.connect(address, MessagingOptions.defaults(), Duration.ofSeconds(30))) {
                channel.send(MemorySegment.ofArray("hello, messages".getBytes(UTF_8)));
                try (ReceivedMessage echo = channel.receive()) {
                    System.out.println("echoed: " + new String(echo.segment().toArray(JAVA_BYTE), UTF_8));
                }
            }
            server.join();
        }
    }
}
