// Run with `swift test` where a Swift toolchain and an installed capstan
// (pkg-config capstan) exist. Not run in capstan's CI: there is no Swift
// toolchain there (see the README's "Swift" section).
import CCapstan
import XCTest

@testable import Capstan

private struct SumArguments: Decodable {
    let a: Int
    let b: Int
}

private struct NoArguments: Decodable {}

private let sumSchema = #"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}

final class CapstanTests: XCTestCase {
    private func registry() throws -> ToolRegistry {
        let registry = try ToolRegistry()
        try registry.register("sum", description: "Adds.", parameters: sumSchema) { (args: SumArguments) in
            .json("\(args.a + args.b)")
        }
        return registry
    }

    func testExecuteDecodesArgumentsAndReturnsResultsInOrder() async throws {
        let registry = try registry()
        let results = try await registry.execute(
            #"[{"id":"1","name":"sum","arguments":{"a":2,"b":3}},{"id":"2","name":"sum","arguments":"{\"a\":1,\"b\":1}"}]"#)
        XCTAssertEqual(results.map(\.content), ["5", "2"])
        XCTAssertEqual(results.map(\.outcome), [.ok, .ok])
        XCTAssertEqual(results.map(\.index), [0, 1])
    }

    func testModelErrorsAreResults() async throws {
        let registry = try registry()
        let results = try await registry.execute(
            #"[{"id":"1","name":"sum","arguments":{"a":"x"}},{"id":"2","name":"nope","arguments":{}}]"#)
        XCTAssertEqual(results.map(\.outcome), [.invalidArguments, .unknownTool])
        XCTAssertTrue(results[1].content.contains("sum"))
    }

    func testThrowingToolBecomesToolError() async throws {
        struct Boom: Error, CustomStringConvertible { var description: String { "boom from swift" } }
        let registry = try ToolRegistry()
        try registry.register("boom") { (_: NoArguments) -> ToolOutput in throw Boom() }
        let results = try await registry.execute(#"{"id":"1","name":"boom","arguments":{}}"#)
        XCTAssertEqual(results.first?.outcome, .toolError)
        XCTAssertTrue(results.first?.content.contains("boom from swift") ?? false)
    }

    func testRegistrationErrorsThrowCapstanError() throws {
        let registry = try ToolRegistry()
        XCTAssertThrowsError(try registry.register("bad name!") { (_: NoArguments) in .text("") }) { error in
            XCTAssertEqual((error as? CapstanError)?.status, Int32(CAPSTAN_ERR_INVALID_NAME))
            XCTAssertFalse((error as? CapstanError)?.message.isEmpty ?? true)
        }
    }

    func testSubmitStreamsEveryResult() async throws {
        let registry = try registry()
        let calls = "[" + (0..<20).map { #"{"id":"\#($0)","name":"sum","arguments":{"a":\#($0),"b":0}}"# }
            .joined(separator: ",") + "]"
        var seen = Set<Int>()
        for await result in try registry.submit(calls) {
            XCTAssertEqual(result.content, "\(result.index)")
            seen.insert(result.index)
        }
        XCTAssertEqual(seen, Set(0..<20))
    }

    func testCancellingTheTaskCancelsTheBatch() async throws {
        let registry = try ToolRegistry()
        let started = Counter()
        try registry.register("slow") { (_: NoArguments) in
            started.add()
            try? await Task.sleep(nanoseconds: 300_000_000)
            return .text("done")
        }
        let calls = "[" + (0..<3).map { #"{"id":"\#($0)","name":"slow","arguments":{}}"# }.joined(separator: ",") + "]"
        let task = Task { try await registry.execute(calls, options: ExecOptions(limit: 1)) }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("execute should throw CancellationError")
        } catch is CancellationError {}
        try await Task.sleep(nanoseconds: 800_000_000)
        XCTAssertEqual(started.value, 1)  // the two queued calls never started
    }

    func testApproverDecides() async throws {
        let registry = try ToolRegistry()
        try registry.register("delete", flags: .requiresApproval) { (_: NoArguments) in .text("deleted") }
        try registry.setApprover { request in
            request.id == "yes" ? .approve : .deny(reason: "not this one")
        }
        let results = try await registry.execute(
            #"[{"id":"yes","name":"delete","arguments":{}},{"id":"no","name":"delete","arguments":{}}]"#)
        XCTAssertEqual(results.map(\.outcome), [.ok, .denied])
        XCTAssertTrue(results[1].content.contains("not this one"))
    }

    @MainActor
    func testMainThreadToolsStartOnlyInsidePump() async throws {
        let registry = try ToolRegistry()
        let ran = Counter()
        try registry.register("spawn", flags: .mainThread) { (_: NoArguments) in
            XCTAssertTrue(Thread.isMainThread)
            ran.add()
            return .text("spawned")
        }
        let stream = try registry.submit(#"{"id":"1","name":"spawn","arguments":{}}"#)
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(ran.value, 0)
        let collector = Task {
            var results: [ToolResult] = []
            for await r in stream { results.append(r) }
            return results
        }
        for _ in 0..<200 where ran.value == 0 {
            registry.pump(budgetMs: 1)
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let collected = await collector.value
        XCTAssertEqual(ran.value, 1)
        XCTAssertEqual(collected.first?.content, "spawned")
    }

    func testProviderFunctions() async throws {
        let registry = try registry()
        XCTAssertTrue(try registry.tools(.openAIChat).contains(#""name":"sum""#))
        let response = #"{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"sum","arguments":"{\"a\":2,\"b\":3}"}}]}}]}"#
        let calls = try ToolRegistry.parseCalls(.openAIChat, response: response)
        XCTAssertTrue(calls.contains("call_1"))
        let messages = try registry.runTurn(.openAIChat, response: response)
        XCTAssertTrue(messages.contains(#""tool_call_id":"call_1""#))
        XCTAssertThrowsError(try ToolRegistry.parseCalls(.openAIChat, response: "{"))
    }

    /// The C constants Swift code needs are usable from Swift.
    func testConstantsImportAsUsableValues() throws {
        XCTAssertEqual(ToolFlags.requiresApproval.rawValue, 1)
        XCTAssertEqual(ToolFlags.serial.rawValue, 2)
        XCTAssertEqual(ToolFlags.mainThread.rawValue, 4)
        XCTAssertEqual(Format.gemini.rawValue, UInt32(CAPSTAN_FORMAT_GEMINI))
        XCTAssertEqual(Format.mcp.rawValue, UInt32(CAPSTAN_FORMAT_MCP))
        XCTAssertEqual(Outcome.denied.rawValue, UInt32(CAPSTAN_OUTCOME_DENIED))
        XCTAssertEqual(capstan_name_check("fine_name", capstanNTS), Int32(CAPSTAN_OK))
    }
}
