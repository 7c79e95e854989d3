import CCapstan
import Foundation

/// A registry of tools over `capstan_registry`. Thread-safe like the C
/// registry: use it from any task or thread. Freed on deinit: calls in
/// flight end cancelled and every tool closure is released.
public final class ToolRegistry: @unchecked Sendable {
    let raw: OpaquePointer

    public init(coerce: Bool = false) throws {
        var opts = capstan_registry_options()
        opts.struct_size = UInt32(MemoryLayout<capstan_registry_options>.stride)
        opts.flags = coerce ? UInt32(CAPSTAN_REGISTRY_COERCE) : 0
        var out: OpaquePointer? = nil
        let status = capstan_registry_new(&opts, &out)
        guard status == 0, let out else { throw CapstanError.last(status) }
        raw = out
    }

    deinit {
        capstan_registry_free(raw)  // no callback runs after this returns; hook boxes released
    }

    // MARK: tools

    /// Registers a tool (a name already registered throws `CapstanError`
    /// INVALID_ARGUMENT unless `flags` has `.replace`) whose arguments type declares its
    /// schema (`ToolArguments.parametersSchema`). `body` gets the validated
    /// arguments (schema defaults filled in) decoded as `Arguments`, and the
    /// call's context (id, cancellation, progress); it runs in its own task,
    /// which is cancelled when capstan ends the call first (timeout,
    /// deadline, batch cancelled, registry closed). A thrown error (or
    /// arguments that do not decode) becomes a tool error the model reads.
    /// With `.mainThread` the call starts only inside `pump()`; for a body
    /// that must run on the main actor use `registerOnMainActor`. `body` is
    /// released exactly once, when the tool is replaced or removed, the
    /// registry freed, or registration fails.
    public func register<Arguments: ToolArguments>(
        _ name: String,
        description: String = "",
        flags: ToolFlags = [],
        timeoutMs: UInt32 = 0,
        maxOutputChars: UInt32 = 0,
        meta: McpToolMeta? = nil,
        _ body: @escaping @Sendable (Arguments, ToolContext) async throws -> ToolOutput
    ) throws {
        try register(
            name, description: description, parameters: Arguments.parametersSchema, flags: flags, timeoutMs: timeoutMs,
            maxOutputChars: maxOutputChars, meta: meta, body)
    }

    /// A tool whose body runs on the main actor (UI objects): flagged
    /// `.mainThread`, so the call starts only when the main actor calls
    /// `pump()`, and `body` is isolated to the main actor.
    public func registerOnMainActor<Arguments: ToolArguments & Sendable>(
        _ name: String,
        description: String = "",
        flags: ToolFlags = [],
        timeoutMs: UInt32 = 0,
        maxOutputChars: UInt32 = 0,
        meta: McpToolMeta? = nil,
        _ body: @escaping @MainActor @Sendable (Arguments, ToolContext) async throws -> ToolOutput
    ) throws {
        try register(
            name, description: description, parameters: Arguments.parametersSchema, flags: flags.union(.mainThread),
            timeoutMs: timeoutMs, maxOutputChars: maxOutputChars, meta: meta
        ) { (arguments: Arguments, context: ToolContext) in try await body(arguments, context) }
    }

    /// As above, for a body that needs no context.
    public func register<Arguments: ToolArguments>(
        _ name: String,
        description: String = "",
        flags: ToolFlags = [],
        timeoutMs: UInt32 = 0,
        maxOutputChars: UInt32 = 0,
        meta: McpToolMeta? = nil,
        _ body: @escaping @Sendable (Arguments) async throws -> ToolOutput
    ) throws {
        try register(
            name, description: description, parameters: Arguments.parametersSchema, flags: flags, timeoutMs: timeoutMs,
            maxOutputChars: maxOutputChars, meta: meta
        ) { (arguments: Arguments, _: ToolContext) in try await body(arguments) }
    }

    /// Registers a tool with its JSON Schema given here (`parameters`, no
    /// default: a schema left out would accept any object and turn
    /// validation off silently). Otherwise as above.
    public func register<Arguments: Decodable>(
        _ name: String,
        description: String = "",
        parameters: String,
        flags: ToolFlags = [],
        timeoutMs: UInt32 = 0,
        maxOutputChars: UInt32 = 0,
        meta: McpToolMeta? = nil,
        _ body: @escaping @Sendable (Arguments) async throws -> ToolOutput
    ) throws {
        try register(
            name, description: description, parameters: parameters, flags: flags, timeoutMs: timeoutMs,
            maxOutputChars: maxOutputChars, meta: meta
        ) { (arguments: Arguments, _: ToolContext) in try await body(arguments) }
    }

