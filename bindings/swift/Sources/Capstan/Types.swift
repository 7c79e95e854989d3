import CCapstan
import Foundation

/// Pass as a C text length to mean "NUL-terminated". The C macro
/// `CAPSTAN_NTS` is `SIZE_MAX`, which Swift imports as `UInt` (glibc) or not
/// at all, while C `size_t` lengths are `Int` in Swift: this is its value as
/// an `Int`. Only needed when calling the C functions directly.
public let capstanNTS: Int = Int(bitPattern: UInt.max)

/// What a provider said when its response was an error
/// (`CAPSTAN_ERR_PROVIDER_ERROR`), from `capstan_error_json`'s `provider`.
public struct ProviderErrorInfo: Sendable, Equatable {
    /// As the message shows it, e.g. `rate_limit_error`.
    public let kind: String?
    public let message: String?
    /// The provider's error type or status name.
    public let type: String?
    public let code: String?
    /// When the body carries one.
    public let httpStatus: Int?
    /// When the body carries a retry delay.
    public let retryAfterMs: Int?
}

/// A failed capstan function: its status (`CAPSTAN_ERR_*`), message and,
/// from `capstan_error_json`, the provider's error fields
/// (`CAPSTAN_ERR_PROVIDER_ERROR`) or the JSON Pointer of a refused schema's
/// bad place (`CAPSTAN_ERR_INVALID_SCHEMA`).
public struct CapstanError: Error, CustomStringConvertible, Sendable {
    public let status: Int32
    public let message: String
    /// PROVIDER_ERROR only.
    public let provider: ProviderErrorInfo?
    /// INVALID_SCHEMA only: the JSON Pointer in the tool's schema ("" = its root).
    public let pointer: String?

    public init(status: Int32, message: String, provider: ProviderErrorInfo? = nil, pointer: String? = nil) {
        self.status = status
        self.message = message
        self.provider = provider
        self.pointer = pointer
    }

    public var statusName: String { String(cString: capstan_status_name(status)) }
    public var description: String { "\(statusName): \(message)" }

    /// The calling thread's last error: call right after the failing
    /// function, on the same thread (capstan's last error is per OS thread).
    static func last(_ status: capstan_status) -> CapstanError {
        var out: UnsafeMutablePointer<CChar>? = nil
        var len = 0
        if capstan_error_json(&out, &len) == 0, let out {
            defer { capstan_string_free(out) }
            let json = text(out, len)
            if let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
                (object["status_code"] as? Int) == Int(status)
            {
                var provider: ProviderErrorInfo? = nil
                if let p = object["provider"] as? [String: Any] {
                    provider = ProviderErrorInfo(
                        kind: p["kind"] as? String, message: p["message"] as? String, type: p["type"] as? String,
                        code: p["code"] as? String, httpStatus: p["http_status"] as? Int,
                        retryAfterMs: p["retry_after_ms"] as? Int)
                }
                return CapstanError(
                    status: status, message: object["message"] as? String ?? "", provider: provider,
                    pointer: object["pointer"] as? String)
            }
        }
        var buf = [CChar](repeating: 0, count: 512)
        let n = capstan_error_message(&buf, buf.count)
        if n >= buf.count {
            buf = [CChar](repeating: 0, count: n + 1)
            _ = capstan_error_message(&buf, buf.count)
        }
        return CapstanError(status: status, message: String(cString: buf))
    }
}

/// Runs `body` with `s` as a C string, or NULL for nil.
func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) throws -> R) rethrows -> R {
    guard let s else { return try body(nil) }
    return try s.withCString { try body($0) }
}

/// Runs `body` with a C array of C strings (`const char *const *`, NULL
/// when empty) and its count. The strings live until `body` returns.
func withCStrings<R>(
    _ items: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?, Int) throws -> R
) rethrows -> R {
    let copies = items.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
    return try pointers.withUnsafeBufferPointer { buf in
        try body(buf.isEmpty ? nil : buf.baseAddress, buf.count)
    }
}

