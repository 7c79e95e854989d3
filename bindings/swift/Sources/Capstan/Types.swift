import CCapstan
import Foundation

/// Pass as a C text length to mean "NUL-terminated". The C macro
/// `CAPSTAN_NTS` is `SIZE_MAX`, which Swift imports as `UInt` (glibc) or not
/// at all, while C `size_t` lengths are `Int` in Swift: this is its value as
/// an `Int`. Only needed when calling the C functions directly.
public let capstanNTS: Int = Int(bitPattern: UInt.max)

/// A failed capstan function: its status (`CAPSTAN_ERR_*`) and message.
public struct CapstanError: Error, CustomStringConvertible, Sendable {
    public let status: Int32
    public let message: String

    public var statusName: String { String(cString: capstan_status_name(status)) }
    public var description: String { "\(statusName): \(message)" }

    /// The calling thread's last error: call right after the failing function.
    static func last(_ status: capstan_status) -> CapstanError {
        var buf = [CChar](repeating: 0, count: 512)
        let n = capstan_error_message(&buf, buf.count)
        if n >= buf.count {
            buf = [CChar](repeating: 0, count: n + 1)
            _ = capstan_error_message(&buf, buf.count)
        }
        return CapstanError(status: status, message: String(cString: buf))
    }
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

    public init(sequential: Bool = false, limit: UInt32 = 0, timeoutMs: UInt32 = 0, approvedIds: [String] = []) {
        self.sequential = sequential
        self.limit = limit
        self.timeoutMs = timeoutMs
        self.approvedIds = approvedIds
    }

    func withC<R>(_ body: (UnsafePointer<capstan_exec_options>) throws -> R) rethrows -> R {
        var o = capstan_exec_options()
        // stride, not size: C's sizeof includes the tail padding.
        o.struct_size = UInt32(MemoryLayout<capstan_exec_options>.stride)
        o.flags = sequential ? UInt32(CAPSTAN_EXEC_SEQUENTIAL) : 0
        o.limit = limit
        o.timeout_ms = timeoutMs
        let ids = approvedIds.map { strdup($0) }
        defer { ids.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = ids.map { UnsafePointer($0) }
        return try pointers.withUnsafeBufferPointer { buf in
            o.approved_ids = buf.isEmpty ? nil : buf.baseAddress
            o.approved_count = buf.count
            return try withUnsafePointer(to: &o) { try body($0) }
        }
    }
}

/// What a tool hands back to the model.
public struct ToolOutput: Sendable {
    enum Kind: Sendable { case text, json }
    let kind: Kind
    let content: String

    public static func text(_ s: String) -> ToolOutput { ToolOutput(kind: .text, content: s) }
    /// JSON text, checked by capstan (not JSON: the call becomes a tool error).
    public static func json(_ raw: String) -> ToolOutput { ToolOutput(kind: .json, content: raw) }
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

    init(_ p: UnsafePointer<capstan_result>) {
        let r = p.pointee
        index = r.index
        id = text(r.id, r.id_len)
        name = text(r.name, r.name_len)
        content = text(r.content, r.content_len)
        outcome = Outcome(rawValue: r.outcome) ?? .toolError
        durationMicroseconds = r.duration_us
    }
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
