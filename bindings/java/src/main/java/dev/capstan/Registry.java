package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A set of tools and the runtime that runs their calls ({@code capstan_registry}). Thread-safe: any number
 * of threads may use one at once. {@link #close()} frees it: calls not started are cancelled, and it waits
 * until no callback of this registry runs any more. Do not close a registry from inside one of its own
 * tools while another thread executes on it.
 */
public final class Registry implements AutoCloseable {
    /** Registry flags ({@code CAPSTAN_REGISTRY_*}). */
    public enum Flag {
        /** Coerce strings to number/integer/boolean where the schema asks for those. */
        COERCE(1),
        /** Refuse a schema whose {@code default} fails its own subschema. */
        STRICT_DEFAULTS(2);

        final int bit;

        Flag(int bit) {
            this.bit = bit;
        }
    }

    // Guards reg against capstan_registry_free racing a use: every use counts itself in `users`;
    // close() marks the registry closing (new uses fail at once, so a nested execute inside a tool
    // cannot block behind a waiting close) and frees it once the count is zero.
    private final java.util.concurrent.atomic.AtomicInteger users = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean closing;
    private volatile MemorySegment reg;
    /** Quick tools' handlers by name ({@link ToolOptions#quick()}): run here, through host batches. */
    private final java.util.concurrent.ConcurrentHashMap<String, ToolEntry> quick =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Tools whose calls may wait for someone (a pump, an approver): their batches run cancellably. */
    private final java.util.Set<String> mayWait = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Host batches running now, which close() cancels (their calls not started end cancelled). */
    private final InFlight inFlight = new InFlight();

    public Registry(Flag... flags) {
        int bits = 0;
        for (Flag f : flags) bits |= f.bit;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment opts = a.allocate(8);
            opts.set(Native.U32, 0, 8);
            opts.set(Native.U32, 4, bits);
            MemorySegment out = a.allocate(Native.PTR);
            Native.check((int) Native.registry_new.invokeExact(opts, out));
            reg = out.get(Native.PTR, 0);
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The library's version, e.g. {@code "0.4.0"}, and where it was loaded from. */
    public static String libraryVersion() {
        try {
            MemorySegment p = (MemorySegment) Native.version_string.invokeExact();
            return p.reinterpret(64).getString(0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Where the binding loaded libcapstan from (a path, or a name the platform resolved). */
    public static String librarySource() {
        return Native.LIB_SOURCE;
    }

    interface Body<T> {
        T run(MemorySegment reg, Arena a) throws Throwable;
    }

    private <T> T with(Body<T> body) {
        return withoutArena(r -> {
            try (Arena a = Arena.ofConfined()) {
                return body.run(r, a);
            }
        });
    }

    interface NativeBody<T> {
        T run(MemorySegment reg) throws Throwable;
    }

    /** As {@link #with}, for a body that brings its own native memory (the quick path: no arena per call). */
    private <T> T withoutArena(NativeBody<T> body) {
        users.incrementAndGet();
        try {
            MemorySegment r = reg;
            if (closing || r == null) throw new IllegalStateException("registry is closed");
            return body.run(r);
        } catch (CapstanException | IllegalStateException | IllegalArgumentException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            if (users.decrementAndGet() == 0 && closing) {
                synchronized (users) {
                    users.notifyAll();
                }
            }
        }
    }

    // ---- tools ----

    /**
     * Registers a tool with a JSON Schema for its arguments (null: any object). A name already registered
     * throws {@link CapstanException} INVALID_ARGUMENT naming it, unless {@link ToolOptions#withReplace()}.
     */
    public Registry tool(String name, String description, String parametersSchema, ToolHandler handler) {
        return tool(name, description, parametersSchema, ToolOptions.DEFAULTS, handler);
    }

    /** As {@link #tool(String, String, String, ToolHandler)}, with a timeout, output cap or flags. */
    public Registry tool(String name, String description, String parametersSchema, ToolOptions options,
            ToolHandler handler) {
        if (handler == null) throw new IllegalArgumentException("tool " + name + ": handler is null");
        return with((r, a) -> {
            MemorySegment def = Native.initStruct(a, Native.TOOL_DEF);
            def.set(Native.PTR, Native.off(Native.TOOL_DEF, "name"), Native.utf8(a, name));
            if (description != null) {
                def.set(Native.PTR, Native.off(Native.TOOL_DEF, "description"), Native.utf8(a, description));
            }
            if (parametersSchema != null) {
                def.set(Native.PTR, Native.off(Native.TOOL_DEF, "parameters"), Native.utf8(a, parametersSchema));
            }
            def.set(Native.PTR, Native.off(Native.TOOL_DEF, "callback"), Native.TOOL_STUB);
            ToolEntry entry = new ToolEntry(handler);
            def.set(Native.PTR, Native.off(Native.TOOL_DEF, "user_data"), Native.keep(entry));
            def.set(Native.PTR, Native.off(Native.TOOL_DEF, "destroy"), Native.DESTROY_STUB);
            def.set(Native.U32, Native.off(Native.TOOL_DEF, "timeout_ms"), options.timeoutMs());
            def.set(Native.U32, Native.off(Native.TOOL_DEF, "max_output_chars"), options.maxOutputChars());
            def.set(Native.U32, Native.off(Native.TOOL_DEF, "flags"), options.flags());
            if (options.mcpMeta() != null) {
                def.set(Native.PTR, Native.off(Native.TOOL_DEF, "mcp_meta"), Native.utf8(a, options.mcpMeta()));
            }
            // on failure capstan has already run destroy, which dropped the handle
            Native.check((int) Native.registry_add_tool.invokeExact(r, def));
            if (options.quick()) quick.put(name, entry);
            else quick.remove(name);
            if (options.mainThread() || options.requiresApproval()) mayWait.add(name);
            else mayWait.remove(name);
            return this;
        });
    }

    /** Registers an asynchronous tool: the call completes when the returned stage does. */
    public Registry asyncTool(String name, String description, String parametersSchema, AsyncToolHandler handler) {
        return asyncTool(name, description, parametersSchema, ToolOptions.DEFAULTS, handler);
    }

    public Registry asyncTool(String name, String description, String parametersSchema, ToolOptions options,
            AsyncToolHandler handler) {
        if (handler == null) throw new IllegalArgumentException("tool " + name + ": handler is null");
        return tool(name, description, parametersSchema, options, handler::call);
    }

    /**
     * Registers a tool whose arguments are a record: the schema is generated from its components
     * ({@link Schemas#of}), and the handler gets the arguments bound to it by Jackson.
     */
    public <R extends Record> Registry recordTool(String name, String description, Class<R> arguments,
            Function<? super R, ?> handler) {
        return recordTool(name, description, arguments, ToolOptions.DEFAULTS, handler);
    }

    public <R extends Record> Registry recordTool(String name, String description, Class<R> arguments,
            ToolOptions options, Function<? super R, ?> handler) {
        return tool(name, description, Schemas.of(arguments), options,
                call -> handler.apply(call.argumentsAs(arguments)));
    }

    /**
     * Registers every method of {@code target} annotated {@link Tool}: the schema comes from the method's
     * parameters (compile with {@code -parameters} for their names, or name them with {@link Param}).
     * A static method's class may be passed as {@code target}.
     */
    public Registry register(Object target) {
        Class<?> cls = target instanceof Class<?> c ? c : target.getClass();
        Object receiver = target instanceof Class<?> ? null : target;
        int n = 0;
        for (Method m : cls.getMethods()) {
            Tool t = m.getAnnotation(Tool.class);
            if (t == null) continue;
            MethodTool mt = new MethodTool(m, receiver);
            ToolOptions o = ToolOptions.DEFAULTS.withTimeoutMs(t.timeoutMs()).withRequiresApproval(t.requiresApproval())
                    .withSerial(t.serial()).withQuick(t.quick()).withIdempotent(t.idempotent());
            if (t.replace()) o = o.withReplace();
            tool(t.name().isEmpty() ? m.getName() : t.name(), t.description(), mt.schema(), o, mt);
            n++;
        }
        if (n == 0) throw new IllegalArgumentException(cls.getName() + " has no public method annotated @Tool");
        return this;
    }

    /** Removes a tool; its calls in flight finish. @throws CapstanException NOT_FOUND */
    public void removeTool(String name) {
        with((r, a) -> {
            MemorySegment n = Native.utf8(a, name);
            Native.check((int) Native.registry_remove_tool.invokeExact(r, n, Native.utf8Len(n)));
            quick.remove(name);
            mayWait.remove(name);
            return null;
        });
    }

    /** The tools as format {@code fmt}'s API takes them (sorted by name). */
    public String toolsJson(Format fmt) {
        return with((r, a) -> {
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_tools_json.invokeExact(r, fmt.code, MemorySegment.NULL, out, len,
                    MemorySegment.NULL, MemorySegment.NULL));
            return Native.takeString(out, len);
        });
    }

    /** Export flags ({@code CAPSTAN_EXPORT_*}) of {@link #toolsJson(Format, ExportFlag...)}. */
    public enum ExportFlag {
        /**
         * OpenAI strict mode: every property required, optional ones nullable, {@code additionalProperties:
         * false}, no {@code default}. Schemas that cannot be made strict are exported as they are and listed
         * in the report. Run the calls with {@link ExecOptions#withStrictNulls} then.
         */
        STRICT(1),
        /**
         * Gemini: lower schemas to the OpenAPI-subset {@code parameters} field (local {@code $ref}s inlined,
         * unsupported keywords dropped and reported) instead of {@code parametersJsonSchema}.
         */
        GEMINI_LOWER(2);

        final int bit;

        ExportFlag(int bit) {
            this.bit = bit;
        }
    }

    /**
     * The tools exported with options, and capstan's report of what it changed.
     *
     * @param toolsJson the tools as the format's API takes them
     * @param reportJson {@code [{"tool","pointer","message"}]}: what was dropped or could not be made strict,
     *     and names the format would refuse
     */
    public record Export(String toolsJson, String reportJson) {}

    /** The tools as format {@code fmt}'s API takes them, with export flags (strict mode, Gemini lowering). */
    public String toolsJson(Format fmt, ExportFlag... flags) {
        return exportTools(fmt, flags).toolsJson();
    }

    /** As {@link #toolsJson(Format, ExportFlag...)}, with the report of what the export changed or dropped. */
    public Export exportTools(Format fmt, ExportFlag... flags) {
        int bits = 0;
        for (ExportFlag f : flags) bits |= f.bit;
        int exportFlags = bits;
        return with((r, a) -> {
            MemorySegment opts = Native.initStruct(a, Native.EXPORT_OPTIONS);
            opts.set(Native.U32, Native.off(Native.EXPORT_OPTIONS, "flags"), exportFlags);
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            MemorySegment rep = a.allocate(Native.PTR);
            MemorySegment repLen = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_tools_json.invokeExact(r, fmt.code, opts, out, len, rep, repLen));
            String tools = Native.takeString(out, len);
            String report = Native.takeString(rep, repLen);
            return new Export(tools, report == null ? "[]" : report);
        });
    }

    /**
     * Which registered names each provider accepts:
     * {@code [{"name","openai","anthropic","gemini","mcp","problems":[...]}]}.
     */
    public String namesJson() {
        return with((r, a) -> {
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_names_json.invokeExact(r, out, len));
            return Native.takeString(out, len);
        });
    }

    /**
     * Checks one call without running it: looks the tool up and validates the arguments as a batch would
     * before calling the tool, on this thread (no callback, thread or timer). For hosts that run the tool
     * themselves. Approval, timeouts and output caps are then the host's to apply.
     *
     * @param argumentsJson the arguments as the model sent them (an object's JSON text; empty: {@code {}})
     * @param strictNulls drop the nulls OpenAI strict mode sends for optional arguments first
     */
    public CallCheck checkCall(String name, String argumentsJson, boolean strictNulls) {
        return with((r, a) -> {
            MemorySegment n = Native.utf8(a, name);
            MemorySegment args = Native.utf8(a, argumentsJson == null ? "" : argumentsJson);
            MemorySegment outcome = a.allocate(Native.U32);
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_check_call.invokeExact(r, n, Native.utf8Len(n), args,
                    Native.utf8Len(args), strictNulls ? 4 : 0, outcome, out, len));
            return new CallCheck(Outcome.of(outcome.get(Native.U32, 0)), Native.takeString(out, len));
        });
    }

    public CallCheck checkCall(String name, String argumentsJson) {
        return checkCall(name, argumentsJson, false);
    }

    // ---- tool search ----

    /**
     * The registered tools that best match {@code query}, best first ({@code capstan_registry_search_json}):
     * words ranked by BM25 over names, descriptions and parameter names and descriptions, or with
     * {@code regex} a regular expression (Rust syntax, {@code (?i)} for case-insensitive), name matches first.
     *
     * @param limit at most this many, 1 to 100
     * @throws CapstanException INVALID_ARGUMENT for an empty or too long query (past 1024 bytes), a limit out
     *     of range or a pattern that does not compile (the message says which)
     */
    public List<SearchHit> search(String query, int limit, boolean regex) {
        JsonNode n = Json.read(searchJson(query, limit, regex));
        List<SearchHit> out = new java.util.ArrayList<>();
        for (JsonNode h : n.path("results")) {
            out.add(new SearchHit(h.path("name").asText(), h.path("description").asText(), h.path("score").asDouble()));
        }
        return List.copyOf(out);
    }

    /** {@link #search(String, int, boolean)} for words, 5 results. */
    public List<SearchHit> search(String query) {
        return search(query, 5, false);
    }

    /** The search as capstan writes it: {@code {"query","mode","results":[{"name","description","score"}]}}. */
    public String searchJson(String query, int limit, boolean regex) {
        if (limit < 1 || limit > 100) {
            throw new IllegalArgumentException("search limit must be 1 to 100, not " + limit);
        }
        return with((r, a) -> {
            MemorySegment opts = Native.initStruct(a, Native.SEARCH_OPTIONS);
            opts.set(Native.U32, Native.off(Native.SEARCH_OPTIONS, "flags"), regex ? 1 : 0);
            opts.set(Native.U32, Native.off(Native.SEARCH_OPTIONS, "limit"), limit);
            MemorySegment q = Native.utf8(a, query);
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_search_json.invokeExact(r, q, Native.utf8Len(q), opts, out, len));
            return Native.takeString(out, len);
        });
    }

    /**
     * Registers capstan's built-in search tool (replacing a tool of its name): the model calls it with
     * {@code {"query": "..."}} to find tools it was not shown. Every deferred tool
     * ({@link ToolOptions#withDeferred}) it lists is loaded: exported by {@link #toolsJson} from then on, so
     * the model sees it on its next request. {@link #unloadTools()} forgets what was loaded.
     *
     * @throws CapstanException INVALID_ARGUMENT (limit past 100), INVALID_NAME
     */
    public Registry addSearchTool(SearchToolOptions options) {
        return with((r, a) -> {
            MemorySegment o = Native.initStruct(a, Native.SEARCH_TOOL_OPTIONS);
            o.set(Native.U32, Native.off(Native.SEARCH_TOOL_OPTIONS, "flags"), options.regex() ? 1 : 0);
            o.set(Native.U32, Native.off(Native.SEARCH_TOOL_OPTIONS, "limit"), options.limit());
            if (options.name() != null) {
                o.set(Native.PTR, Native.off(Native.SEARCH_TOOL_OPTIONS, "name"), Native.utf8(a, options.name()));
            }
            if (options.description() != null) {
                o.set(Native.PTR, Native.off(Native.SEARCH_TOOL_OPTIONS, "description"),
                        Native.utf8(a, options.description()));
            }
            Native.check((int) Native.registry_add_search_tool.invokeExact(r, o));
            return this;
        });
    }

    public Registry addSearchTool() {
        return addSearchTool(SearchToolOptions.DEFAULTS);
    }

    /** Forgets the tools the search tool loaded: deferred tools leave the exports again (a new conversation). */
    public void unloadTools() {
        with((r, a) -> {
            Native.check((int) Native.registry_unload_tools.invokeExact(r));
            return null;
        });
    }

    // ---- main thread ----

    /**
     * Runs the main-thread tools ({@link ToolOptions#withMainThread}) queued on this registry, on this
     * thread, for about {@code budgetMs} (at least one call if any is queued); returns how many ran. Call it
     * from your main loop (a UI toolkit's event thread, a game frame). Every thread that pumped counts as a
     * main thread from then on: when it waits on a batch ({@link #execute}, {@link #runTurn},
     * {@link Batch#await}) it runs that batch's main-thread calls itself. Main-thread calls submitted from
     * other threads wait for a pump (bound that wait with {@link ExecOptions#withDeadlineMs}).
     */
    public int pump(int budgetMs) {
        return with((r, a) -> (int) Math.min(Integer.MAX_VALUE, (long) Native.registry_pump.invokeExact(r, budgetMs)));
    }

    /**
     * Sets (null: removes) the wake-up of an event-loop host: {@code notify} runs, on any capstan thread, when
     * a main-thread call waits for {@link #pump} (or a polled result is queued). It must be quick and must
     * not call into capstan: post a task to your loop (e.g. {@code SwingUtilities.invokeLater(() ->
     * reg.pump(5))}), nothing more; its exceptions are dropped.
     */
    public void setNotify(Runnable notify) {
        with((r, a) -> {
            if (notify == null) {
                Native.check((int) Native.registry_set_notify.invokeExact(r, MemorySegment.NULL, MemorySegment.NULL,
                        MemorySegment.NULL));
            } else {
                Native.check((int) Native.registry_set_notify.invokeExact(r, Native.NOTIFY_STUB, Native.keep(notify),
                        Native.DESTROY_STUB));
            }
            return null;
        });
    }

    /**
     * A file descriptor that becomes readable when a main-thread call waits for {@link #pump} (Linux: an
     * eventfd; macOS/BSD: a pipe). Owned by the registry: do not close it. For hosts with their own
     * poll/epoll loop (through FFM or a native selector). @throws CapstanException UNSUPPORTED on Windows
     */
    public int wakeFd() {
        return with((r, a) -> {
            MemorySegment out = a.allocate(Native.U32);
            Native.check((int) Native.registry_wake_fd.invokeExact(r, out));
            return out.get(Native.U32, 0);
        });
    }

    /**
     * Makes the registry use {@code journal} (null: none) for every batch run with a run id
     * ({@link ExecOptions#withRunId}), from the next batch on (docs/durable-calls.md): a call with a completed
     * record is answered from it without running its tool ({@link ToolEvent.Kind#REPLAYED}); one whose tool,
     * schema or arguments changed fails naming what changed; one that started in an earlier process and never
     * completed runs again if its tool is idempotent ({@link ToolOptions#withIdempotent}), else fails with
     * content beginning "Outcome unknown:". With {@code replay} no tool runs at all and nothing is written: a
     * call missing from the journal fails naming it. @throws IllegalStateException if the journal is closed
     */
    public void setJournal(Journal journal, boolean replay) {
        with((r, a) -> {
            Journal.attach(r, journal, replay);
            return null;
        });
    }

    /** Per-tool statistics JSON ({@code capstan_registry_stats_json}). */
    public String statsJson() {
        return with((r, a) -> {
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_stats_json.invokeExact(r, out, len));
            return Native.takeString(out, len);
        });
    }

    // ---- running calls ----

    /**
     * Runs normalized calls ({@code {"id","name","arguments"}} or an array of them) and blocks until each
     * has its result; returns the results JSON. Tool failures, bad arguments, unknown tools and timeouts
     * are results; INVALID_CALLS only for malformed {@code callsJson}.
     */
    public String executeJson(String callsJson, ExecOptions options) {
        return run(callsJson.getBytes(StandardCharsets.UTF_8), options, HostBatch.TEXT);
    }

    /** Runs the calls (UTF-8 JSON); the results JSON read by {@code results} from its bytes (no String between). */
    private <T> T run(byte[] calls, ExecOptions options, HostBatch.Results<T> results) {
        if (!quick.isEmpty() || !mayWait.isEmpty()) {
            return withoutArena(r -> HostBatch.execute(r, calls, options, quick, inFlight, () -> closing, results));
        }
        return with((r, a) -> {
            MemorySegment c = a.allocate(Math.max(1, calls.length));
            MemorySegment.copy(calls, 0, c, ValueLayout.JAVA_BYTE, 0, calls.length);
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_execute.invokeExact(r, c, (long) calls.length, options.toNative(a),
                    out, len));
            return HostBatch.take(out, len, results);
        });
    }

    public String executeJson(String callsJson) {
        return executeJson(callsJson, ExecOptions.DEFAULTS);
    }

    /** {@link #executeJson} read into results, in call order. */
    public List<ToolResult> execute(String callsJson) {
        return execute(callsJson, ExecOptions.DEFAULTS);
    }

    public List<ToolResult> execute(String callsJson, ExecOptions options) {
        return run(callsJson.getBytes(StandardCharsets.UTF_8), options, ToolResult::read);
    }

    public List<ToolResult> execute(List<Call> calls) {
        return execute(calls, ExecOptions.DEFAULTS);
    }

    public List<ToolResult> execute(List<Call> calls, ExecOptions options) {
        return run(Call.write(calls), options, ToolResult::read);
    }

    /**
     * One agent turn: the calls in a model response of format {@code fmt} run (in parallel, per
     * {@code options}), and the returned JSON is what to append to the conversation (format {@code fmt}).
     *
     * @throws CapstanException PROVIDER_ERROR (the response is the provider's error: see
     *     {@link CapstanException#provider()}) or INVALID_RESPONSE; no call runs then
     */
    public String runTurn(Format fmt, String responseJson, ExecOptions options) {
        return runTurn(fmt, responseJson, options, 0);
    }

    /**
     * {@link #runTurn} returning the whole turn ({@code CAPSTAN_EXEC_WHOLE_TURN}): one JSON array, the
     * model's own turn first (thinking blocks and their signatures, reasoning items with
     * {@code encrypted_content}, Gemini thought signatures, unchanged), then the results, as the next
     * request needs them: append it to the history as is.
     *
     * @throws CapstanException as {@link #runTurn}; INVALID_ARGUMENT for a fragment of a response (a
     *     bare block, part or {@code tool_calls} array) or the describe/MCP formats, and no call runs
     */
    public String runWholeTurn(Format fmt, String responseJson, ExecOptions options) {
        return runTurn(fmt, responseJson, options, EXEC_WHOLE_TURN);
    }

    public String runWholeTurn(Format fmt, String responseJson) {
        return runWholeTurn(fmt, responseJson, ExecOptions.DEFAULTS);
    }

    /** {@code CAPSTAN_EXEC_WHOLE_TURN}. */
    private static final int EXEC_WHOLE_TURN = 1 << 5;

    private String runTurn(Format fmt, String responseJson, ExecOptions options, int extraFlags) {
        return with((r, a) -> {
            MemorySegment c = Native.utf8(a, responseJson);
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_run_turn.invokeExact(r, fmt.code, c, Native.utf8Len(c),
                    options.toNative(a, extraFlags), out, len));
            return Native.takeString(out, len);
        });
    }

    public String runTurn(Format fmt, String responseJson) {
        return runTurn(fmt, responseJson, ExecOptions.DEFAULTS);
    }

    /**
     * Starts the calls and returns at once. {@code onResult} (may be null) gets each result on the
     * thread that finished its call; {@link Batch#results()} completes with all of them.
     */
    public Batch submit(String callsJson, ExecOptions options, Consumer<ToolResult> onResult) {
        Batch b = new Batch(onResult);
        return with((r, a) -> {
            MemorySegment c = Native.utf8(a, callsJson);
            MemorySegment out = a.allocate(Native.PTR);
            b.userData = Native.keep(b);
            synchronized (b) {
                int st = (int) Native.batch_submit.invokeExact(r, c, Native.utf8Len(c), options.toNative(a),
                        Native.RESULT_STUB, b.userData, out);
                if (st != Native.OK) {
                    Native.drop(b.userData);
                    throw Native.lastError(st);
                }
                b.bind(out.get(Native.PTR, 0));
            }
            return b;
        });
    }

    public Batch submit(List<Call> calls, ExecOptions options, Consumer<ToolResult> onResult) {
        return submit(Json.write(calls), options, onResult);
    }

    public Batch submit(List<Call> calls) {
        return submit(Json.write(calls), ExecOptions.DEFAULTS, null);
    }

    // ---- streams ----

    /**
     * Starts reading a streamed response in {@code fmt} (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC or
     * GEMINI). {@code earlyDispatch}: start each call the moment its arguments are complete, before the
     * response ends (only for tools whose side effects may run even if the response later fails).
     * {@code onText} gets text deltas on the feeding thread; {@code onResult} each result as its call
     * finishes (either may be null).
     */
    public Stream stream(Format fmt, ExecOptions options, boolean earlyDispatch, Consumer<String> onText,
            Consumer<ToolResult> onResult) {
        return with((r, a) -> {
            Stream s = new Stream(onText, onResult);
            s.open(r, fmt, options, earlyDispatch);
            return s;
        });
    }

    public Stream stream(Format fmt) {
        return stream(fmt, ExecOptions.DEFAULTS, false, null, null);
    }

    // ---- MCP ----

    /** Serves this registry's tools over MCP streamable HTTP. @throws CapstanException TRANSPORT, UNSUPPORTED */
    public McpServer serveMcp(McpServer.Options options) {
        return with((r, a) -> new McpServer(r, options));
    }

    private final java.util.concurrent.atomic.AtomicInteger servingStdio = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * Serves this registry's tools over MCP on this process's stdin and stdout (the client is the process
     * that started this one), blocking this thread until stdin ends (the client went away) or
     * {@link #close()} is called on another thread (calls in flight are then cancelled and waited for up to
     * capstan's stop timeout). Nothing else may write to {@code System.out} meanwhile: log to stderr.
     * tools/list is the registry as it is at each request; registering or removing a tool notifies the
     * client.
     *
     * @throws CapstanException TRANSPORT if stdio cannot be served, UNSUPPORTED without feature mcp
     */
    public void serveMcpStdio(McpServer.Options options) {
        with((r, a) -> {
            MemorySegment s = McpServer.toNative(a, options);
            servingStdio.incrementAndGet();
            try {
                Native.check((int) Native.mcp_server_serve_stdio.invokeExact(r, s));
            } finally {
                servingStdio.decrementAndGet();
            }
            return null;
        });
    }

    /** Mounts an MCP server's tools into this registry. @throws CapstanException MCP_CONNECT (says why) */
    public McpMount mountMcp(McpMount.Options options) {
        return with((r, a) -> new McpMount(r, options));
    }

    // ---- events ----

    static final class EventEntry {
        final Consumer<ToolEvent> hook;

        EventEntry(Consumer<ToolEvent> hook) {
            this.hook = hook;
        }

        void fire(ToolEvent e) {
            try {
                hook.accept(e);
            } catch (Throwable ignored) {
                // a hook's exception must not reach capstan
            }
        }
    }

    /**
     * Sets (null: removes) the hook that sees each call start and end, time out or be cancelled, and each
     * progress report ({@link ToolCall#progress}) and log message ({@link ToolCall#log}). It runs on the thread where the event happens, possibly on
     * several at once: it must be quick and thread-safe. Kinds this binding does not know are not passed on.
     */
    public void setEventHook(Consumer<ToolEvent> hook) {
        with((r, a) -> {
            if (hook == null) {
                Native.check((int) Native.registry_set_event_hook.invokeExact(r, MemorySegment.NULL,
                        MemorySegment.NULL, MemorySegment.NULL));
            } else {
                Native.check((int) Native.registry_set_event_hook.invokeExact(r, Native.EVENT_STUB,
                        Native.keep(new EventEntry(hook)), Native.DESTROY_STUB));
            }
            return null;
        });
    }

    /**
     * Which of {@code calls} would wait for approval (their tool requires it and their id is not in
     * {@code options.approvedIds()}): {@code [{"index","id","name"}]}. Runs nothing.
     */
    public String needsApprovalJson(List<Call> calls, ExecOptions options) {
        return with((r, a) -> {
            MemorySegment c = Native.utf8(a, Json.write(calls));
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.registry_needs_approval.invokeExact(r, c, Native.utf8Len(c),
                    options.toNative(a), out, len));
            return Native.takeString(out, len);
        });
    }

    // ---- approvals ----

    static final class ApproverEntry {
        final Approver approver;

        ApproverEntry(Approver approver) {
            this.approver = approver;
        }

        void ask(MemorySegment approval) throws Throwable {
            ApprovalRequest req = new ApprovalRequest(approval, Native.lent(Native.approval_tool, approval),
                    Native.lent(Native.approval_id, approval), Native.lent(Native.approval_arguments, approval));
            try {
                approver.onApproval(req);
            } catch (Throwable e) {
                if (!req.decided()) req.deny("approver raised: " + ToolEntry.describe(e));
            }
        }
    }

    /** Sets (null: removes) the approver of calls of tools that require approval. Without one they are denied. */
    public void setApprover(Approver approver) {
        with((r, a) -> {
            if (approver == null) {
                Native.check((int) Native.registry_set_approver.invokeExact(r, MemorySegment.NULL,
                        MemorySegment.NULL, MemorySegment.NULL));
            } else {
                Native.check((int) Native.registry_set_approver.invokeExact(r, Native.APPROVER_STUB,
                        Native.keep(new ApproverEntry(approver)), Native.DESTROY_STUB));
            }
            return null;
        });
    }

    /**
     * Frees the registry: calls not started are cancelled (also those an {@code execute} on another thread
     * waits for: a main-thread call nobody pumps, an approval nobody gives; they end CANCELLED), and this waits
     * until every use of it on other threads (an {@code execute} in progress...) has returned and no callback
     * of it runs; a call already running gives its own result. New uses fail
     * with IllegalStateException from the moment close starts. From inside a capstan callback (a tool,
     * listener, approver, hook) while the registry is in use it would wait for itself: it throws
     * IllegalStateException then (close from a host thread). A second close does nothing.
     */
    @Override
    public void close() {
        synchronized (users) {
            if (reg == null) return;
            if (users.get() > 0 && Native.inCallback()) {
                throw new IllegalStateException("Registry.close() from inside a capstan callback while the registry"
                        + " is in use would wait for itself: close it from a host thread");
            }
            closing = true;
            // Calls waiting for a pump or an approver would keep an execute (a use) waiting: cancel them.
            // Running calls keep their own result (capstan_host_batch_cancel, not capstan_registry_close).
            inFlight.forEach(HostBatch::cancel);
            if (servingStdio.get() > 0) {
                // serveMcpStdio returns once the registry is closed (capstan_registry_close); it holds a use
                try {
                    int st = (int) Native.registry_close.invokeExact(reg, Native.WAIT_FOREVER);
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            }
            boolean interrupted = false;
            while (users.get() > 0) {
                try {
                    users.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            try {
                Native.registry_free.invokeExact(reg);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            } finally {
                reg = null;
                if (interrupted) Thread.currentThread().interrupt();
            }
        }
    }
}