/// Runs a blocking C call on a thread of its own and resumes the task with
/// its outcome: never on the main actor and never on one of Swift's
/// cooperative threads (a blocked cooperative thread starves every task).
/// `body` reads capstan's last error on that same thread (`CapstanError.last`).
func onOwnThread<T>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = "capstan-blocking"
        thread.start()
    }
}

/// An opaque C handle passed between threads (capstan's handles are
/// thread-safe as their functions document).
struct Handle: @unchecked Sendable {
    let raw: OpaquePointer
}

@inline(__always)
func check(_ status: capstan_status) throws {
    if status != 0 { throw CapstanError.last(status) }
}

/// Borrowed C text (not NUL-terminated) as a Swift string.
func text(_ p: UnsafePointer<CChar>?, _ n: Int) -> String {
    guard let p, n > 0 else { return "" }
    return p.withMemoryRebound(to: UInt8.self, capacity: n) {
        String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self)
    }
}

/// Runs a C function with two text outputs (the second may stay NULL).
func textOut2(
    _ body: (
        UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, UnsafeMutablePointer<Int>,
        UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, UnsafeMutablePointer<Int>
    ) -> capstan_status
) throws -> (String, String?) {
    var out: UnsafeMutablePointer<CChar>? = nil
    var len = 0
    var out2: UnsafeMutablePointer<CChar>? = nil
    var len2 = 0
    let status = body(&out, &len, &out2, &len2)
    guard status == 0 else { throw CapstanError.last(status) }
    defer {
        capstan_string_free(out)
        capstan_string_free(out2)
    }
    return (text(out, len), out2 == nil ? nil : text(out2, len2))
}

/// Runs a C function with a `(char **out, size_t *out_len)` output.
func textOut(
    _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, UnsafeMutablePointer<Int>) -> capstan_status
) throws -> String {
    var out: UnsafeMutablePointer<CChar>? = nil
    var len = 0
    let status = body(&out, &len)
    guard status == 0 else { throw CapstanError.last(status) }
    defer { capstan_string_free(out) }
    return text(out, len)
}

/// Wire formats (`CAPSTAN_FORMAT_*`).
public enum Format: UInt32, Sendable {
    case describe = 0, openAIChat = 1, openAIResponses = 2, anthropic = 3, gemini = 4, mcp = 5
}

/// How a call ended (`CAPSTAN_OUTCOME_*`).
public enum Outcome: UInt32, Sendable {
    case ok = 0, toolError, invalidArguments, unknownTool, timeout, cancelled, denied
}

/// Tool flags (`CAPSTAN_TOOL_*`). Built from the C macros with `UInt32(...)`,
/// which compiles whether a macro imports as `Int32` (`(1 << n)`) or `UInt32`
/// (`(1u << n)`).
public struct ToolFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Never runs without approval (see `ToolRegistry.setApprover`).
    public static let requiresApproval = ToolFlags(rawValue: UInt32(CAPSTAN_TOOL_REQUIRES_APPROVAL))
    /// Never runs concurrently with itself.
    public static let serial = ToolFlags(rawValue: UInt32(CAPSTAN_TOOL_SERIAL))
    /// Starts only inside `ToolRegistry.pump()`, on the main actor.
    public static let mainThread = ToolFlags(rawValue: UInt32(CAPSTAN_TOOL_MAIN_THREAD))
    /// Streams: never starts before the whole response arrived, even with early dispatch.
    public static let waitForResponse = ToolFlags(rawValue: UInt32(CAPSTAN_TOOL_WAIT_FOR_RESPONSE))
    /// Left out of the exports until the search tool found it (`ToolRegistry.addSearchTool`).
    public static let deferred = ToolFlags(rawValue: UInt32(CAPSTAN_TOOL_DEFERRED))
    /// Safe to run twice: with a journal (`ToolRegistry.setJournal`), a call
    /// that started in an earlier process and never completed runs again;
    /// without the flag it ends with content beginning "Outcome unknown:".
    public static let idempotent = ToolFlags(rawValue: UInt32(CAPSTAN_TOOL_IDEMPOTENT))
    /// Replaces a tool of the same name; without it registering a name
    /// already registered throws `CapstanError` (INVALID_ARGUMENT, naming it).
    public static let replace = ToolFlags(rawValue: UInt32(CAPSTAN_TOOL_REPLACE))
}