    /// The form every other `register` goes through.
    public func register<Arguments: Decodable>(
        _ name: String,
        description: String = "",
        parameters: String,
        flags: ToolFlags = [],
        timeoutMs: UInt32 = 0,
        maxOutputChars: UInt32 = 0,
        meta: McpToolMeta? = nil,
        _ body: @escaping @Sendable (Arguments, ToolContext) async throws -> ToolOutput
    ) throws {
        let metaJSON = try meta?.json()  // before the box is retained: nothing to release on a throw
        let box = ToolBox { json, context in
            try await body(JSONDecoder().decode(Arguments.self, from: Data(json.utf8)), context)
        }
        var def = capstan_tool_def()
        def.struct_size = UInt32(MemoryLayout<capstan_tool_def>.stride)  // zeroed: the defaults
        def.callback = toolTrampoline
        def.user_data = Unmanaged.passRetained(box).toOpaque()
        def.destroy = releaseBox  // capstan calls it exactly once, on failure too
        def.timeout_ms = timeoutMs
        def.max_output_chars = maxOutputChars
        def.flags = flags.rawValue
        let status = name.withCString { n in
            description.withCString { d in
                parameters.withCString { p in
                    withOptionalCString(metaJSON) { m in
                        def.name = n
                        def.description = d
                        def.parameters = p
                        def.mcp_meta = m
                        return capstan_registry_add_tool(raw, &def)
                    }
                }
            }
        }
        try check(status)
    }

    public func unregister(_ name: String) throws {
        try check(capstan_registry_remove_tool(raw, name, name.utf8.count))
    }

    // MARK: execution

    /// Runs calls (normalized call JSON: one object or an array) and returns
    /// their results in call order. Cancelling the task cancels the batch and
    /// throws `CancellationError`.
    public func execute(_ calls: String, options: ExecOptions = ExecOptions()) async throws -> [ToolResult] {
        var results: [ToolResult] = []
        for await result in try submit(calls, options: options) {
            results.append(result)
        }
        try Task.checkCancellation()
        return results.sorted { $0.index < $1.index }
    }

    /// Starts calls and returns at once: results arrive on the stream as each
    /// call finishes (`index` gives its position). The stream ends after the
    /// last one. Ending the iteration early, or cancelling the iterating task,
    /// cancels the batch.
    public func submit(_ calls: String, options: ExecOptions = ExecOptions()) throws -> AsyncStream<ToolResult> {
        var continuation: AsyncStream<ToolResult>.Continuation! = nil
        let stream = AsyncStream<ToolResult>(bufferingPolicy: .unbounded) { continuation = $0 }
        let sink = ResultSink(continuation)
        let userData = Unmanaged.passRetained(sink).toOpaque()
        let cell = BatchCell(sink: Unmanaged.passUnretained(sink))
        // Installed before the batch starts: a batch that finishes at once
        // still frees itself.
        continuation.onTermination = { termination in
            if case .cancelled = termination { cell.end(cancel: true) } else { cell.end(cancel: false) }
        }
        var batch: OpaquePointer? = nil
        let status = options.withC { opts in
            calls.withCString { c in capstan_batch_submit(raw, c, calls.utf8.count, opts, resultTrampoline, userData, &batch) }
        }
        guard status == 0, let batch else {
            let error = CapstanError.last(status)
            cell.failed()
            continuation.finish()
            throw error
        }
        cell.started(batch)
        return stream
    }

    /// Runs queued main-thread tools (`.mainThread`) for about `budgetMs`
    /// (at least one call if any is queued); returns how many started. Call
    /// it once a frame or from the run loop, on the main actor.
    @MainActor @discardableResult
    public func pump(budgetMs: UInt32 = 0) -> Int {
        capstan_registry_pump(raw, budgetMs)
    }

    // MARK: approval

