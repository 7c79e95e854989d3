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
    private static final Map<String, Map.Entry<MemoryLayout, MethodHandle>> STRUCTS = Map.of(
            "capstan_runtime_options", Map.entry(Native.RUNTIME_OPTIONS, Native.runtime_options_init),
            "capstan_tool_def", Map.entry(Native.TOOL_DEF, Native.tool_def_init),
            "capstan_exec_options", Map.entry(Native.EXEC_OPTIONS, Native.exec_options_init),
            "capstan_stream_sink", Map.entry(Native.STREAM_SINK, Native.stream_sink_init),
            "capstan_mcp_server_options", Map.entry(Native.MCP_SERVER_OPTIONS, Native.mcp_server_options_init),
            "capstan_mcp_mount_options", Map.entry(Native.MCP_MOUNT_OPTIONS, Native.mcp_mount_options_init),
            "capstan_export_options", Map.entry(Native.EXPORT_OPTIONS, Native.export_options_init),
            "capstan_search_options", Map.entry(Native.SEARCH_OPTIONS, Native.search_options_init),
            "capstan_search_tool_options",
                    Map.entry(Native.SEARCH_TOOL_OPTIONS, Native.search_tool_options_init));

    @Test
    void everyStructLayoutHasTheLibrarysSize() throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            for (var e : STRUCTS.entrySet()) {
                MemoryLayout layout = e.getValue().getKey();
                assertEquals(Native.librarySize(a, e.getValue().getValue()), layout.byteSize(), e.getKey());
            }
        }
    }

    @Test
    void aStructIsFilledAsItsInitMacroWouldWithTheBindingsOwnSize() throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            for (var e : STRUCTS.entrySet()) {
                MemoryLayout layout = e.getValue().getKey();
                // The same bytes as the library's _init (into room for any version, not zero
                // before), over this binding's struct.
                MemorySegment s = Native.initStruct(a, layout);
                MemorySegment library = a.allocate(Native.MAX_STRUCT_SIZE, 8);
                library.fill((byte) 0x5a);
                Native.check((int) e.getValue().getValue().invokeExact(library));
                assertEquals(-1L, s.mismatch(library.asSlice(0, layout.byteSize())), e.getKey());
            }
        }
    }
}