/// Arguments of a tool, decoded from the validated JSON, with their JSON
/// Schema declared next to them: `register` reads `parametersSchema`, so
/// the type and its schema cannot drift apart in two places of the code.
///
///     struct Sum: ToolArguments {
///         let a: Int, b: Int
///         static let parametersSchema = #"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}"#
///     }
public protocol ToolArguments: Decodable {
    /// JSON Schema of the arguments; the root must be an object schema.
    static var parametersSchema: String { get }
}

/// A tool without arguments: its schema accepts only `{}`.
public struct NoArguments: ToolArguments, Sendable {
    public static let parametersSchema = #"{"type":"object","properties":{},"additionalProperties":false}"#
    public init() {}
}

/// Options of execute/submit (`capstan_exec_options`).
public struct ExecOptions: Sendable {
    public var sequential = false
    /// Calls running at once; 0 means 8.
    public var limit: UInt32 = 0
    /// Overrides every tool's timeout when > 0.
    public var timeoutMs: UInt32 = 0
    /// Ids of calls the user already approved.
    public var approvedIds: [String] = []
    /// Bounds every call of the batch from its submission, waits included
    /// (for a worker, the approver, the pump); 0 = none. A call without a
    /// result by then ends `.timeout`, saying what it waited for; a running
    /// one is cancelled (its task sees it).
    public var deadlineMs: UInt32 = 0
    /// The model was given strict schemas: its `null`s for optional arguments are dropped.
    public var strictNulls = false
    /// The run (a conversation, a workflow) the calls belong to: with a
    /// journal on the registry (`ToolRegistry.setJournal`) each call is
    /// recorded and answered under this id plus its call id. nil: no journal.
    public var runId: String? = nil

    public init(
        sequential: Bool = false, limit: UInt32 = 0, timeoutMs: UInt32 = 0, approvedIds: [String] = [],
        deadlineMs: UInt32 = 0, strictNulls: Bool = false, runId: String? = nil
    ) {
        self.runId = runId
        self.sequential = sequential
        self.limit = limit
        self.timeoutMs = timeoutMs
        self.approvedIds = approvedIds
        self.deadlineMs = deadlineMs
        self.strictNulls = strictNulls
    }

    /// `extraFlags`: the `CAPSTAN_EXEC_*` flags of the one function it is
    /// for (capstan checks each function's flags).
    func withC<R>(extraFlags: UInt32 = 0, _ body: (UnsafePointer<capstan_exec_options>) throws -> R) rethrows -> R {
        var o = capstan_exec_options()
        o.struct_size = UInt32(MemoryLayout<capstan_exec_options>.stride)  // zeroed: the defaults
        o.flags = extraFlags | (sequential ? UInt32(CAPSTAN_EXEC_SEQUENTIAL) : 0)
            | (strictNulls ? UInt32(CAPSTAN_EXEC_STRICT_NULLS) : 0)
        o.limit = limit
        o.timeout_ms = timeoutMs
        o.deadline_ms = deadlineMs
        let ids = approvedIds.map { strdup($0) }
        defer { ids.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = ids.map { UnsafePointer($0) }
        let run: UnsafeMutablePointer<CChar>? = runId.flatMap { strdup($0) }
        defer { free(run) }
        o.run_id = UnsafePointer(run)
        o.run_id_len = run == nil ? 0 : strlen(run!)
        return try pointers.withUnsafeBufferPointer { buf in
            o.approved_ids = buf.isEmpty ? nil : buf.baseAddress
            o.approved_count = buf.count
            return try withUnsafePointer(to: &o) { try body($0) }
        }
    }
}

/// One MCP content block of a tool's result.
public enum ContentPart: Sendable {
    case text(String)
    /// PNG, JPEG, GIF and WebP reach every provider.
    case image(Data, mimeType: String)
    case audio(Data, mimeType: String)
    /// An embedded resource `file:///name` (application/pdf reaches every provider as a document).
    case file(Data, mimeType: String, name: String)