    /// Decides calls of tools flagged `.requiresApproval`. Each request runs
    /// in its own task; the call waits for the decision.
    public func setApprover(_ approver: @escaping @Sendable (ApprovalRequest) async -> Decision) throws {
        let box = ApproverBox(approver)
        let userData = Unmanaged.passRetained(box).toOpaque()
        // capstan releases the box (releaseBox) after the approver's last
        // invocation, or at once when the setter fails.
        let status = capstan_registry_set_approver(raw, approverTrampoline, userData, releaseBox)
        guard status == 0 else { throw CapstanError.last(status) }
    }

    // MARK: tools for the model and providers

    /// The registered tools as the JSON `format`'s API takes.
    public func tools(_ format: Format) throws -> String {
        try exportTools(format).tools
    }

    /// The tools as `format`'s API takes them with `flags` (strict mode,
    /// Gemini lowering), and capstan's report (`[{"tool","pointer","message"}]`):
    /// what was dropped or could not be made strict.
    public func exportTools(_ format: Format, flags: ExportFlags = []) throws -> (tools: String, report: String) {
        var opts = capstan_export_options()
        opts.struct_size = UInt32(MemoryLayout<capstan_export_options>.stride)  // zeroed: the defaults
        opts.flags = flags.rawValue
        let (tools, report) = try textOut2 { out, len, rep, repLen in
            capstan_registry_tools_json(raw, format.rawValue, &opts, out, len, rep, repLen)
        }
        return (tools, report ?? "[]")
    }

    /// One agent turn: parses `response` (the provider's JSON), runs its
    /// calls and returns the messages to append in `format`. With
    /// `wholeTurn` (`CAPSTAN_EXEC_WHOLE_TURN`) they start with the model's
    /// own turn, unchanged (thinking blocks and their signatures, reasoning
    /// items, thought signatures), then the results: append them as they are.
    /// capstan_registry_run_turn blocks until every call ends, so it runs on
    /// a thread of its own: the caller (the main actor too) is never blocked,
    /// and `.mainThread` tools keep running as the main actor pumps. It is
    /// not cancelled with the task: bound it with `options.deadlineMs`.
    public func runTurn(
        _ format: Format, response: String, options: ExecOptions = ExecOptions(), wholeTurn: Bool = false
    ) async throws -> String {
        let flags = wholeTurn ? UInt32(CAPSTAN_EXEC_WHOLE_TURN) : 0
        return try await onOwnThread { [self] in
            try options.withC(extraFlags: flags) { opts in
                try textOut { out, len in
                    capstan_registry_run_turn(raw, format.rawValue, response, response.utf8.count, opts, out, len)
                }
            }
        }
    }

    /// Which of `calls` would wait for approval: `[{"index","id","name"}]`. Runs nothing.
    public func needsApproval(_ calls: String, options: ExecOptions = ExecOptions()) throws -> String {
        try options.withC { opts in
            try textOut { capstan_registry_needs_approval(raw, calls, calls.utf8.count, opts, $0, $1) }
        }
    }

    public static func parseCalls(_ format: Format, response: String) throws -> String {
        try textOut { capstan_format_parse_calls(format.rawValue, response, response.utf8.count, $0, $1) }
    }

    public static func formatResults(_ format: Format, results: String) throws -> String {
        try textOut { capstan_format_write_results(format.rawValue, results, results.utf8.count, $0, $1) }
    }

    /// Checks a conversation against `format`'s rules for tool calls and
    /// results (`capstan_format_check_history`): the report
    /// `{"ok","findings":[...]}` and, with `repair`, the history repaired
    /// (same shape as given). Pure: any thread.
    public static func checkHistory(
        _ format: Format, history: String, repair: Bool = false, geminiSignatures: Bool = false
    ) throws -> (report: String, repaired: String?) {
        let flags = (repair ? UInt32(CAPSTAN_HISTORY_REPAIR) : 0)
            | (geminiSignatures ? UInt32(CAPSTAN_HISTORY_GEMINI_SIGNATURES) : 0)
        let (report, repaired) = try textOut2 { out, len, fixed, fixedLen in
            capstan_format_check_history(
                format.rawValue, history, history.utf8.count, flags, out, len, repair ? fixed : nil,
                repair ? fixedLen : nil)
        }
        return (report, repaired)
    }

    // MARK: events and statistics

