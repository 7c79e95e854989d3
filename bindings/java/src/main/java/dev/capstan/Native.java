package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * libcapstan loaded through java.lang.foreign: the downcall handles of include/capstan.h,
 * the upcall stubs (one per callback kind, made once, in the global arena) and the table of
 * Java objects that a C {@code user_data} pointer names (a number, never a real address).
 *
 * <p>Where the library comes from, first match wins: the system property {@code capstan.lib}
 * (a file path), the environment variable {@code CAPSTAN_LIB} (a file path), a
 * {@code libcapstan.so}/{@code .dylib}/{@code capstan.dll} in one of the directories of
 * {@code java.library.path}, the library a released jar carries for this platform
 * (extracted once to a cache directory: {@link NativeBundle}), then the platform's own search (dlopen/LoadLibrary by name:
 * LD_LIBRARY_PATH, the ld.so cache, /usr/local/lib...).
 */
final class Native {
    private Native() {}

    static final Linker LINKER = Linker.nativeLinker();
    static final AddressLayout PTR = ValueLayout.ADDRESS;
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT;
    static final ValueLayout.OfLong SIZE = ValueLayout.JAVA_LONG;
    static final ValueLayout.OfBoolean BOOL = ValueLayout.JAVA_BOOLEAN;
    static final long NTS = -1L; // CAPSTAN_NTS = SIZE_MAX
    static final int WAIT_FOREVER = -1; // UINT32_MAX

    static final int OK = 0;
    static final int ERR_ALREADY_COMPLETED = 11;
    static final int ERR_STALE_HANDLE = 12;
    static final int CONTENT_TEXT = 0;
    static final int CONTENT_JSON = 1;
    static final int CONTENT_PARTS = 2;

    static final SymbolLookup LIB;
    static final String LIB_SOURCE;

    static {
        if (LINKER.canonicalLayouts().get("size_t").byteSize() != 8) {
            throw new UnsupportedOperationException("capstan for Java needs a 64-bit JVM");
        }
        String[] found = locate();
        LIB_SOURCE = found[0];
        LIB = load(found);
    }

