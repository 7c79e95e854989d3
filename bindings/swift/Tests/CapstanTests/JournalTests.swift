// The journal (issue #47) from Swift. Unverified here: there is no Swift
// toolchain on capstan's machines (see CapstanTests.swift); the C and C++
// tests (tests/c, bindings/cpp/tests/test_journal.cpp) cover the crash case.
import CCapstan
import XCTest

@testable import Capstan

private struct N: ToolArguments {
    let n: Int
    static let parametersSchema = #"{"type":"object","properties":{"n":{"type":"integer"}}}"#
}

private final class Runs: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() -> Int { lock.lock(); defer { lock.unlock() }; n += 1; return n }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}

final class JournalTests: XCTestCase {
    func testACompletedCallIsAnsweredFromTheJournalAndReplayFailsAMissingOne() async throws {
        let path = NSTemporaryDirectory() + "capstan-journal-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let runs = Runs()
        let run = ExecOptions(runId: "run-1")
        func registry() throws -> ToolRegistry {
            let r = try ToolRegistry()
            try r.register("count", flags: [.idempotent]) { (args: N) in .text("run \(runs.add()) n=\(args.n)") }
            return r
        }
        let call = #"[{"id":"c1","name":"count","arguments":{"n":1}}]"#
        for _ in 0..<2 {
            let r = try registry()
            try r.setJournal(try Journal.openJSONL(path: path))
            let res = try await r.execute(call, options: run)
            XCTAssertEqual(res.first?.content, "run 1 n=1")
        }
        XCTAssertEqual(runs.value, 1)

        let replaying = try registry()
        try replaying.setJournal(try Journal.openJSONL(path: path), replay: true)
        let missing = try await replaying.execute(#"[{"id":"c9","name":"count","arguments":{"n":9}}]"#, options: run)
        XCTAssertEqual(missing.first?.isError, true)
        XCTAssertTrue(missing.first?.content.contains("not in the recording") ?? false)
        XCTAssertEqual(runs.value, 1)
    }

    func testABadJournalFileIsRefusedNamingItsLine() throws {
        let path = NSTemporaryDirectory() + "capstan-bad-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #"{"kind":"nope"}"#.appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try Journal.openJSONL(path: path)) { error in
            XCTAssertTrue("\(error)".contains("record at line 1"))
        }
    }
}