    /// Sets (nil: removes) the hook that sees each call start and end, time
    /// out or be cancelled, each progress report and log message. It runs on the thread
    /// where the event happens (a pool thread, capstan's timer, the thread
    /// reporting progress), possibly on several at once: keep it quick, never
    /// block in it. Kinds this binding does not know are not passed on.
    public func setEventHook(_ hook: (@Sendable (ToolEvent) -> Void)?) throws {
        guard let hook else {
            try check(capstan_registry_set_event_hook(raw, nil, nil, nil))
            return
        }
        let userData = Unmanaged.passRetained(EventBox(hook)).toOpaque()
        // capstan releases the box after the hook's last invocation, or at once on failure.
        let status = capstan_registry_set_event_hook(raw, eventTrampoline, userData, releaseBox)
        guard status == 0 else { throw CapstanError.last(status) }
    }

    /// Per-tool statistics as JSON:
    /// `{"tools":{"<name>":{"calls","outcomes":{...},"in_flight","p50_us","p99_us"}}}`.
    public func statsJSON() throws -> String {
        try textOut { capstan_registry_stats_json(raw, $0, $1) }
    }

    // MARK: search

    /// The registered tools that best match `query`, best first (BM25 over
    /// names, descriptions and parameters; with `regex`, a Rust regular
    /// expression). `limit`: 1 to 100.
    public func search(_ query: String, limit: UInt32 = 5, regex: Bool = false) throws -> [SearchHit] {
        var opts = capstan_search_options()
        opts.struct_size = UInt32(MemoryLayout<capstan_search_options>.stride)  // zeroed: the defaults
        opts.limit = limit
        opts.flags = regex ? UInt32(CAPSTAN_SEARCH_REGEX) : 0
        let json = try textOut { capstan_registry_search_json(raw, query, query.utf8.count, &opts, $0, $1) }
        struct Found: Decodable { let results: [SearchHit] }
        return try JSONDecoder().decode(Found.self, from: Data(json.utf8)).results
    }

    /// Registers capstan's search tool: the model calls it to find tools it
    /// was not shown, and each `.deferred` tool it lists is exported from then on.
    public func addSearchTool(name: String? = nil, description: String? = nil, limit: UInt32 = 0, regex: Bool = false) throws {
        var opts = capstan_search_tool_options()
        opts.struct_size = UInt32(MemoryLayout<capstan_search_tool_options>.stride)  // zeroed: the defaults
        opts.limit = limit
        opts.flags = regex ? UInt32(CAPSTAN_SEARCH_REGEX) : 0
        let status = withOptionalCString(name) { n in
            withOptionalCString(description) { d in
                opts.name = n
                opts.description = d
                return capstan_registry_add_search_tool(raw, &opts)
            }
        }
        try check(status)
    }

    /// Deferred tools the search tool loaded leave the exports again (a new conversation).
    public func unloadTools() throws {
        try check(capstan_registry_unload_tools(raw))
    }

    // MARK: streams and MCP

    /// Starts reading a streamed response (the SSE body) in `format`
    /// (`.openAIChat`, `.openAIResponses`, `.anthropic`, `.gemini`).
    public func stream(_ format: Format, options: ExecOptions = ExecOptions(), earlyDispatch: Bool = false) throws -> ToolStream {
        try ToolStream(registry: self, format: format, options: options, earlyDispatch: earlyDispatch)
    }

    /// Serves the tools over MCP (streamable HTTP) until `stop()`.
    public func serveMCP(_ options: McpServerOptions = McpServerOptions()) throws -> McpServer {
        var out: OpaquePointer? = nil
        let status = options.withC { opts in capstan_mcp_server_start(raw, opts, &out) }
        guard status == 0, let out else { throw CapstanError.last(status) }
        return try McpServer(Handle(raw: out))
    }

    /// Serves the tools over MCP on stdin/stdout until stdin ends (or the
    /// registry is closed), on a thread of its own. Nothing else may write to stdout.
    public func serveMCPStdio(_ options: McpServerOptions = McpServerOptions()) async throws {
        try await onOwnThread { [self] in
            try options.withC { opts in try check(capstan_mcp_server_serve_stdio(raw, opts)) }
        }
    }

