package io.rdma4j.bindings.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_context;
import io.rdma4j.bindings.verbs.ibv_port_attr;
import io.rdma4j.bindings.verbs.verbs_context;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code verbs_get_ctx} re-done in Java, against fake provider contexts: the {@code abi_compat} check, the step back
 * to the enclosing {@code verbs_context}, and the {@code sz} check before an entry is used.
 */
class VerbsContextTest {

    private static final long SIZE = verbs_context.layout().byteSize();

    @BeforeAll
    static void libraries() {
        NativeLibraries.require();
    }

    @Test
    void aLegacyContextHasNoExtendedTable() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment context = arena.allocate(ibv_context.layout());
            assertEquals(0, VerbsContext.verbs_get_ctx(context).address());
            MemorySegment state = Errno.state();
            assertEquals(0, VerbsContext.ibv_create_cq_ex(state, context, arena.allocate(64)).address());
            assertEquals(RdmaCore.EOPNOTSUPP(), Errno.get(state));
        }
    }

    @Test
    void theFullQueryPortGoesThroughTheExtendedEntryWithTheStructSize() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment vctx = extendedContext(arena, SIZE);
            MemorySegment context = vctx.asSlice(verbs_context.context$offset());
            List<Object> seen = new ArrayList<>();
            verbs_context.query_port(vctx, verbs_context.query_port.allocate((ctx, port, attr, size) -> {
                seen.addAll(List.of(ctx.address(), port, size));
                ibv_port_attr.lid(attr.reinterpret(size), (short) 0x2a);
                return 0;
            }, arena));
            assertEquals(vctx.address(), VerbsContext.verbs_get_ctx(context).address());
            MemorySegment attr = arena.allocate(ibv_port_attr.layout());
            assertEquals(0, VerbsContext.ibv_query_port(context, (byte) 3, attr));
            assertEquals(List.of(context.address(), (byte) 3, ibv_port_attr.layout().byteSize()), seen);
            assertEquals(0x2a, ibv_port_attr.lid(attr));
        }
    }

    @Test
    void anEntryBeyondTheProvidersSizeIsNotUsed() {
        try (Arena arena = Arena.ofConfined()) {
            long createCqEx = verbs_context.create_cq_ex$offset();
            // A provider built against an older, smaller verbs_context: its table starts after create_cq_ex.
            MemorySegment vctx = extendedContext(arena, SIZE - createCqEx - 8);
            verbs_context.create_cq_ex(vctx, verbs_context.create_cq_ex.allocate((ctx, attr) -> {
                throw new AssertionError("an entry outside sz must not be called");
            }, arena));
            MemorySegment context = vctx.asSlice(verbs_context.context$offset());
            MemorySegment state = Errno.state();
            assertEquals(0, VerbsContext.ibv_create_cq_ex(state, context, arena.allocate(64)).address());
            assertEquals(RdmaCore.EOPNOTSUPP(), Errno.get(state));
        }
    }

    private static MemorySegment extendedContext(Arena arena, long sz) {
        MemorySegment vctx = arena.allocate(verbs_context.layout());
        verbs_context.sz(vctx, sz);
        ibv_context.abi_compat(verbs_context.context(vctx), MemorySegment.ofAddress(-1L));
        return vctx;
    }
}
