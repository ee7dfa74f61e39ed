package io.rdma4j.bindings.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.bindings.verbs.ibv_context_ops;
import io.rdma4j.bindings.verbs.ibv_port_attr;
import io.rdma4j.bindings.verbs.ibv_qp_attr;
import io.rdma4j.bindings.verbs.ibv_qp_init_attr;
import io.rdma4j.bindings.verbs.ibv_qp_init_attr_ex;
import io.rdma4j.bindings.verbs.ibv_recv_wr;
import io.rdma4j.bindings.verbs.ibv_send_wr;
import io.rdma4j.bindings.verbs.ibv_sge;
import io.rdma4j.bindings.verbs.ibv_wc;
import io.rdma4j.bindings.verbs.rdma_cm_event;
import io.rdma4j.bindings.verbs.rdma_cm_id;
import io.rdma4j.bindings.verbs.rdma_conn_param;
import io.rdma4j.bindings.verbs.verbs_context;
import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checks the committed jextract layouts against the rdma-core headers installed here: gcc compiles a program
 * that prints {@code sizeof} and the {@code offsetof} of every member (nested unions and structs included) of the
 * structs rdma4j reads and writes, and each must match the generated layout. Catches headers that drifted from
 * the committed bindings (regenerate) as well as a jextract layout bug.
 */
class StructLayoutTest {

    /** C struct name -> generated layout. */
    private static final Map<String, GroupLayout> STRUCTS = new LinkedHashMap<>();

    static {
        STRUCTS.put("ibv_send_wr", ibv_send_wr.layout());
        STRUCTS.put("ibv_recv_wr", ibv_recv_wr.layout());
        STRUCTS.put("ibv_sge", ibv_sge.layout());
        STRUCTS.put("ibv_wc", ibv_wc.layout());
        STRUCTS.put("ibv_qp_attr", ibv_qp_attr.layout());
        STRUCTS.put("ibv_qp_init_attr", ibv_qp_init_attr.layout());
        STRUCTS.put("ibv_qp_init_attr_ex", ibv_qp_init_attr_ex.layout());
        STRUCTS.put("ibv_port_attr", ibv_port_attr.layout());
        STRUCTS.put("ibv_context_ops", ibv_context_ops.layout());
        STRUCTS.put("verbs_context", verbs_context.layout());
        STRUCTS.put("rdma_cm_id", rdma_cm_id.layout());
        STRUCTS.put("rdma_cm_event", rdma_cm_event.layout());
        STRUCTS.put("rdma_conn_param", rdma_conn_param.layout());
        STRUCTS.put("epoll_event", Poller.EVENT_LAYOUT);
    }

    private static Map<String, Long> fromC;

    @BeforeAll
    static void compileAndRun(@TempDir Path dir) throws IOException, InterruptedException {
        assumeTrue(onPath("gcc"), "SKIPPED: gcc is not installed, so the layouts cannot be checked against C");
        assumeTrue(Files.exists(Path.of("/usr/include/rdma/rdma_cma.h")),
                "SKIPPED: rdma-core headers missing (apt-get install libibverbs-dev librdmacm-dev)");
        StringBuilder c = new StringBuilder("""
                #include <stddef.h>
                #include <stdio.h>
                #include <infiniband/verbs.h>
                #include <rdma/rdma_cma.h>
                #include <sys/epoll.h>
                int main(void) {
                """);
        expected().keySet().forEach(key -> {
            String[] parts = key.split(" ", 2);
            String expr = parts.length == 1 ? "sizeof(struct " + key + ")"
                    : "offsetof(struct " + parts[0] + ", " + parts[1] + ")";
            c.append("    printf(\"%s %zu\\n\", \"").append(key).append("\", ").append(expr).append(");\n");
        });
        c.append("    return 0;\n}\n");
        Path source = dir.resolve("layouts.c");
        Path binary = dir.resolve("layouts");
        Files.writeString(source, c);
        run(dir, "gcc", "-o", binary.toString(), source.toString());
        String output = run(dir, binary.toString());
        fromC = new TreeMap<>();
        output.lines().forEach(line -> {
            int space = line.lastIndexOf(' ');
            fromC.put(line.substring(0, space), Long.parseLong(line.substring(space + 1)));
        });
    }

    @TestFactory
    Stream<DynamicTest> everyMemberMatchesTheInstalledHeaders() {
        return expected().entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(),
                () -> assertEquals(fromC.get(e.getKey()), e.getValue(), e.getKey())));
    }

    /** "struct" -> size and "struct member.path" -> offset, from the generated layouts. */
    private static Map<String, Long> expected() {
        Map<String, Long> expected = new LinkedHashMap<>();
        STRUCTS.forEach((name, layout) -> {
            expected.put(name, layout.byteSize());
            members(name, "", 0, layout, expected);
        });
        return expected;
    }

    private static void members(String struct, String prefix, long base, GroupLayout group, Map<String, Long> out) {
        long offset = 0;
        for (MemoryLayout member : group.memberLayouts()) {
            long at = base + offset;
            if (!(member instanceof PaddingLayout) && member.name().isPresent()) {
                String name = member.name().get();
                // jextract names anonymous unions/structs "$anon$…"; in C their members are reached directly.
                boolean anonymous = name.startsWith("$anon$");
                String path = anonymous ? prefix : prefix + name;
                if (!anonymous) {
                    out.put(struct + " " + path, at);
                }
                if (member instanceof GroupLayout nested) {
                    members(struct, anonymous ? prefix : path + ".", at, nested, out);
                }
            }
            if (group instanceof StructLayout) {
                offset += member.byteSize();
            }
        }
    }

    private static boolean onPath(String tool) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed:\n" + out);
        }
        return out;
    }
}
