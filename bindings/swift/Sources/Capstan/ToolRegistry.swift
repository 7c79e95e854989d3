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

    /// Registers (or replaces) a tool. `body` gets the validated arguments
    /// decoded as `Arguments` and runs in its own task; a thrown error (or
    /// arguments that do not decode) becomes a tool error the model reads.
    /// With `.mainThread` the call starts only inside `pump()` and `body`
    /// runs on the main actor. `body` is released exactly once, when the tool
    /// is replaced or removed, the registry freed, or registration fails.
    public func register<Arguments: Decodable>(
        _ name: String,
        description: String = "",
        parameters: String = #"{"type":"object"}"#,
        flags: ToolFlags = [],
        timeoutMs: UInt32 = 0,
        _ body: @escaping @Sendable (Arguments) async throws -> ToolOutput
    ) throws {
        let box = ToolBox(mainThread: flags.contains(.mainThread)) { json in
            try await body(JSONDecoder().decode(Arguments.self, from: Data(json.utf8)))
        }
        var def = capstan_tool_def()
        def.struct_size = UInt32(MemoryLayout<capstan_tool_def>.stride)
        def.callback = toolTrampoline
        def.user_data = Unmanaged.passRetained(box).toOpaque()
        def.destroy = releaseBox  // capstan calls it exactly once, on failure too
        def.timeout_ms = timeoutMs
        def.flags = flags.rawValue
        let status = name.withCString { n in
            description.withCString { d in
                parameters.withCString { p in
                    def.name = n
                    def.description = d
                    def.parameters = p
                    return capstan_registry_add_tool(raw, &def)
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
        try textOut { capstan_registry_tools_json(raw, format.rawValue, nil, $0, $1, nil, nil) }
    }

    /// Parses, runs and answers one model response; returns the messages to
    /// append in `format`. Blocks the calling thread until every call ends.
    public func runTurn(_ format: Format, response: String, options: ExecOptions = ExecOptions()) throws -> String {
        try options.withC { opts in
            try textOut { out, len in capstan_registry_run_turn(raw, format.rawValue, response, response.utf8.count, opts, out, len) }
        }
    }

    public static func parseCalls(_ format: Format, response: String) throws -> String {
        try textOut { capstan_format_parse_calls(format.rawValue, response, response.utf8.count, $0, $1) }
    }

    public static func formatResults(_ format: Format, results: String) throws -> String {
        try textOut { capstan_format_write_results(format.rawValue, results, results.utf8.count, $0, $1) }
    }
}

// MARK: - C callbacks

final class ToolBox: @unchecked Sendable {
    let mainThread: Bool
    let run: @Sendable (String) async throws -> ToolOutput
    init(mainThread: Bool, run: @escaping @Sendable (String) async throws -> ToolOutput) {
        self.mainThread = mainThread
        self.run = run
    }
}

/// A call handle (generation-checked by capstan: completing it late or twice
/// returns an error status, never undefined behaviour).
struct CallHandle: @unchecked Sendable {
    let raw: OpaquePointer

    func complete(_ output: ToolOutput) {
        let kind = output.kind == .json ? capstan_content(CAPSTAN_CONTENT_JSON) : capstan_content(CAPSTAN_CONTENT_TEXT)
        let n = output.content.utf8.count
        _ = output.content.withCString { capstan_call_return(raw, kind, $0, n) }
    }

    func fail(_ message: String) {
        _ = capstan_call_fail(raw, message, message.utf8.count)
    }
}

private let toolTrampoline: capstan_tool_fn = { userData, call in
    guard let userData, let call else { return }
    let box = Unmanaged<ToolBox>.fromOpaque(userData).takeUnretainedValue()
    var n = 0
    // Copied now: the text belongs to the call.
    let arguments = text(capstan_call_arguments(call, &n), n)
    let handle = CallHandle(raw: call)
    let run = box.run
    let work: @Sendable () async -> Void = {
        do {
            let output = try await run(arguments)
            handle.complete(output)
        } catch {
            handle.fail("\(error)")
        }
    }
    if box.mainThread {
        Task { @MainActor in await work() }
    } else {
        Task { await work() }
    }
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