    /** The library found by {@link #locate}; when it cannot be opened, an error that says
     *  where capstan looked and how to point it at the library (issue 49). */
    private static SymbolLookup load(String[] found) {
        try {
            return found[1] != null
                    ? SymbolLookup.libraryLookup(Path.of(found[1]), Arena.global())
                    : SymbolLookup.libraryLookup(found[0], Arena.global());
        } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
            String tried = found[1] != null
                    ? found[1]
                    : found[0] + " in java.library.path ("
                            + System.getProperty("java.library.path", "")
                            + ") and the system's library search (LD_LIBRARY_PATH, the ld.so cache)";
            // The JVM's own reason is in the message (an Error thrown by a static
            // initializer reaches the caller as it is: no cause to unwrap).
            throw new UnsatisfiedLinkError(
                    "capstan: cannot open the native library: tried " + tried
                            + ". Set CAPSTAN_LIB (or -Dcapstan.lib=) to the path of libcapstan.so"
                            + " (libcapstan.dylib, capstan.dll), built by 'make lib' into target/release"
                            + " or installed by 'make install'. (" + e.getMessage() + ")");
        }
    }

    /** {path, null} or {name, null}: where the library is, and how it was found. */
    private static String[] locate() {
        String prop = System.getProperty("capstan.lib");
        if (prop != null && !prop.isBlank()) {
            return existing(prop, "system property capstan.lib");
        }
        String env = System.getenv("CAPSTAN_LIB");
        if (env != null && !env.isBlank()) {
            return existing(env, "CAPSTAN_LIB");
        }
        String mapped = System.mapLibraryName("capstan");
        String jlp = System.getProperty("java.library.path", "");
        for (String dir : jlp.split(java.io.File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            Path p = Path.of(dir, mapped);
            if (Files.isRegularFile(p)) {
                return new String[] {p.toString(), p.toString()};
            }
        }
        Path bundled = NativeBundle.extract();
        if (bundled != null) return new String[] {bundled.toString(), bundled.toString()};
        return new String[] {mapped, null};
    }

    private static String[] existing(String path, String from) {
        Path p = Path.of(path);
        if (!Files.isRegularFile(p)) {
            throw new UnsatisfiedLinkError(from + " names " + path + ", which is not a file");
        }
        return new String[] {p.toAbsolutePath().toString(), p.toAbsolutePath().toString()};
    }

    static MethodHandle fn(String name, MemoryLayout ret, MemoryLayout... args) {
        MemorySegment sym = LIB.find(name).orElseThrow(
                () -> new UnsatisfiedLinkError(LIB_SOURCE + " has no " + name + " (an older capstan?)"));
        FunctionDescriptor d = ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args);
        return LINKER.downcallHandle(sym, d);
    }

    // 1-2. statuses, errors, text, versions
    static final MethodHandle status_name = fn("capstan_status_name", PTR, U32);
    static final MethodHandle error_json = fn("capstan_error_json", U32, PTR, PTR);
    static final MethodHandle string_free = fn("capstan_string_free", null, PTR);
    static final MethodHandle version_string = fn("capstan_version_string", PTR);
    static final MethodHandle version_number = fn("capstan_version_number", U32);
    static final MethodHandle features_mask = fn("capstan_features_mask", U32);
    // 4. runtime
    static final MethodHandle runtime_set_thread_hooks = fn("capstan_runtime_set_thread_hooks", U32, PTR, PTR, PTR, PTR);
    static final MethodHandle runtime_shutdown = fn("capstan_runtime_shutdown", U32, U32);
    static final MethodHandle runtime_configure = fn("capstan_runtime_configure", U32, PTR);
    // 5. formats
    static final MethodHandle format_parse_calls = fn("capstan_format_parse_calls", U32, U32, PTR, SIZE, PTR, PTR);
    static final MethodHandle format_write_results = fn("capstan_format_write_results", U32, U32, PTR, SIZE, PTR, PTR);
    // 6. registry
    static final MethodHandle registry_new = fn("capstan_registry_new", U32, PTR, PTR);
    static final MethodHandle registry_free = fn("capstan_registry_free", null, PTR);
    static final MethodHandle registry_close = fn("capstan_registry_close", U32, PTR, U32);
    // 7. tools
    static final MethodHandle name_check = fn("capstan_name_check", U32, PTR, SIZE);
    static final MethodHandle registry_add_tool = fn("capstan_registry_add_tool", U32, PTR, PTR);
    static final MethodHandle registry_remove_tool = fn("capstan_registry_remove_tool", U32, PTR, PTR, SIZE);
    static final MethodHandle registry_tools_json = fn("capstan_registry_tools_json", U32, PTR, U32, PTR, PTR, PTR, PTR, PTR);
    static final MethodHandle registry_stats_json = fn("capstan_registry_stats_json", U32, PTR, PTR, PTR);
    // 8. calls
    static final MethodHandle call_arguments = fn("capstan_call_arguments", PTR, PTR, PTR);
    static final MethodHandle call_id = fn("capstan_call_id", PTR, PTR, PTR);
    static final MethodHandle call_tool = fn("capstan_call_tool", PTR, PTR, PTR);
    static final MethodHandle call_cancelled = fn("capstan_call_cancelled", BOOL, PTR);
    static final MethodHandle call_return = fn("capstan_call_return", U32, PTR, U32, PTR, SIZE);
    static final MethodHandle call_fail = fn("capstan_call_fail", U32, PTR, PTR, SIZE);
    static final MethodHandle call_progress = fn("capstan_call_progress", U32, PTR, ValueLayout.JAVA_DOUBLE,
            ValueLayout.JAVA_DOUBLE, PTR, SIZE);
    static final MethodHandle call_log = fn("capstan_call_log", U32, PTR, U32, PTR, SIZE);
    static final MethodHandle call_input = fn("capstan_call_input", PTR, PTR, PTR);
    static final MethodHandle call_require_input = fn("capstan_call_require_input", U32, PTR, PTR, SIZE, PTR, SIZE);
    // 9-10. running calls, batches
    static final MethodHandle registry_execute = fn("capstan_registry_execute", U32, PTR, PTR, SIZE, PTR, PTR, PTR);
    // capstan_host_batch_*: HostBatch's own (addresses as numbers)
    static final MethodHandle registry_run_turn = fn("capstan_registry_run_turn", U32, PTR, U32, PTR, SIZE, PTR, PTR, PTR);
    static final MethodHandle batch_submit = fn("capstan_batch_submit", U32, PTR, PTR, SIZE, PTR, PTR, PTR, PTR);
    static final MethodHandle batch_wait = fn("capstan_batch_wait", U32, PTR, U32);
    static final MethodHandle batch_cancel = fn("capstan_batch_cancel", null, PTR);
    static final MethodHandle batch_free = fn("capstan_batch_free", null, PTR);
    // 12. approvals
    static final MethodHandle registry_set_approver = fn("capstan_registry_set_approver", U32, PTR, PTR, PTR, PTR);
    static final MethodHandle approval_tool = fn("capstan_approval_tool", PTR, PTR, PTR);
    static final MethodHandle approval_id = fn("capstan_approval_id", PTR, PTR, PTR);
    static final MethodHandle approval_arguments = fn("capstan_approval_arguments", PTR, PTR, PTR);
    static final MethodHandle approval_decide = fn("capstan_approval_decide", U32, PTR, BOOL, PTR, SIZE);

    // 14. streams
    static final MethodHandle stream_new = fn("capstan_stream_new", U32, PTR, U32, PTR, PTR, PTR);
    static final MethodHandle stream_feed = fn("capstan_stream_feed", U32, PTR, PTR, SIZE);
    static final MethodHandle stream_finish = fn("capstan_stream_finish", U32, PTR, PTR, PTR);
    static final MethodHandle stream_cancel = fn("capstan_stream_cancel", null, PTR);
    static final MethodHandle stream_free = fn("capstan_stream_free", null, PTR);

    // 12-13. approvals check, events
    static final MethodHandle registry_needs_approval = fn("capstan_registry_needs_approval", U32, PTR, PTR, SIZE, PTR, PTR, PTR);
    static final MethodHandle registry_set_event_hook = fn("capstan_registry_set_event_hook", U32, PTR, PTR, PTR, PTR);
    static final MethodHandle runtime_abandon_thread_hooks = fn("capstan_runtime_abandon_thread_hooks", U32, U32);

    // 15-16. MCP
    static final MethodHandle mcp_server_start = fn("capstan_mcp_server_start", U32, PTR, PTR, PTR);
    static final MethodHandle mcp_server_url = fn("capstan_mcp_server_url", U32, PTR, PTR, PTR);
    static final MethodHandle mcp_server_stop = fn("capstan_mcp_server_stop", U32, PTR);
    static final MethodHandle mcp_server_free = fn("capstan_mcp_server_free", null, PTR);
    static final MethodHandle mcp_mount_new = fn("capstan_mcp_mount_new", U32, PTR, PTR, PTR);
    static final MethodHandle mcp_mount_free = fn("capstan_mcp_mount_free", U32, PTR);
    static final MethodHandle mcp_mount_info_json = fn("capstan_mcp_mount_info_json", U32, PTR, PTR, PTR);
    static final MethodHandle mcp_server_serve_stdio = fn("capstan_mcp_server_serve_stdio", U32, PTR, PTR);

    // 7, 9, 11. export, names, check_call, main thread and wake-ups
    static final MethodHandle registry_names_json = fn("capstan_registry_names_json", U32, PTR, PTR, PTR);
    static final MethodHandle registry_check_call = fn("capstan_registry_check_call", U32, PTR, PTR, SIZE, PTR, SIZE,
            U32, PTR, PTR, PTR);
    static final MethodHandle registry_pump = fn("capstan_registry_pump", SIZE, PTR, U32);
    static final MethodHandle registry_set_notify = fn("capstan_registry_set_notify", U32, PTR, PTR, PTR, PTR);
    static final MethodHandle registry_wake_fd = fn("capstan_registry_wake_fd", U32, PTR, PTR);

    // 5, 7. history check, tool search
    static final MethodHandle format_check_history = fn("capstan_format_check_history", U32, U32, PTR, SIZE, U32,
            PTR, PTR, PTR, PTR);
    static final MethodHandle registry_search_json = fn("capstan_registry_search_json", U32, PTR, PTR, SIZE, PTR, PTR,
            PTR);
    static final MethodHandle registry_add_search_tool = fn("capstan_registry_add_search_tool", U32, PTR, PTR);
    static final MethodHandle registry_unload_tools = fn("capstan_registry_unload_tools", U32, PTR);

    // ---- structs (layouts checked against the library's by LayoutTest) ----
    static final MemoryLayout TOOL_DEF = MemoryLayout.structLayout(
            U32.withName("struct_size"), MemoryLayout.paddingLayout(4),
            PTR.withName("name"), PTR.withName("description"), PTR.withName("parameters"),
            PTR.withName("callback"), PTR.withName("user_data"), PTR.withName("destroy"),
            U32.withName("timeout_ms"), U32.withName("max_output_chars"), U32.withName("flags"),
            MemoryLayout.paddingLayout(4), PTR.withName("mcp_meta"));
    static final MemoryLayout EXEC_OPTIONS = MemoryLayout.structLayout(
            U32.withName("struct_size"), U32.withName("flags"), U32.withName("limit"), U32.withName("timeout_ms"),
            PTR.withName("approved_ids"), SIZE.withName("approved_count"),
            U32.withName("deadline_ms"), MemoryLayout.paddingLayout(4),
            PTR.withName("run_id"), SIZE.withName("run_id_len"));
    static final MemoryLayout RESULT = MemoryLayout.structLayout(
            SIZE.withName("index"), PTR.withName("id"), SIZE.withName("id_len"),
            PTR.withName("name"), SIZE.withName("name_len"), PTR.withName("content"), SIZE.withName("content_len"),
            U32.withName("outcome"), BOOL.withName("is_error"), MemoryLayout.paddingLayout(3),
            ValueLayout.JAVA_LONG.withName("duration_us"),
            PTR.withName("parts_json"), SIZE.withName("parts_json_len"),
            PTR.withName("structured_json"), SIZE.withName("structured_json_len"));

    static final MemoryLayout RUNTIME_OPTIONS = MemoryLayout.structLayout(
            U32.withName("struct_size"), U32.withName("threads"), U32.withName("keep_alive_ms"));
    static final MemoryLayout EXPORT_OPTIONS = MemoryLayout.structLayout(
            U32.withName("struct_size"), U32.withName("flags"),
            U32.withName("deferred")); // CAPSTAN_EXPORT_DEFERRED_HIDE, as capstan_export_options_init sets it
    static final MemoryLayout SEARCH_OPTIONS = MemoryLayout.structLayout(
            U32.withName("struct_size"), U32.withName("flags"), U32.withName("limit"));
    static final MemoryLayout SEARCH_TOOL_OPTIONS = MemoryLayout.structLayout(
            U32.withName("struct_size"), U32.withName("flags"), U32.withName("limit"), MemoryLayout.paddingLayout(4),
            PTR.withName("name"), PTR.withName("description"));

    static final MemoryLayout STREAM_SINK = MemoryLayout.structLayout(
            U32.withName("struct_size"), MemoryLayout.paddingLayout(4),
            PTR.withName("on_text"), PTR.withName("on_result"), PTR.withName("user_data"));

    static final MemoryLayout MCP_SERVER_OPTIONS = MemoryLayout.structLayout(
            U32.withName("struct_size"), U32.withName("flags"),
            PTR.withName("address"), PTR.withName("bearer_token"), PTR.withName("allowed_origins"),
            PTR.withName("allowed_hosts"), PTR.withName("tools_meta"), PTR.withName("name"),
            U32.withName("max_body_bytes"), U32.withName("call_timeout_ms"), U32.withName("stop_timeout_ms"),
            MemoryLayout.paddingLayout(4));
    static final MemoryLayout MCP_MOUNT_OPTIONS = MemoryLayout.structLayout(
            U32.withName("struct_size"), MemoryLayout.paddingLayout(4),
            PTR.withName("argv"), SIZE.withName("argc"), PTR.withName("env"), SIZE.withName("env_count"),
            PTR.withName("cwd"), PTR.withName("url"), PTR.withName("headers"), SIZE.withName("header_count"),
            PTR.withName("prefix"), U32.withName("connect_timeout_ms"), U32.withName("call_timeout_ms"),
            U32.withName("max_reconnects"), U32.withName("reconnect_backoff_ms"), PTR.withName("protocol_version"),
            // appended in 0.4 (OAuth for HTTP mounts)
            PTR.withName("oauth_authorize"), PTR.withName("oauth_redirect_uri"), PTR.withName("oauth_client_id"),
            PTR.withName("oauth_client_secret"), PTR.withName("oauth_client_metadata_url"), PTR.withName("oauth_scopes"),
            PTR.withName("oauth_tokens_load"), PTR.withName("oauth_tokens_save"), PTR.withName("oauth_user_data"),
            PTR.withName("oauth_destroy"),
            // appended in 0.4 (the host answers a server's input requests)
            PTR.withName("input_answer"), U32.withName("input_methods"), MemoryLayout.paddingLayout(4),
            PTR.withName("input_user_data"), PTR.withName("input_destroy"),
            // appended in 0.4 (grants without a user)
            PTR.withName("oauth_client_key"), PTR.withName("oauth_assertion"), PTR.withName("oauth_idp_issuer"),
            PTR.withName("oauth_idp_token_endpoint"), PTR.withName("oauth_idp_client_id"),
            PTR.withName("oauth_idp_client_secret"),
            // appended in 0.4 (the issuer client credentials are pinned to)
            PTR.withName("oauth_client_issuer"));

    /** An array of NUL-terminated strings in {@code a}. */
    static MemorySegment cstrings(Arena a, List<String> items) {
        MemorySegment arr = a.allocate(PTR, Math.max(1, items.size()));
        for (int i = 0; i < items.size(); i++) arr.setAtIndex(PTR, i, utf8(a, items.get(i)));
        return arr;
    }

    /**
     * A {@code layout} as its CAPSTAN_<STRUCT>_INIT macro gives it at this binding's version:
     * zero, struct_size = this binding's size. So a jar and a library of other versions work
     * together as the header's version-skew rules say (an older struct's missing fields read as
     * zero; a newer one's fields the library does not know are refused if set). The library's
     * capstan_<struct>_init is not called into it: that writes the library's own size, which
     * overruns the struct of a binding older than the library.
     */
    static MemorySegment initStruct(Arena a, MemoryLayout layout) {
        MemorySegment s = a.allocate(layout);
        s.fill((byte) 0);
        s.set(U32, 0, (int) layout.byteSize());
        return s;
    }

    static final MemoryLayout EVENT = MemoryLayout.structLayout(
            U32.withName("kind"), MemoryLayout.paddingLayout(4),
            PTR.withName("tool"), SIZE.withName("tool_len"), PTR.withName("id"), SIZE.withName("id_len"),
            SIZE.withName("index"), U32.withName("outcome"), MemoryLayout.paddingLayout(4),
            ValueLayout.JAVA_LONG.withName("duration_us"),
            // appended in 0.4 (CAPSTAN_EVENT_PROGRESS): set for PROGRESS only
            ValueLayout.JAVA_DOUBLE.withName("progress"), ValueLayout.JAVA_DOUBLE.withName("total"),
            PTR.withName("message"), SIZE.withName("message_len"),
            // appended in 0.4 (CAPSTAN_EVENT_LOG): set for LOG only; the struct ends padded to 8
            U32.withName("level"), MemoryLayout.paddingLayout(4));

    static long off(MemoryLayout s, String field) {
        return s.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    /** Frees batches and streams the user did not close, once unreachable (one daemon thread). */
    static final java.lang.ref.Cleaner CLEANER = java.lang.ref.Cleaner.create();
    /** How many native objects the Cleaner freed (tests). */
    static final AtomicLong CLEANED = new AtomicLong();

    // ---- user_data: a number naming a Java object in this table ----
    private static final ConcurrentHashMap<Long, Object> HANDLES = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT = new AtomicLong(1);

    static MemorySegment keep(Object o) {
        long id = NEXT.getAndIncrement();
        HANDLES.put(id, o);
        return MemorySegment.ofAddress(id);
    }

    static Object get(MemorySegment userData) {
        return HANDLES.get(userData.address());
    }

    static void drop(MemorySegment userData) {
        HANDLES.remove(userData.address());
    }

    static int liveHandles() {
        return HANDLES.size();
    }

    // ---- upcall stubs: every one catches everything (an exception must never reach C) ----
    static final MemorySegment TOOL_STUB;
    static final MemorySegment DESTROY_STUB;
    static final MemorySegment RESULT_STUB;
    static final MemorySegment APPROVER_STUB;
    static final MemorySegment THREAD_START_STUB;
    static final MemorySegment TEXT_STUB;
    static final MemorySegment EVENT_STUB;
    static final MemorySegment NOTIFY_STUB;
    static final MemorySegment AUTHORIZE_STUB;
    static final MemorySegment TOKENS_LOAD_STUB;
    static final MemorySegment TOKENS_SAVE_STUB;
    static final MemorySegment INPUT_STUB;
    static final MemorySegment ASSERTION_STUB;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            MethodType two = MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class);
            MethodType one = MethodType.methodType(void.class, MemorySegment.class);
            TOOL_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onTool", two),
                    FunctionDescriptor.ofVoid(PTR, PTR), Arena.global());
            DESTROY_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onDestroy", one),
                    FunctionDescriptor.ofVoid(PTR), Arena.global());
            RESULT_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onResult", two),
                    FunctionDescriptor.ofVoid(PTR, PTR.withTargetLayout(RESULT)), Arena.global());
            APPROVER_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onApproval", two),
                    FunctionDescriptor.ofVoid(PTR, PTR), Arena.global());
            THREAD_START_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onThreadStart", one),
                    FunctionDescriptor.ofVoid(PTR), Arena.global());
            TEXT_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onText",
                    MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.ofVoid(PTR, PTR, SIZE), Arena.global());
            EVENT_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onEvent", two),
                    FunctionDescriptor.ofVoid(PTR, PTR.withTargetLayout(EVENT)), Arena.global());
            NOTIFY_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onNotify", one),
                    FunctionDescriptor.ofVoid(PTR), Arena.global());
            AUTHORIZE_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onAuthorize", MethodType.methodType(
                    long.class, MemorySegment.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.of(SIZE, PTR, PTR, PTR, SIZE), Arena.global());
            TOKENS_LOAD_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onTokensLoad", MethodType.methodType(
                    long.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.of(SIZE, PTR, PTR, SIZE), Arena.global());
            TOKENS_SAVE_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onTokensSave", MethodType.methodType(
                    void.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.ofVoid(PTR, PTR, SIZE), Arena.global());
            INPUT_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onInput", MethodType.methodType(long.class,
                    MemorySegment.class, MemorySegment.class, MemorySegment.class, MemorySegment.class, long.class,
                    MemorySegment.class, long.class)),
                    FunctionDescriptor.of(SIZE, PTR, PTR, PTR, PTR, SIZE, PTR, SIZE), Arena.global());
            ASSERTION_STUB = LINKER.upcallStub(l.findStatic(Native.class, "onAssertion", MethodType.methodType(
                    long.class, MemorySegment.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.of(SIZE, PTR, PTR, PTR, SIZE), Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        checkVersion();
        nameThreads();
    }

    private static void checkVersion() {
        int v;
        try {
            v = (int) version_number.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        if (v / 1000 != 4) { // this binding speaks ABI 0.4.x
            throw new UnsatisfiedLinkError(LIB_SOURCE + " is capstan " + v / 1_000_000 + "." + (v / 1000) % 1000
                    + ", this binding needs 0.4");
        }
    }

    private static final AtomicLong THREAD_SEQ = new AtomicLong();

    /** Names capstan's pool and MCP threads "capstan-N" when they first run Java code. */
    private static void nameThreads() {
        try {
            int st = (int) runtime_set_thread_hooks.invokeExact(THREAD_START_STUB, MemorySegment.NULL,
                    MemorySegment.NULL, MemorySegment.NULL);
            check(st);
        } catch (Throwable t) {
            throw new ExceptionInInitializerError(t);
        }
        // Once the JVM is exiting no capstan thread enters it through a hook any more (as the Python
        // binding does at interpreter exit); tools and callbacks still run until the process ends.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                int st = (int) runtime_abandon_thread_hooks.invokeExact(1000);
            } catch (Throwable ignored) {
                // exiting anyway
            }
        }, "capstan-exit"));
    }

    static void onThreadStart(MemorySegment userData) {
        try {
            Thread.currentThread().setName("capstan-" + THREAD_SEQ.incrementAndGet());
        } catch (Throwable t) {
            // a hook must return; naming is cosmetic
        }
    }

    /** How deep this thread is inside capstan's callbacks (tool, result, approval, event, text). */
    private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    static boolean inCallback() {
        return DEPTH.get()[0] > 0;
    }

    static void onTool(MemorySegment userData, MemorySegment call) {
        int[] depth = DEPTH.get();
        depth[0]++;
        try {
            onTool0(userData, call);
        } finally {
            depth[0]--;
        }
    }

    private static void onTool0(MemorySegment userData, MemorySegment call) {
        Object o = get(userData);
        try {
            if (o instanceof ToolEntry t) {
                t.run(call);
            } else {
                fail(call, "capstan (Java): this tool is gone");
            }
        } catch (Throwable e) {
            // ToolEntry.run catches the tool's exceptions; this is the last guard (OOM, etc.)
            try {
                fail(call, "tool raised " + e);
            } catch (Throwable ignored) {
                // nothing may cross into C
            }
        }
    }

    static void onNotify(MemorySegment userData) {
        try {
            if (get(userData) instanceof Runnable r) r.run();
        } catch (Throwable ignored) {
            // a notifier's exception must not reach capstan
        }
    }

    /** Copies {@code text} into {@code buf} ({@code cap} bytes); its length, or 0 if null, empty or too long. */
    private static long copyOut(String text, MemorySegment buf, long cap) {
        if (text == null) return 0;
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0 || b.length > cap) return 0;
        MemorySegment.copy(MemorySegment.ofArray(b), 0, buf.reinterpret(cap), 0, b.length);
        return b.length;
    }

    /** capstan_mcp_authorize_fn: the mount's {@link McpMount.Authorizer}; an exception or null refuses. */
    static long onAuthorize(MemorySegment userData, MemorySegment url, MemorySegment redirect, long cap) {
        try {
            if (!(get(userData) instanceof McpMount.OAuth o) || o.authorizer() == null) return 0;
            String u = url.reinterpret(Long.MAX_VALUE).getString(0);
            return copyOut(o.authorizer().authorize(u), redirect, cap);
        } catch (Throwable t) {
            return 0;
        }
    }

    /** capstan_mcp_assertion_fn: the mount's {@link McpMount.Assertion}; an exception or null refuses. */
    static long onAssertion(MemorySegment userData, MemorySegment audience, MemorySegment out, long cap) {
        try {
            if (!(get(userData) instanceof McpMount.OAuth o) || o.assertion() == null) return 0;
            String aud = audience.address() == 0 ? "" : audience.reinterpret(Long.MAX_VALUE).getString(0);
            return copyOut(o.assertion().assertion(aud), out, cap);
        } catch (Throwable t) {
            return 0;
        }
    }

    /** capstan_mcp_tokens_load_fn: the mount's {@link McpMount.TokenStore#load()}; an exception loads nothing. */
    static long onTokensLoad(MemorySegment userData, MemorySegment buf, long cap) {
        try {
            if (!(get(userData) instanceof McpMount.OAuth o) || o.tokens() == null) return 0;
            return copyOut(o.tokens().load(), buf, cap);
        } catch (Throwable t) {
            return 0;
        }
    }

    /** capstan_mcp_tokens_save_fn: the mount's {@link McpMount.TokenStore#save(String)} (null: forget). */
    static void onTokensSave(MemorySegment userData, MemorySegment json, long len) {
        try {
            if (!(get(userData) instanceof McpMount.OAuth o) || o.tokens() == null) return;
            o.tokens().save(len == 0 ? null : text(json, len));
        } catch (Throwable t) {
            // a store that failed keeps what it had; the mount goes on
        }
    }

    /**
     * capstan_mcp_input_fn: the mount's {@link McpMount.InputAnswerer}; null, an exception or an answer Jackson
     * cannot write gives no answer (the call fails as a tool error saying so).
     */
    static long onInput(MemorySegment userData, MemorySegment tool, MemorySegment method, MemorySegment params,
            long paramsLen, MemorySegment answer, long cap) {
        try {
            if (!(get(userData) instanceof McpMount.Input in)) return 0;
            String t = tool.address() == 0 ? null : tool.reinterpret(Long.MAX_VALUE).getString(0);
            String m = method.address() == 0 ? "" : method.reinterpret(Long.MAX_VALUE).getString(0);
            String p = paramsLen == 0 ? "{}" : text(params, paramsLen);
            Object result = in.answerer().answer(t, m, Json.read(p));
            if (result instanceof java.util.concurrent.CompletionStage<?> later) {
                // capstan stops waiting once the call ends; an hour bounds this thread, as capstan's own wait
                result = later.toCompletableFuture().get(1, java.util.concurrent.TimeUnit.HOURS);
            }
            if (result == null || result instanceof JsonNode n && (n.isNull() || n.isMissingNode())) return 0;
            return copyOut(Json.write(result), answer, cap);
        } catch (Throwable e) {
            return 0;
        }
    }

    static void onDestroy(MemorySegment userData) {
        try {
            drop(userData);
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }

    static void onEvent(MemorySegment userData, MemorySegment event) {
        int[] depth = DEPTH.get();
        depth[0]++;
        try {
            onEvent0(userData, event);
        } finally {
            depth[0]--;
        }
    }

    private static void onEvent0(MemorySegment userData, MemorySegment event) {
        try {
            if (get(userData) instanceof Registry.EventEntry h) {
                MemorySegment e = event.reinterpret(EVENT.byteSize());
                ToolEvent.Kind kind = ToolEvent.Kind.of(e.get(U32, off(EVENT, "kind")));
                if (kind == null) return; // a kind this binding does not know: ignored, as the header asks
                boolean progress = kind == ToolEvent.Kind.PROGRESS;
                boolean log = kind == ToolEvent.Kind.LOG;
                MemorySegment message = progress || log ? e.get(PTR, off(EVENT, "message")) : MemorySegment.NULL;
                h.fire(new ToolEvent(kind,
                        text(e.get(PTR, off(EVENT, "tool")), e.get(SIZE, off(EVENT, "tool_len"))),
                        text(e.get(PTR, off(EVENT, "id")), e.get(SIZE, off(EVENT, "id_len"))),
                        (int) e.get(SIZE, off(EVENT, "index")), Outcome.of(e.get(U32, off(EVENT, "outcome"))),
                        e.get(ValueLayout.JAVA_LONG, off(EVENT, "duration_us")),
                        progress ? e.get(ValueLayout.JAVA_DOUBLE, off(EVENT, "progress")) : 0,
                        progress ? e.get(ValueLayout.JAVA_DOUBLE, off(EVENT, "total")) : 0,
                        message.equals(MemorySegment.NULL) ? (log ? "" : null)
                                : text(message, e.get(SIZE, off(EVENT, "message_len"))),
                        log ? LogLevel.of(e.get(U32, off(EVENT, "level"))) : null));
            }
        } catch (Throwable ignored) {
            // EventEntry.fire catches the hook's exceptions; nothing may cross into C
        }
    }

    static void onText(MemorySegment userData, MemorySegment text, long len) {
        int[] depth = DEPTH.get();
        depth[0]++;
        try {
            onText0(userData, text, len);
        } finally {
            depth[0]--;
        }
    }

    private static void onText0(MemorySegment userData, MemorySegment text, long len) {
        try {
            if (get(userData) instanceof Stream.Sink s) s.text(text(text, len));
        } catch (Throwable ignored) {
            // Stream.text catches the listener's exceptions; nothing may cross into C
        }
    }

    static void onResult(MemorySegment userData, MemorySegment result) {
        int[] depth = DEPTH.get();
        depth[0]++;
        try {
            onResult0(userData, result);
        } finally {
            depth[0]--;
        }
    }

    private static void onResult0(MemorySegment userData, MemorySegment result) {
        try {
            Object o = get(userData);
            if (o instanceof Batch b) {
                b.deliver(result.address() == 0 ? null : readResult(result));
            } else if (o instanceof Stream.Sink s && result.address() != 0) {
                s.result(readResult(result));
            }
        } catch (Throwable ignored) {
            // Batch.deliver catches listener exceptions; nothing may cross into C
        }
    }

    static void onApproval(MemorySegment userData, MemorySegment approval) {
        int[] depth = DEPTH.get();
        depth[0]++;
        try {
            onApproval0(userData, approval);
        } finally {
            depth[0]--;
        }
    }

    private static void onApproval0(MemorySegment userData, MemorySegment approval) {
        try {
            if (get(userData) instanceof Registry.ApproverEntry a) {
                a.ask(approval);
            } else {
                approvalDecide(approval, false, "no approver");
            }
        } catch (Throwable e) {
            try {
                approvalDecide(approval, false, "approver raised " + e);
            } catch (Throwable ignored) {
                // nothing may cross into C
            }
        }
    }

    static ToolResult readResult(MemorySegment r) {
        MemorySegment s = r.reinterpret(RESULT.byteSize());
        return new ToolResult(
                (int) s.get(SIZE, off(RESULT, "index")),
                text(s.get(PTR, off(RESULT, "id")), s.get(SIZE, off(RESULT, "id_len"))),
                text(s.get(PTR, off(RESULT, "name")), s.get(SIZE, off(RESULT, "name_len"))),
                text(s.get(PTR, off(RESULT, "content")), s.get(SIZE, off(RESULT, "content_len"))),
                s.get(BOOL, off(RESULT, "is_error")),
                Outcome.of(s.get(U32, off(RESULT, "outcome"))),
                s.get(ValueLayout.JAVA_LONG, off(RESULT, "duration_us")),
                text(s.get(PTR, off(RESULT, "parts_json")), s.get(SIZE, off(RESULT, "parts_json_len"))),
                text(s.get(PTR, off(RESULT, "structured_json")), s.get(SIZE, off(RESULT, "structured_json_len"))));
    }

    // ---- helpers ----
    static String text(MemorySegment p, long len) {
        if (p.address() == 0) return null;
        if (len == 0) return "";
        return new String(p.reinterpret(len).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    /** A (ptr, len) getter such as capstan_call_arguments, read as a String (null if NULL). */
    static String lent(MethodHandle getter, MemorySegment obj) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment len = a.allocate(SIZE);
            MemorySegment p = (MemorySegment) getter.invokeExact(obj, len);
            return text(p, len.get(SIZE, 0));
        }
    }

    /** Takes a library-allocated char* out of {@code slot}, copies it and frees it. */
    static String takeString(MemorySegment slot, MemorySegment lenSlot) throws Throwable {
        MemorySegment p = slot.get(PTR, 0);
        if (p.address() == 0) return null;
        try {
            return text(p, lenSlot.get(SIZE, 0));
        } finally {
            string_free.invokeExact(p);
        }
    }

    static MemorySegment utf8(Arena a, String s) {
        return a.allocateFrom(s); // NUL-terminated UTF-8
    }

    static long utf8Len(MemorySegment nts) {
        return nts.byteSize() - 1;
    }

    static String statusName(int status) {
        try {
            MemorySegment p = (MemorySegment) status_name.invokeExact(status);
            return p.reinterpret(Long.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            return "CAPSTAN_UNKNOWN_STATUS";
        }
    }

    /** Throws the thread's last capstan error as a CapstanException when {@code status} is not OK. */
    static void check(int status) {
        if (status != OK) throw lastError(status);
    }

    static CapstanException lastError(int status) {
        String json = null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(PTR);
            MemorySegment len = a.allocate(SIZE);
            int st = (int) error_json.invokeExact(out, len);
            if (st == OK) json = takeString(out, len);
        } catch (Throwable ignored) {
            // fall back to the status alone
        }
        return CapstanException.fromJson(status, json);
    }

    static void fail(MemorySegment call, String message) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = utf8(a, message);
            int st = (int) call_fail.invokeExact(call, m, utf8Len(m));
        }
    }

    static void approvalDecide(MemorySegment approval, boolean approve, String reason) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment r = reason == null ? MemorySegment.NULL : utf8(a, reason);
            long len = reason == null ? 0 : utf8Len(r);
            int st = (int) approval_decide.invokeExact(approval, approve, r, len);
            check(st);
        }
    }

    static List<String> strings(List<String> in) {
        return in == null ? List.of() : new ArrayList<>(in);
    }
}