    var block: [String: Any] {
        switch self {
        case .text(let s): return ["type": "text", "text": s]
        case .image(let d, let m): return ["type": "image", "data": d.base64EncodedString(), "mimeType": m]
        case .audio(let d, let m): return ["type": "audio", "data": d.base64EncodedString(), "mimeType": m]
        case .file(let d, let m, let name):
            return ["type": "resource", "resource": ["uri": "file:///\(name)", "mimeType": m, "blob": d.base64EncodedString()]]
        }
    }
}

/// What a tool hands back to the model.
public struct ToolOutput: Sendable {
    enum Kind: Sendable { case text, json, parts }
    let kind: Kind
    let content: String

    public static func text(_ s: String) -> ToolOutput { ToolOutput(kind: .text, content: s) }
    /// JSON text, checked by capstan (not JSON: the call becomes a tool error).
    /// A JSON object is the result's structured content (checked against the
    /// tool's `outputSchema` when it has one).
    public static func json(_ raw: String) -> ToolOutput { ToolOutput(kind: .json, content: raw) }
    /// Content parts (`CAPSTAN_CONTENT_PARTS`): text, images, audio, files,
    /// rendered by capstan for each provider.
    public static func parts(_ parts: [ContentPart]) -> ToolOutput {
        let data = (try? JSONSerialization.data(withJSONObject: parts.map(\.block))) ?? Data("[]".utf8)
        return ToolOutput(kind: .parts, content: String(decoding: data, as: UTF8.self))
    }
    /// A value encoded as JSON.
    public static func json<T: Encodable>(encoding value: T) throws -> ToolOutput {
        ToolOutput(kind: .json, content: String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
    }
}

/// One call's result.
public struct ToolResult: Sendable {
    /// Position of the call in its batch.
    public let index: Int
    public let id: String
    public let name: String
    /// The text for the model.
    public let content: String
    public let outcome: Outcome
    public let durationMicroseconds: UInt64
    public var isError: Bool { outcome != .ok }
    /// The content parts capstan accepted (a JSON array of MCP blocks), when
    /// the tool returned `.parts`; `content` is then their text.
    public let partsJSON: String?
    /// The structured content (a JSON object), when the result has one.
    public let structuredJSON: String?

    init(_ p: UnsafePointer<capstan_result>) {
        let r = p.pointee
        index = r.index
        id = text(r.id, r.id_len)
        name = text(r.name, r.name_len)
        content = text(r.content, r.content_len)
        outcome = Outcome(rawValue: r.outcome) ?? .toolError
        durationMicroseconds = r.duration_us
        partsJSON = r.parts_json == nil || r.parts_json_len == 0 ? nil : text(r.parts_json, r.parts_json_len)
        structuredJSON =
            r.structured_json == nil || r.structured_json_len == 0 ? nil : text(r.structured_json, r.structured_json_len)
    }
}

/// The severity of a log message (`ToolContext.log`, `capstan_log_level`):
/// MCP's levels, the syslog severities of RFC 5424, least severe first.
/// `name` is MCP's name; `LogLevel(name:)` reads one.
public enum LogLevel: UInt32, Sendable, CaseIterable {
    case debug = 0, info, notice, warning, error, critical, alert, emergency

    /// MCP's name: "debug", "info", ..., "emergency".
    public var name: String { "\(self)" }

