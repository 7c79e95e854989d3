package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The binding's struct layouts against the library it loads. The binding fills its structs
 * itself (Native.initStruct: zero, struct_size = its own size), so a layout that drifted from
 * the C struct would not fail on its own: this test is where it shows.
 */
class LayoutTest {
    /** The largest struct_size the library accepts (capstan.h): room for any version's struct. */
    private static final long MAX_STRUCT_SIZE = 4096;

    private static MethodHandle init(String struct) {
        return Native.fn("capstan_" + struct + "_init", Native.U32, Native.PTR);
    }

    /** Each struct (capstan_<name>) and this binding's layout of it. */
    private static final Map<String, MemoryLayout> STRUCTS = Map.of(
            "runtime_options", Native.RUNTIME_OPTIONS,
            "tool_def", Native.TOOL_DEF,
            "exec_options", Native.EXEC_OPTIONS,
            "stream_sink", Native.STREAM_SINK,
            "mcp_server_options", Native.MCP_SERVER_OPTIONS,
            "mcp_mount_options", Native.MCP_MOUNT_OPTIONS,
            "export_options", Native.EXPORT_OPTIONS,
            "search_options", Native.SEARCH_OPTIONS,
            "search_tool_options", Native.SEARCH_TOOL_OPTIONS);

    /** The library's struct_size of a struct: its _init run into room for any version. */
    private static int librarySize(Arena a, MethodHandle init) throws Throwable {
        MemorySegment scratch = a.allocate(MAX_STRUCT_SIZE, 8);
        Native.check((int) init.invokeExact(scratch));
        return scratch.get(Native.U32, 0);
    }

    @Test
    void everyStructLayoutHasTheLibrarysSize() throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            for (var e : STRUCTS.entrySet()) {
                assertEquals(librarySize(a, init(e.getKey())), e.getValue().byteSize(), e.getKey());
            }
        }
    }

    @Test
    void aStructIsFilledAsItsInitMacroWouldWithTheBindingsOwnSize() throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            for (var e : STRUCTS.entrySet()) {
                MemoryLayout layout = e.getValue();
                // The same bytes as the library's _init (into room for any version, not zero
                // before), over this binding's struct.
                MemorySegment s = Native.initStruct(a, layout);
                MemorySegment library = a.allocate(MAX_STRUCT_SIZE, 8);
                library.fill((byte) 0x5a);
                Native.check((int) init(e.getKey()).invokeExact(library));
                assertEquals(-1L, s.mismatch(library.asSlice(0, layout.byteSize())), e.getKey());
            }
        }
    }
}
