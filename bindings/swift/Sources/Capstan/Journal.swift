import CCapstan
import Foundation

/// Where a registry records its calls and finds them again (`capstan_journal`,
/// issue #47; docs/durable-calls.md). Attach one with
/// `ToolRegistry.setJournal` and run calls with `ExecOptions.runId`: each
/// call is recorded under the run id plus its call id, and a call with a
/// completed record is answered from it without running its tool. Freed on
/// deinit; a registry using it keeps it alive meanwhile.
public final class Journal: @unchecked Sendable {
    let raw: OpaquePointer

    private init(raw: OpaquePointer) { self.raw = raw }

    deinit { capstan_journal_free(raw) }

    /// A JSON Lines file, created if absent: record/replay fixtures a test
    /// checks in; one process at a time. Throws INVALID_ARGUMENT if it
    /// cannot be opened or holds a line that is not a record (naming it).
    public static func openJSONL(path: String) throws -> Journal {
        var out: OpaquePointer? = nil
        let status = path.withCString { capstan_journal_open_jsonl($0, path.utf8.count, &out) }
        guard status == 0, let out else { throw CapstanError.last(status) }
        return Journal(raw: out)
    }

    /// An SQLite database (WAL; several processes on one file); `fullSync`
    /// fsyncs every commit. Throws UNSUPPORTED in a library built without
    /// the `journal-sqlite` feature.
    public static func openSQLite(path: String, fullSync: Bool = false) throws -> Journal {
        var out: OpaquePointer? = nil
        let flags = fullSync ? UInt32(CAPSTAN_JOURNAL_FULL_SYNC) : 0
        let status = path.withCString { capstan_journal_open_sqlite($0, path.utf8.count, flags, &out) }
        guard status == 0, let out else { throw CapstanError.last(status) }
        return Journal(raw: out)
    }
}

extension ToolRegistry {
    /// Uses `journal` (nil: none) for every batch run with
    /// `ExecOptions.runId`, from the next batch on: a completed call is
    /// answered from it (a `.replayed` event); a changed tool, schema or
    /// arguments fails the call naming it; a call that started and never
    /// completed runs again if its tool is `.idempotent`, else ends
    /// "Outcome unknown:". With `replay`, no tool runs and nothing is
    /// written: a call missing from the journal fails naming it.
    public func setJournal(_ journal: Journal?, replay: Bool = false) throws {
        let flags = replay ? UInt32(CAPSTAN_JOURNAL_REPLAY) : 0
        let status = capstan_registry_set_journal(raw, journal?.raw, flags)
        withExtendedLifetime(journal) {}
        guard status == 0 else { throw CapstanError.last(status) }
    }
}