    /// The level with MCP's name `name`; nil for any other name.
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }
}

/// A call starting, ending, reporting progress or sending a log message, as
/// the event hook sees it (`ToolRegistry.setEventHook`).
public struct ToolEvent: Sendable {
    /// `CAPSTAN_EVENT_*`.
    public enum Kind: UInt32, Sendable {
        case started = 0, finished, timedOut, cancelled, progress, log
        /// Answered from the journal without running its tool; `.finished` follows.
        case replayed
    }
    public let kind: Kind
    public let tool: String
    public let id: String
    /// Position of the call in its batch.
    public let index: Int
    /// `.finished` only.
    public let outcome: Outcome?
    /// Microseconds since the tool started (finished, timed out, progress, log).
    public let durationMicroseconds: UInt64
    /// `.progress` only: the value reported, growing with each report.
    public let progress: Double
    /// `.progress` only: the total, 0 when unknown.
    public let total: Double
    /// `.progress`: the message, if any; `.log`: the log message.
    public let message: String?
    /// `.log` only: the message's level.
    public let level: LogLevel?
}

/// MCP annotations of a tool: hints for clients and approvers; capstan enforces none.
public struct ToolAnnotations: Sendable, Encodable {
    public var title: String?
    public var readOnlyHint: Bool?
    public var destructiveHint: Bool?
    public var idempotentHint: Bool?
    public var openWorldHint: Bool?

    public init(
        title: String? = nil, readOnlyHint: Bool? = nil, destructiveHint: Bool? = nil, idempotentHint: Bool? = nil,
        openWorldHint: Bool? = nil
    ) {
        self.title = title
        self.readOnlyHint = readOnlyHint
        self.destructiveHint = destructiveHint
        self.idempotentHint = idempotentHint
        self.openWorldHint = openWorldHint
    }
}

/// An MCP icon of a tool.
public struct ToolIcon: Sendable, Encodable {
    public var src: String
    public var mimeType: String?
    public var sizes: [String]?
    /// "light" or "dark".
    public var theme: String?

    public init(src: String, mimeType: String? = nil, sizes: [String]? = nil, theme: String? = nil) {
        self.src = src
        self.mimeType = mimeType
        self.sizes = sizes
        self.theme = theme
    }
}

/// MCP metadata of a tool (`capstan_tool_def.mcp_meta`): in `tools(.mcp)`,
/// in `.describe` as `"mcp"`, and in a served `tools/list`. With an
/// `outputSchema`, a result whose structured content fails it is a tool
/// error naming the failing places. Checked at registration
/// (INVALID_ARGUMENT naming a bad field; INVALID_SCHEMA for an
/// `outputSchema` that does not compile).
public struct McpToolMeta: Sendable {
    public var title: String?
    public var annotations: ToolAnnotations?
    /// JSON Schema text with `"type": "object"`.
    public var outputSchema: String?
    /// Up to 16.
    public var icons: [ToolIcon]

    public init(title: String? = nil, annotations: ToolAnnotations? = nil, outputSchema: String? = nil, icons: [ToolIcon] = []) {
        self.title = title
        self.annotations = annotations
        self.outputSchema = outputSchema
        self.icons = icons
    }