    /// Mounts an MCP server's tools (a command on stdio, or a URL), named
    /// `prefix + remote name`. Connecting blocks, so it runs on a thread of its own.
    /// With `options.oauth`, a server that asks for OAuth is authorized
    /// through its closures; a refused or failed authorization throws
    /// MCP_CONNECT naming the step (and what a closure threw).
    public func mountMCP(_ options: McpMountOptions) async throws -> McpMount {
        let handle = try await onOwnThread { [self] () throws -> Handle in
            var out: OpaquePointer? = nil
            let trouble = OAuthTrouble()
            let status = options.withC(trouble: trouble) { opts in capstan_mcp_mount_new(raw, opts, &out) }
            guard status == 0, let out else {
                let error = CapstanError.last(status)
                guard let what = trouble.what else { throw error }
                throw CapstanError(status: error.status, message: "\(error.message) (\(what))")
            }
            return Handle(raw: out)
        }
        return McpMount(handle)
    }

    // MARK: shutdown

    /// Shuts the registry down (calls not started end cancelled, calls in
    /// flight are reported cancelled and their tasks cancelled), waiting up
    /// to `timeoutMs` on a thread of its own; true when everything finished
    /// in time. The registry is freed when the last reference goes.
    @discardableResult
    public func close(timeoutMs: UInt32 = .max) async -> Bool {
        let status = (try? await onOwnThread { [self] in capstan_registry_close(raw, timeoutMs) }) ?? -1
        return status == 0
    }
}

// MARK: - C callbacks

final class ToolBox: @unchecked Sendable {
    let run: @Sendable (String, ToolContext) async throws -> ToolOutput
    init(run: @escaping @Sendable (String, ToolContext) async throws -> ToolOutput) {
        self.run = run
    }
}

/// A call handle (generation-checked by capstan: completing it late or twice
/// returns an error status, never undefined behaviour).
struct CallHandle: @unchecked Sendable {
    let raw: OpaquePointer

    func complete(_ output: ToolOutput) {
        let kind: capstan_content
        switch output.kind {
        case .text: kind = capstan_content(CAPSTAN_CONTENT_TEXT)
        case .json: kind = capstan_content(CAPSTAN_CONTENT_JSON)
        case .parts: kind = capstan_content(CAPSTAN_CONTENT_PARTS)
        }
        let n = output.content.utf8.count
        _ = output.content.withCString { capstan_call_return(raw, kind, $0, n) }
    }

    func fail(_ message: String) {
        _ = capstan_call_fail(raw, message, message.utf8.count)
    }

    /// Completes the call asking for input; a refusal (the call left open)
    /// ends it as a tool error with capstan's reason.
    func ask(_ asked: InputRequired) {
        let status = asked.requests.withCString { r in
            withOptionalCString(asked.state) { s in
                capstan_call_require_input(raw, r, asked.requests.utf8.count, s, asked.state?.utf8.count ?? 0)
            }
        }
        if status == 0 || status == Int32(CAPSTAN_ERR_ALREADY_COMPLETED) || status == Int32(CAPSTAN_ERR_STALE_HANDLE) {
            return
        }
        fail("the tool asked for input: \(CapstanError.last(status).message)")
    }
}

/// How often a running tool's task checks `capstan_call_cancelled` (capstan
/// has no callback for a call's cancellation; its event hook is the host's).
let cancellationPollNanoseconds: UInt64 = 10_000_000

private let toolTrampoline: capstan_tool_fn = { userData, call in
    guard let userData, let call else { return }
    let box = Unmanaged<ToolBox>.fromOpaque(userData).takeUnretainedValue()
    var n = 0
    // Copied now: the texts belong to the call.
    let arguments = text(capstan_call_arguments(call, &n), n)
    let id = text(capstan_call_id(call, &n), n)
    let tool = text(capstan_call_tool(call, &n), n)
    let handle = CallHandle(raw: call)
    let context = ToolContext(id: id, tool: tool, handle: handle)
    let run = box.run
    // A body isolated to the main actor (registerOnMainActor) hops there itself.
    let work = Task { try await run(arguments, context) }
    // Completes the call with the task's outcome; until then, a watcher
    // cancels the task once capstan ends the call (timeout, deadline, batch
    // cancelled, registry closed). Completing late is ALREADY_COMPLETED,
    // ignored: capstan already gave the call its result.
    Task {
        let watcher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: cancellationPollNanoseconds)
                if capstan_call_cancelled(handle.raw) {
                    work.cancel()
                    return
                }
            }
        }
        let outcome = await work.result
        watcher.cancel()
        switch outcome {
        case .success(let output): handle.complete(output)
        case .failure(let asked as InputRequired): handle.ask(asked)
        case .failure(let error): handle.fail("\(error)")
        }
    }
}

