// Run with `swift test` where a Swift toolchain and an installed capstan
// (pkg-config capstan) exist. Not run in capstan's CI: there is no Swift
// toolchain there (see the README's "Swift" section).
import CCapstan
import XCTest

@testable import Capstan

// The schema is declared next to the type it describes (ToolArguments).
private struct SumArguments: ToolArguments {
    let a: Int
    let b: Int
    static let parametersSchema =
        #"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#
}

private let sumSchema = SumArguments.parametersSchema

private struct LieArguments: ToolArguments {
    let lie: Bool?
    static let parametersSchema = #"{"type":"object","properties":{"lie":{"type":"boolean"}}}"#
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}

final class CapstanTests: XCTestCase {
    private func registry() throws -> ToolRegistry {
        let registry = try ToolRegistry()
        try registry.register("sum", description: "Adds.") { (args: SumArguments) in
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

    func testASecondRegistrationIsRefusedUnlessReplace() async throws {
        let registry = try ToolRegistry()
        try registry.register("f") { (_: NoArguments) in .text("old") }
        XCTAssertThrowsError(try registry.register("f") { (_: NoArguments) in .text("new") }) { error in
            XCTAssertEqual((error as? CapstanError)?.status, Int32(CAPSTAN_ERR_INVALID_ARGUMENT))
            XCTAssertTrue((error as? CapstanError)?.message.contains(#""f" is already registered"#) ?? false)
        }
        let before = try await registry.execute(#"{"id":"1","name":"f"}"#)
        XCTAssertEqual(before.first?.content, "old")
        try registry.register("f", flags: .replace) { (_: NoArguments) in .text("new") }
        let after = try await registry.execute(#"{"id":"2","name":"f"}"#)
        XCTAssertEqual(after.first?.content, "new")
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
        try registry.registerOnMainActor("spawn") { (_: NoArguments, _: ToolContext) in
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
        let messages = try await registry.runTurn(.openAIChat, response: response)
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
        XCTAssertEqual(ToolEvent.Kind.finished.rawValue, UInt32(CAPSTAN_EVENT_FINISHED))
        XCTAssertEqual(ToolEvent.Kind.progress.rawValue, UInt32(CAPSTAN_EVENT_PROGRESS))
        XCTAssertEqual(ToolEvent.Kind.log.rawValue, UInt32(CAPSTAN_EVENT_LOG))
        XCTAssertEqual(LogLevel.debug.rawValue, UInt32(CAPSTAN_LOG_DEBUG))
        XCTAssertEqual(LogLevel.emergency.rawValue, UInt32(CAPSTAN_LOG_EMERGENCY))
        XCTAssertEqual(ExportFlags.geminiLower.rawValue, UInt32(CAPSTAN_EXPORT_GEMINI_LOWER))
    }

    // MARK: - what 0.4 adds (issue #34); never compiled here (no Swift toolchain)

    func testASchemaGivenAsAStringStillWorks() async throws {
        let registry = try ToolRegistry()
        try registry.register("add", parameters: sumSchema) { (args: SumArguments) in .json("\(args.a + args.b)") }
        let results = try await registry.execute(#"{"id":"1","name":"add","arguments":{"a":1}}"#)
        XCTAssertEqual(results.first?.outcome, .invalidArguments)  // b is required: validation is on
    }

    func testTheEventHookSeesStartsAndFinishesAndStatsCountThem() async throws {
        let registry = try registry()
        let events = EventLog()
        try registry.setEventHook { events.add($0) }
        _ = try await registry.execute(
            #"[{"id":"e1","name":"sum","arguments":{"a":1,"b":2}},{"id":"e2","name":"sum","arguments":{"a":"x"}}]"#)
        let finished = events.all.filter { $0.kind == .finished }.sorted { $0.index < $1.index }
        XCTAssertEqual(finished.map(\.id), ["e1", "e2"])
        XCTAssertEqual(finished.map(\.outcome), [.ok, .invalidArguments])
        XCTAssertTrue(events.all.contains { $0.kind == .started && $0.id == "e1" && $0.tool == "sum" })
        let stats = try JSONSerialization.jsonObject(with: Data(try registry.statsJSON().utf8)) as? [String: Any]
        let sum = (stats?["tools"] as? [String: Any])?["sum"] as? [String: Any]
        XCTAssertEqual(sum?["calls"] as? Int, 2)
        try registry.setEventHook(nil)
    }

    func testProgressReachesTheEventHookAndBadReportsThrow() async throws {
        let registry = try ToolRegistry()
        let refused = Counter()
        try registry.register("work") { (_: NoArguments, ctx: ToolContext) in
            XCTAssertTrue(try ctx.progress(1, total: 4, message: "one"))
            do { try ctx.progress(1, total: 4) } catch let e as CapstanError where e.status == Int32(CAPSTAN_ERR_INVALID_ARGUMENT) {
                refused.add()
            }
            do { try ctx.progress(.nan) } catch is CapstanError { refused.add() }
            try ctx.progress(2.5)
            return .text("done")
        }
        let events = EventLog()
        try registry.setEventHook { events.add($0) }
        let results = try await registry.execute(#"{"id":"p1","name":"work","arguments":{}}"#)
        XCTAssertEqual(results.first?.content, "done")
        XCTAssertEqual(refused.value, 2)
        let progress = events.all.filter { $0.kind == .progress }
        XCTAssertEqual(progress.map(\.progress), [1, 2.5])
        XCTAssertEqual(progress.map(\.total), [4, 0])
        XCTAssertEqual(progress.map(\.message), ["one", nil])
        XCTAssertEqual(progress.first?.id, "p1")
    }

    func testLogMessagesReachTheEventHookInOrderAndBadOnesThrow() async throws {
        let registry = try ToolRegistry()
        let refused = Counter()
        let kept = ContextBox()
        try registry.register("chatty") { (_: NoArguments, ctx: ToolContext) in
            kept.set(ctx)
            XCTAssertTrue(try ctx.log(.info, "starting"))
            do {
                try ctx.log(.info, String(repeating: "x", count: 64 * 1024 + 1))
            } catch let e as CapstanError where e.status == Int32(CAPSTAN_ERR_INVALID_ARGUMENT) {
                refused.add()
            }
            try ctx.log(.warning, "disk almost full")
            return .text("done")
        }
        let events = EventLog()
        try registry.setEventHook { events.add($0) }
        let results = try await registry.execute(#"{"id":"l1","name":"chatty","arguments":{}}"#)
        XCTAssertEqual(results.first?.content, "done")
        XCTAssertEqual(refused.value, 1)
        // After the tool returned: false, and nothing reaches the hook.
        XCTAssertEqual(try kept.get()?.log(.error, "late"), false)
        let logs = events.all.filter { $0.kind == .log }
        XCTAssertEqual(logs.map(\.level), [.info, .warning])
        XCTAssertEqual(logs.map(\.message), ["starting", "disk almost full"])
        XCTAssertEqual(logs.first?.id, "l1")
        XCTAssertEqual(logs.first?.tool, "chatty")
        // A level outside MCP's eight cannot be made.
        XCTAssertNil(LogLevel(rawValue: 8))
        XCTAssertNil(LogLevel(name: "warn"))
        XCTAssertEqual(LogLevel(name: "critical"), .critical)
        XCTAssertEqual(LogLevel.allCases.map(\.name),
                       ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"])
    }

    func testATimeoutCancelsTheSwiftTask() async throws {
        let registry = try ToolRegistry()
        let sawCancellation = Counter()
        try registry.register("stuck", timeoutMs: 50) { (_: NoArguments, ctx: ToolContext) in
            do {
                try await Task.sleep(nanoseconds: 5_000_000_000)
            } catch is CancellationError {
                XCTAssertTrue(ctx.isCancelled)
                sawCancellation.add()
                throw CancellationError()
            }
            return .text("late")
        }
        let results = try await registry.execute(#"{"id":"1","name":"stuck","arguments":{}}"#)
        XCTAssertEqual(results.first?.outcome, .timeout)
        for _ in 0..<100 where sawCancellation.value == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertEqual(sawCancellation.value, 1)  // the task was cancelled, not left sleeping 5 s
    }

    func testADeadlineEndsACallSayingSo() async throws {
        let registry = try ToolRegistry()
        try registry.register("stuck") { (_: NoArguments) in
            try await Task.sleep(nanoseconds: 5_000_000_000)
            return .text("late")
        }
        let results = try await registry.execute(
            #"{"id":"1","name":"stuck","arguments":{}}"#, options: ExecOptions(deadlineMs: 60))
        XCTAssertEqual(results.first?.outcome, .timeout)
        XCTAssertTrue(results.first?.content.contains("deadline of 60 ms") ?? false, results.first?.content ?? "")
    }

    func testWholeTurnStartsWithTheAssistantMessageHoldingTheThinkingBlock() async throws {
        let registry = try registry()
        let response = #"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"add them","signature":"c2ln"},{"type":"tool_use","id":"toolu_1","name":"sum","input":{"a":1,"b":2}}],"stop_reason":"tool_use"}"#
        let turn = try await registry.runTurn(.anthropic, response: response, wholeTurn: true)
        let messages = try JSONSerialization.jsonObject(with: Data(turn.utf8)) as? [[String: Any]]
        XCTAssertEqual(messages?.count, 2)
        XCTAssertEqual(messages?.first?["role"] as? String, "assistant")
        let blocks = messages?.first?["content"] as? [[String: Any]]
        XCTAssertEqual(blocks?.first?["signature"] as? String, "c2ln")
        XCTAssertTrue(turn.contains(#""tool_use_id":"toolu_1""#))
    }

    @MainActor
    func testRunTurnFromTheMainActorLeavesItFreeToPump() async throws {
        let registry = try ToolRegistry()
        try registry.registerOnMainActor("ui") { (_: NoArguments, _: ToolContext) in .text("drawn") }
        let response = #"{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ui","arguments":"{}"}}]}}]}"#
        let turn = Task { try await registry.runTurn(.openAIChat, response: response) }
        // runTurn blocks a thread of its own, not this actor: it can pump.
        for _ in 0..<500 {
            registry.pump(budgetMs: 1)
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        let messages = try await turn.value
        XCTAssertTrue(messages.contains("drawn"))
    }

    func testStrictExportAndGeminiLowering() throws {
        let registry = try ToolRegistry()
        try registry.register(
            "t", parameters: #"{"type":"object","$defs":{"p":{"type":"string"}},"properties":{"v":{"$ref":"#/$defs/p"}},"required":["v"]}"#
        ) { (_: [String: String]) in .text("") }
        let strict = try registry.exportTools(.openAIChat, flags: .strict)
        XCTAssertTrue(strict.tools.contains(#""strict":true"#))
        let lowered = try registry.exportTools(.gemini, flags: .geminiLower).tools
        XCTAssertFalse(lowered.contains("parametersJsonSchema"))
        XCTAssertTrue(try registry.tools(.gemini).contains("parametersJsonSchema"))
    }

    func testAStreamStartsACallBeforeTheBodyEnds() async throws {
        let registry = try registry()
        let stream = try registry.stream(.openAIChat, earlyDispatch: true)
        try stream.feed(#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"sum","arguments":"{\"a\":1,\"b\":2}"}}]}}]}"# + "\n\n")
        var iterator = stream.results.makeAsyncIterator()
        let first = await iterator.next()  // arrives before the body's end was fed
        XCTAssertEqual(first?.content, "3")
        try stream.feed(#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"# + "\n\ndata: [DONE]\n\n")
        let done = try await stream.finish()
        XCTAssertTrue(done.contains(#""tool_call_id":"call_1""#))
    }

    func testServeAndMountOverHTTP() async throws {
        let served = try registry()
        let server = try served.serveMCP()
        XCTAssertTrue(server.url.hasPrefix("http://127.0.0.1:"))
        let client = try ToolRegistry()
        let mount = try await client.mountMCP(.url(server.url, prefix: "remote_"))
        XCTAssertTrue(try mount.infoJSON().contains(#""remote_sum":"sum""#))
        let results = try await client.execute(#"{"id":"1","name":"remote_sum","arguments":{"a":20,"b":22}}"#)
        XCTAssertEqual(results.first?.content, "42")
        try await mount.close()
        await server.stop()
    }

    func testContentPartsReachTheResult() async throws {
        let registry = try ToolRegistry()
        try registry.register("chart") { (_: NoArguments) in
            .parts([.text("a chart"), .image(Data([0x89, 0x50, 0x4e, 0x47]), mimeType: "image/png")])
        }
        let result = try await registry.execute(#"{"id":"1","name":"chart","arguments":{}}"#).first
        XCTAssertEqual(result?.outcome, .ok)
        XCTAssertTrue(result?.partsJSON?.contains(#""mimeType":"image/png""#) ?? false)
    }

    func testCheckHistoryFindsAndRepairsAMissingResult() throws {
        let history = #"[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"sum","arguments":"{}"}}]}]"#
        let (report, repaired) = try ToolRegistry.checkHistory(.openAIChat, history: history, repair: true)
        XCTAssertTrue(report.contains("missing_result"))
        XCTAssertTrue(repaired?.contains(#""tool_call_id":"c1""#) ?? false)
    }

    func testSearchAndTheSearchToolLoadDeferredTools() async throws {
        let registry = try registry()
        try registry.register("weather", description: "Current weather for a city.", flags: .deferred) { (_: NoArguments) in
            .text("sunny")
        }
        XCTAssertEqual(try registry.search("weather city").first?.name, "weather")
        XCTAssertFalse(try registry.tools(.openAIChat).contains("weather"))
        try registry.addSearchTool()
        _ = try await registry.execute(#"{"id":"s","name":"tool_search","arguments":{"query":"weather"}}"#)
        XCTAssertTrue(try registry.tools(.openAIChat).contains(#""name":"weather""#))
        try registry.unloadTools()
        XCTAssertFalse(try registry.tools(.openAIChat).contains(#""name":"weather""#))
    }

    func testMcpMetadataIsExportedAndAFailingOutputSchemaIsAToolError() async throws {
        let registry = try ToolRegistry()
        let meta = McpToolMeta(
            title: "Addition", annotations: ToolAnnotations(readOnlyHint: true),
            outputSchema: #"{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}"#,
            icons: [ToolIcon(src: "https://example.com/add.png", mimeType: "image/png")])
        try registry.register("sum", meta: meta) { (args: LieArguments) in .json(args.lie == true ? #"{"sum":"3"}"# : #"{"sum":3}"#) }
        let mcp = try registry.tools(.mcp)
        XCTAssertTrue(mcp.contains(#""title":"Addition""#))
        XCTAssertTrue(mcp.contains(#""readOnlyHint":true"#))
        XCTAssertTrue(mcp.contains(#""outputSchema""#))
        XCTAssertTrue(mcp.contains("https://example.com/add.png"))
        let results = try await registry.execute(
            #"[{"id":"a","name":"sum","arguments":{}},{"id":"b","name":"sum","arguments":{"lie":true}}]"#)
        XCTAssertEqual(results.map(\.outcome), [.ok, .toolError])
        XCTAssertTrue(results[1].content.contains("outputSchema"))
    }

    func testErrorsCarryTheProviderFieldsAndTheSchemaPointer() throws {
        XCTAssertThrowsError(
            try ToolRegistry.parseCalls(.anthropic, response: #"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#)
        ) { error in
            let e = error as? CapstanError
            XCTAssertEqual(e?.status, Int32(CAPSTAN_ERR_PROVIDER_ERROR))
            XCTAssertEqual(e?.provider?.kind, "rate_limit_error")
            XCTAssertEqual(e?.provider?.message, "slow down")
        }
        let registry = try ToolRegistry()
        XCTAssertThrowsError(
            try registry.register("bad", parameters: #"{"type":"object","properties":{"a":{"type":"nope"}}}"#) { (_: NoArguments) in
                .text("")
            }
        ) { error in
            let e = error as? CapstanError
            XCTAssertEqual(e?.status, Int32(CAPSTAN_ERR_INVALID_SCHEMA))
            XCTAssertEqual(e?.pointer, "/properties/a/type")
        }
    }

    func testACallerThatCannotAnswerGetsAToolErrorSayingWhy() async throws {
        let registry = try ToolRegistry()
        let seen = Counter()
        try registry.register("greet") { (_: NoArguments, context: ToolContext) -> ToolOutput in
            if context.input == #"{"canAsk":[]}"# { seen.add() }
            throw InputRequired(
                requests: #"{"name":{"method":"elicitation/create","params":{"message":"Your name?"}}}"#, state: "asked")
        }
        let result = try await registry.execute(#"{"id":"1","name":"greet","arguments":{}}"#)
        XCTAssertEqual(result.first?.outcome, .toolError)
        XCTAssertTrue(result.first?.content.contains("the tool asked for input: ") ?? false)
        XCTAssertTrue(result.first?.content.contains("cannot be asked") ?? false)
        XCTAssertEqual(seen.value, 1)
    }

    func testOAuthClosuresAreReleasedWhenTheOptionsAreRefused() async throws {
        final class Probe: @unchecked Sendable {}
        weak var released: Probe?
        let registry = try ToolRegistry()
        do {
            let probe = Probe()
            released = probe
            // authorize without redirectURI: INVALID_ARGUMENT, and capstan lets go of the closures.
            let oauth = McpOAuth(authorize: { _ in _ = probe; return nil })
            do {
                _ = try await registry.mountMCP(McpMountOptions(url: "http://127.0.0.1:9/mcp", oauth: oauth))
                XCTFail("mounted")
            } catch let error as CapstanError {
                XCTAssertEqual(error.status, Int32(CAPSTAN_ERR_INVALID_ARGUMENT))
            }
        }
        // capstan may let go on one of its threads, soon after: a bounded wait.
        for _ in 0..<100 where released != nil { try await Task.sleep(nanoseconds: 50_000_000) }
        XCTAssertNil(released)
    }

    func testGrantsWithoutAUserRefuseBadOptionsNamingTheProblemAndReleaseTheClosures() async throws {
        final class Probe: @unchecked Sendable {}
        weak var released: Probe?
        let registry = try ToolRegistry()
        do {
            let probe = Probe()
            released = probe
            let idp = McpIdentityProvider(
                issuer: "https://idp.example", tokenEndpoint: "https://idp.example/token", clientID: "host")
            let cases: [(McpOAuth, String)] = [
                (McpOAuth(clientID: "c", clientSecret: "s", identityProvider: idp),
                 "opts.oauth_idp_* needs opts.oauth_assertion"),
                (McpOAuth(clientID: "c", assertion: { _ in _ = probe; return nil },
                          identityProvider: McpIdentityProvider(issuer: "https://idp.example", tokenEndpoint: "", clientID: "")),
                 "go together"),
                (McpOAuth(clientKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
                 "opts.oauth_client_key needs opts.oauth_client_id"),
                (McpOAuth(clientID: "keyed-1", clientKey: "not a key"), "opts.oauth_client_key: "),
            ]
            for (oauth, why) in cases {
                do {
                    _ = try await registry.mountMCP(McpMountOptions(url: "http://127.0.0.1:9/mcp", oauth: oauth))
                    XCTFail("mounted: \(why)")
                } catch let error as CapstanError {
                    XCTAssertEqual(error.status, Int32(CAPSTAN_ERR_INVALID_ARGUMENT))
                    XCTAssertTrue(error.message.contains(why), error.message)
                }
            }
        }
        // capstan may let go on one of its threads, soon after: a bounded wait.
        for _ in 0..<100 where released != nil { try await Task.sleep(nanoseconds: 50_000_000) }
        XCTAssertNil(released)
    }

    /// A served tool that asks for a name (a thrown InputRequired) until it gets one.
    private func greeter() throws -> ToolRegistry {
        let served = try ToolRegistry()
        try served.register("greet") { (_: NoArguments, context: ToolContext) -> ToolOutput in
            guard context.input.contains(#""action":"accept""#) else {
                throw InputRequired(
                    requests: #"{"name":{"method":"elicitation/create","params":{"message":"What is your name?","#
                        + #""requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}"#,
                    state: "round-1")
            }
            return .text(context.input.contains(#""name":"Ada""#) ? "Hello, Ada!" : "Hello, who?")
        }
        return served
    }

    func testAMountsHostAnswersWhatTheServerAsksInBothEras() async throws {
        final class Asked: @unchecked Sendable {
            private let lock = NSLock()
            private var seen: [String] = []
            func add(_ s: String) { lock.lock(); seen.append(s); lock.unlock() }
            var values: [String] { lock.lock(); defer { lock.unlock() }; return seen }
        }
        let server = try greeter().serveMCP()
        // nil: 2026-07-28 (an InputRequiredResult, answered, the call sent
        // again); 2025-11-25: elicitation/create mid-call, answered in place.
        for (version, wantTool) in [(nil, "in_greet"), ("2025-11-25", "(none)")] as [(String?, String)] {
            let asked = Asked()
            let client = try ToolRegistry()
            let input = McpInput(methods: .elicitation, answer: { tool, method, params in
                // A 2026-07-28 request belongs to the call; an older one names none.
                asked.add(tool ?? "(none)")
                guard method == "elicitation/create", params.contains("What is your name?") else { return nil }
                return #"{"action":"accept","content":{"name":"Ada"}}"#
            })
            let mount = try await client.mountMCP(
                McpMountOptions(url: server.url, prefix: "in_", connectTimeoutMs: 60_000, protocolVersion: version, input: input))
            let result = try await client.execute(#"{"id":"1","name":"in_greet","arguments":{}}"#).first
            XCTAssertEqual(result?.outcome, .ok)
            XCTAssertEqual(result?.content, "Hello, Ada!")
            try await mount.close()
            XCTAssertEqual(asked.values, [wantTool])
        }
        await server.stop()
    }

    func testAHostThatGivesNoAnswerFailsTheCallAndTheClosureIsReleased() async throws {
        struct Refused: Error {}
        final class Probe: @unchecked Sendable {}
        weak var released: Probe?
        let server = try greeter().serveMCP()
        let client = try ToolRegistry()
        let huge = #"{"action":"accept","content":{"name":""# + String(repeating: "a", count: 1 << 20) + #""}}"#
        let answers: [@Sendable () throws -> String?] = [{ nil }, { "" }, { throw Refused() }, { huge }]
        for give in answers {
            let input = McpInput(methods: [.elicitation, .roots], answer: { _, _, _ in try give() })
            let mount = try await client.mountMCP(McpMountOptions(url: server.url, prefix: "in_", input: input))
            let result = try await client.execute(#"{"id":"1","name":"in_greet","arguments":{}}"#).first
            XCTAssertEqual(result?.outcome, .toolError)
            XCTAssertTrue(result?.content.contains("the host gave no answer to elicitation/create") ?? false)
            try await mount.close()
        }
        // Methods without an answer, or an answer without methods: INVALID_ARGUMENT,
        // and capstan lets go of the closure.
        do {
            let probe = Probe()
            released = probe
            for input in [
                McpInput(methods: .sampling, answer: nil),
                McpInput(methods: [], answer: { _, _, _ in _ = probe; return nil }),
            ] {
                do {
                    _ = try await client.mountMCP(McpMountOptions(url: server.url, prefix: "in_", input: input))
                    XCTFail("mounted")
                } catch let error as CapstanError {
                    XCTAssertEqual(error.status, Int32(CAPSTAN_ERR_INVALID_ARGUMENT))
                }
            }
        }
        // capstan may let go on one of its threads, soon after: a bounded wait.
        for _ in 0..<100 where released != nil { try await Task.sleep(nanoseconds: 50_000_000) }
        XCTAssertNil(released)
        await server.stop()
    }

    func testRuntimeShutdownJoinsTheThreadsAndCapstanGoesOn() async throws {
        do {
            let registry = try registry()
            _ = try await registry.execute(#"{"id":"1","name":"sum","arguments":{"a":1,"b":1}}"#)
        }
        XCTAssertTrue(try await CapstanRuntime.shutdown(timeoutMs: 5000))
        let again = try registry()
        XCTAssertEqual(try await again.execute(#"{"id":"1","name":"sum","arguments":{"a":1,"b":2}}"#).first?.content, "3")
    }
}

private final class ContextBox: @unchecked Sendable {
    private let lock = NSLock()
    private var ctx: ToolContext?
    func set(_ c: ToolContext) { lock.lock(); ctx = c; lock.unlock() }
    func get() -> ToolContext? { lock.lock(); defer { lock.unlock() }; return ctx }
}

private final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ToolEvent] = []
    func add(_ e: ToolEvent) { lock.lock(); events.append(e); lock.unlock() }
    var all: [ToolEvent] { lock.lock(); defer { lock.unlock() }; return events }
}