    /// The JSON text capstan reads; an `outputSchema` that is not JSON throws
    /// INVALID_ARGUMENT before anything is registered.
    func json() throws -> String {
        var object: [String: Any] = [:]
        if let title { object["title"] = title }
        let encoder = JSONEncoder()
        if let annotations {
            object["annotations"] = try JSONSerialization.jsonObject(with: encoder.encode(annotations))
        }
        if !icons.isEmpty { object["icons"] = try JSONSerialization.jsonObject(with: encoder.encode(icons)) }
        if let outputSchema {
            guard let schema = try? JSONSerialization.jsonObject(with: Data(outputSchema.utf8)) else {
                throw CapstanError(status: Int32(CAPSTAN_ERR_INVALID_ARGUMENT), message: "outputSchema is not JSON")
            }
            object["outputSchema"] = schema
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}

/// What the tool's body gets besides its arguments.
public struct ToolContext: Sendable {
    /// The call's id.
    public let id: String
    /// The tool's name.
    public let tool: String
    let handle: CallHandle

    /// True once the call should stop: it timed out, passed its batch's
    /// deadline, its batch was cancelled or its registry closed. The body's
    /// task is also cancelled then (within about 10 ms): `Task.isCancelled`
    /// and `Task.checkCancellation()` see it.
    public var isCancelled: Bool { capstan_call_cancelled(handle.raw) }

    /// Reports progress (`capstan_call_progress`): `value` so far out of
    /// `total` (0: unknown). It reaches the event hook (`.progress`) on this
    /// thread before this returns, and an MCP client that sent a
    /// `progressToken`. Returns false once the call has its result; throws
    /// INVALID_ARGUMENT for a value not finite, negative or not above the
    /// previous report, a negative total or a message over 4096 bytes.
    /// What the caller gave besides the arguments, and what it can be asked
    /// (`capstan_call_input`), as JSON text: `{"canAsk": [...]}` (the methods
    /// a thrown `InputRequired` may ask this caller for, of
    /// "elicitation/create", "sampling/createMessage", "roots/list"; empty
    /// unless an MCP client calls a served tool) and, in a later round,
    /// `"inputResponses"` (the client's answers by the keys the tool asked
    /// with, as sent: check them) and `"requestState"` (the tool's own state
    /// from the round before, checked untampered). "" once the call has its
    /// result.
    public var input: String {
        var n = 0
        return text(capstan_call_input(handle.raw, &n), n)
    }

    @discardableResult
    public func progress(_ value: Double, total: Double = 0, message: String? = nil) throws -> Bool {
        let status = withOptionalCString(message) { m in
            capstan_call_progress(handle.raw, value, total, m, message?.utf8.count ?? 0)
        }
        if status == Int32(CAPSTAN_ERR_ALREADY_COMPLETED) || status == Int32(CAPSTAN_ERR_STALE_HANDLE) { return false }
        try check(status)
        return true
    }

    /// Sends a log message (`capstan_call_log`) at `level`. It reaches the
    /// event hook (`.log`) on this thread before this returns, and an MCP
    /// client that asked for logs at `level` or below as
    /// `notifications/message` (logger: the tool's name). Returns false once
    /// the call has its result; throws INVALID_ARGUMENT for a message over
    /// 64 KiB (nothing is sent).
    @discardableResult
    public func log(_ level: LogLevel, _ message: String) throws -> Bool {
        let status = message.withCString { m in
            capstan_call_log(handle.raw, capstan_log_level(level.rawValue), m, message.utf8.count)
        }
        if status == Int32(CAPSTAN_ERR_ALREADY_COMPLETED) || status == Int32(CAPSTAN_ERR_STALE_HANDLE) { return false }
        try check(status)
        return true
    }
}

/// Thrown by a tool body to ask its caller for input instead of answering
/// (MCP 2026-07-28 multi round-trip requests; `capstan_call_require_input`):
/// `requests` is the JSON text of an object of requests by key, each
/// `{"method": "elicitation/create" | "sampling/createMessage" |
/// "roots/list", "params": {...}}`; `state` is the tool's own text, back in
/// the next round's `ToolContext.input` as `"requestState"` (sealed by
/// capstan on its way through the client). Only an MCP client calling a
/// served tool can answer, and only what it declared (`"canAsk"`); for any
/// other caller, or requests that break a rule, the call ends as a tool
/// error: "the tool asked for input: " and capstan's reason.
public struct InputRequired: Error, Sendable {
    public let requests: String
    public let state: String?
    public init(requests: String, state: String? = nil) {
        self.requests = requests
        self.state = state
    }
}

/// One tool `search` found.
public struct SearchHit: Sendable, Decodable {
    public let name: String
    public let description: String
    public let score: Double
}

/// Export options (`CAPSTAN_EXPORT_*`).
public struct ExportFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// OpenAI strict mode: every property required, optional ones nullable;
    /// the report lists what cannot be made strict.
    public static let strict = ExportFlags(rawValue: UInt32(CAPSTAN_EXPORT_STRICT))
    /// Gemini: the OpenAPI subset in `parameters` (refs inlined) instead of `parametersJsonSchema`.
    public static let geminiLower = ExportFlags(rawValue: UInt32(CAPSTAN_EXPORT_GEMINI_LOWER))
}

/// A call waiting for approval.
public struct ApprovalRequest: Sendable {
    public let tool: String
    public let id: String
    /// Validated arguments, compact JSON.
    public let arguments: String
}

public enum Decision: Sendable {
    case approve
    /// The model reads `reason`.
    case deny(reason: String)
}
