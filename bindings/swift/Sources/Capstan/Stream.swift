import CCapstan
import Foundation

/// A streamed model response being read (`capstan_stream`): `feed` the SSE
/// body's bytes as they arrive; text deltas come out of `text`, each call's
/// result out of `results` as it ends (with early dispatch, before the body
/// ends); `finish()` then gives the turn as JSON (`calls`, `results`,
/// `messages`, `text`, `stop_reason`, `cancelled`, `cut_calls`).
///
/// One task at a time may feed or finish it; `cancel()` from anywhere.
/// Freed when finished, or with the last reference.
public final class ToolStream: @unchecked Sendable {
    /// Results as each call ends, in the order they end; ends after the last.
    public let results: AsyncStream<ToolResult>
    /// The model's text, delta by delta; ends with the stream.
    public let text: AsyncStream<String>

    // feedLock serializes feed and the free after finish (capstan: one
    // thread at a time may feed or finish); stateLock guards `raw` alone,
    // so cancel() (from any thread, also a sink callback inside feed) never
    // waits for a feed.
    private let feedLock = NSLock()
    private let stateLock = NSLock()
    private var raw: OpaquePointer?
    private var finishing = false
    // The sink's user_data: stays valid until capstan_stream_finish or
    // capstan_stream_free returned (no callback runs after either).
    private let sink: StreamSinkBox
    private let registry: ToolRegistry  // the stream keeps its registry alive

    init(registry: ToolRegistry, format: Format, options: ExecOptions, earlyDispatch: Bool) throws {
        var resultsContinuation: AsyncStream<ToolResult>.Continuation! = nil
        var textContinuation: AsyncStream<String>.Continuation! = nil
        results = AsyncStream(bufferingPolicy: .unbounded) { resultsContinuation = $0 }
        text = AsyncStream(bufferingPolicy: .unbounded) { textContinuation = $0 }
        sink = StreamSinkBox(results: resultsContinuation, text: textContinuation)
        self.registry = registry
        var c = capstan_stream_sink()
        c.struct_size = UInt32(MemoryLayout<capstan_stream_sink>.stride)  // zeroed: the defaults
        c.on_text = streamTextTrampoline
        c.on_result = streamResultTrampoline
        c.user_data = Unmanaged.passUnretained(sink).toOpaque()
        var out: OpaquePointer? = nil
        let flags = earlyDispatch ? UInt32(CAPSTAN_EXEC_EARLY_DISPATCH) : 0
        let status = options.withC(extraFlags: flags) { opts in
            capstan_stream_new(registry.raw, format.rawValue, opts, &c, &out)
        }
        guard status == 0, let out else {
            let error = CapstanError.last(status)
            sink.end()
            throw error
        }
        raw = out
    }

    deinit {
        if let raw { capstan_stream_free(raw) }  // no sink callback runs after this returns
        sink.end()
    }

    /// Reads the next bytes of the body (split anywhere). Throws the
    /// stream's error (PROVIDER_ERROR with the provider's fields for its
    /// error event, INVALID_RESPONSE, STREAM_TOO_LARGE), again on every
    /// later feed; WRONG_CONTEXT once finishing or cancelled.
    public func feed(_ bytes: Data) throws {
        feedLock.lock()
        defer { feedLock.unlock() }
        stateLock.lock()
        let raw = self.raw
        let finishing = self.finishing
        stateLock.unlock()
        guard let raw, !finishing else {
            throw CapstanError(status: Int32(CAPSTAN_ERR_WRONG_CONTEXT), message: "the stream is finished")
        }
        let status = bytes.withUnsafeBytes { capstan_stream_feed(raw, $0.baseAddress, $0.count) }
        try check(status)
    }

    public func feed(_ text: String) throws {
        try feed(Data(text.utf8))
    }

    /// No call starts any more; running ones are cancelled (their tasks see
    /// it). `finish()` still collects the results.
    public func cancel() {
        stateLock.lock()
        defer { stateLock.unlock() }
        if let raw { capstan_stream_cancel(raw) }
    }

    /// The body ended: starts the calls not started yet, waits for every
    /// result (on a thread of its own: the caller is not blocked) and returns
    /// the turn as JSON. STREAM_TRUNCATED when the body ended before the
    /// response's closing event. Once only.
    public func finish() async throws -> String {
        stateLock.lock()
        guard let raw, !finishing else {
            stateLock.unlock()
            throw CapstanError(status: Int32(CAPSTAN_ERR_WRONG_CONTEXT), message: "the stream is finished")
        }
        finishing = true
        stateLock.unlock()
        let handle = Handle(raw: raw)
        defer {
            feedLock.lock()
            stateLock.lock()
            capstan_stream_free(handle.raw)
            self.raw = nil
            stateLock.unlock()
            feedLock.unlock()
            sink.end()
        }
        return try await onOwnThread {
            try textOut { capstan_stream_finish(handle.raw, $0, $1) }
        }
    }
}

final class StreamSinkBox: @unchecked Sendable {
    let results: AsyncStream<ToolResult>.Continuation
    let text: AsyncStream<String>.Continuation
    init(results: AsyncStream<ToolResult>.Continuation, text: AsyncStream<String>.Continuation) {
        self.results = results
        self.text = text
    }

    func end() {
        results.finish()
        text.finish()
    }
}

private let streamTextTrampoline: capstan_text_fn = { userData, text, len in
    guard let userData else { return }
    let box = Unmanaged<StreamSinkBox>.fromOpaque(userData).takeUnretainedValue()
    box.text.yield(Capstan.text(text, len))
}

private let streamResultTrampoline: capstan_result_fn = { userData, result in
    guard let userData else { return }
    let box = Unmanaged<StreamSinkBox>.fromOpaque(userData).takeUnretainedValue()
    if let result {
        box.results.yield(ToolResult(result))
    } else {
        box.results.finish()
    }
}