final class EventBox: @unchecked Sendable {
    let hook: @Sendable (ToolEvent) -> Void
    init(_ hook: @escaping @Sendable (ToolEvent) -> Void) { self.hook = hook }
}

private let eventTrampoline: capstan_event_fn = { userData, event in
    guard let userData, let event else { return }
    let box = Unmanaged<EventBox>.fromOpaque(userData).takeUnretainedValue()
    let e = event.pointee
    guard let kind = ToolEvent.Kind(rawValue: e.kind) else { return }  // newer kinds: ignored, as the header asks
    let progress = kind == .progress
    let log = kind == .log
    box.hook(
        ToolEvent(
            kind: kind, tool: text(e.tool, e.tool_len), id: text(e.id, e.id_len), index: e.index,
            outcome: kind == .finished ? Outcome(rawValue: e.outcome) : nil, durationMicroseconds: e.duration_us,
            progress: progress ? e.progress : 0, total: progress ? e.total : 0,
            message: (progress || log) && e.message != nil ? text(e.message, e.message_len) : nil,
            level: log ? LogLevel(rawValue: e.level) : nil))
}

private let releaseBox: capstan_destroy_fn = { userData in
    guard let userData else { return }
    Unmanaged<AnyObject>.fromOpaque(userData).release()
}

final class ResultSink: @unchecked Sendable {
    let continuation: AsyncStream<ToolResult>.Continuation
    init(_ continuation: AsyncStream<ToolResult>.Continuation) { self.continuation = continuation }
}

private let resultTrampoline: capstan_result_fn = { userData, result in
    guard let userData else { return }
    let sink = Unmanaged<ResultSink>.fromOpaque(userData).takeUnretainedValue()
    if let result {
        sink.continuation.yield(ToolResult(result))
    } else {
        sink.continuation.finish()
    }
}

/// Frees a submitted batch exactly once, whichever comes first: the stream's
/// end (finished, cancelled, dropped) or the return of capstan_batch_submit.
final class BatchCell: @unchecked Sendable {
    private let lock = NSLock()
    private var batch: OpaquePointer?
    private var ended = false
    private var cancelRequested = false
    private var sinkReleased = false
    private let sink: Unmanaged<ResultSink>

    init(sink: Unmanaged<ResultSink>) { self.sink = sink }

    func started(_ b: OpaquePointer) {
        lock.lock()
        if ended {
            let cancel = cancelRequested
            lock.unlock()
            if cancel { capstan_batch_cancel(b) }
            release(b)
            return
        }
        batch = b
        lock.unlock()
    }

    func end(cancel: Bool) {
        lock.lock()
        ended = true
        cancelRequested = cancel
        let b = batch
        batch = nil
        lock.unlock()
        guard let b else { return }  // started() frees it
        if cancel { capstan_batch_cancel(b) }
        release(b)
    }

    /// capstan_batch_submit failed: nothing to free but the sink's retain.
    func failed() {
        lock.lock()
        ended = true
        lock.unlock()
        releaseSink()
    }

    private func release(_ b: OpaquePointer) {
        capstan_batch_free(b)  // no result callback runs after this returns
        releaseSink()
    }

    private func releaseSink() {
        lock.lock()
        let first = !sinkReleased
        sinkReleased = true
        lock.unlock()
        if first { sink.release() }
    }
}

final class ApproverBox: @unchecked Sendable {
    let decide: @Sendable (ApprovalRequest) async -> Decision
    init(_ decide: @escaping @Sendable (ApprovalRequest) async -> Decision) { self.decide = decide }
}

struct ApprovalHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

private let approverTrampoline: capstan_approver_fn = { userData, approval in
    guard let userData, let approval else { return }
    let box = Unmanaged<ApproverBox>.fromOpaque(userData).takeUnretainedValue()
    var n = 0
    let tool = text(capstan_approval_tool(approval, &n), n)
    let id = text(capstan_approval_id(approval, &n), n)
    let arguments = text(capstan_approval_arguments(approval, &n), n)
    let request = ApprovalRequest(tool: tool, id: id, arguments: arguments)
    let handle = ApprovalHandle(raw: approval)
    let decide = box.decide
    Task {
        switch await decide(request) {
        case .approve:
            _ = capstan_approval_decide(handle.raw, true, nil, 0)
        case .deny(let reason):
            _ = capstan_approval_decide(handle.raw, false, reason, reason.utf8.count)
        }
    }
}
