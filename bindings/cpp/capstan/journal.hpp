// capstan/journal.hpp: durable calls (Journal): where a registry records its calls under a run id
// and answers a completed one without running its tool (capstan.h section "Durable calls: journals";
// docs/durable-calls.md). Registry::set_journal attaches one; ExecOptions::run_id names the run.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_JOURNAL
#define CAPSTAN_HPP_JOURNAL

#include "error.hpp"

namespace capstan {

/// How a registry uses its journal (Registry::set_journal).
enum class JournalMode : std::uint32_t {
    /// Record every call run with a run id; answer completed ones from the journal.
    record = 0,
    /// Run no tool and write nothing: a call missing from the journal fails naming it.
    replay = CAPSTAN_JOURNAL_REPLAY,
};

/// A journal kept by the host (its own database or durable engine), for
/// Journal::create(JournalStore). Both members run on the thread running the
/// call (several at once) and must not call into a registry using the
/// journal. An exception, or false from record, fails the call (a failed
/// `started` record keeps the tool from running).
struct JournalStore {
    /// Stores one record (a JSON object) durably before returning; a later
    /// `completed` record of a (run, call) key replaces its `started`.
    std::function<bool(std::string_view record_json)> record;
    /// The record of a key (`completed` if any, else `started`), or
    /// std::nullopt if none.
    std::function<std::optional<std::string>(std::string_view run_id, std::string_view call_id)> lookup;
};

/// A journal (capstan_journal), move-only RAII: the destructor frees it, and
/// a registry using it keeps it alive until the registry is freed or given
/// another journal, so the two may go in any order. Thread-safe.
class Journal {
public:
    /// A JSON Lines file (record/replay fixtures a test checks in; one
    /// process at a time), created if absent. INVALID_ARGUMENT if it cannot be
    /// opened or holds a line that is not a record (the message names it).
    static Expected<Journal> open_jsonl(std::string_view path) {
        capstan_journal *raw = nullptr;
        capstan_status st = capstan_journal_open_jsonl(detail::ptr(path), path.size(), &raw);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return Journal(raw);
    }
    /// An SQLite database (WAL; several processes on one file); full_sync
    /// fsyncs every commit. UNSUPPORTED without the journal-sqlite feature.
    static Expected<Journal> open_sqlite(std::string_view path, bool full_sync = false) {
        capstan_journal *raw = nullptr;
        capstan_status st = capstan_journal_open_sqlite(detail::ptr(path), path.size(),
                                                        full_sync ? CAPSTAN_JOURNAL_FULL_SYNC : 0u, &raw);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return Journal(raw);
    }
    /// The host's own store (capstan_journal_new); both functions must be set.
    static Expected<Journal> create(JournalStore store) {
        if (!store.record || !store.lookup)
            return Error(CAPSTAN_ERR_NULL_PARAMETER, "JournalStore needs both record and lookup");
        capstan_journal_callbacks cbs = CAPSTAN_JOURNAL_CALLBACKS_INIT;
        cbs.record = &record_thunk;
        cbs.lookup = &lookup_thunk;
        cbs.user_data = new JournalStore(std::move(store));
        cbs.destroy = [](void *ud) { delete static_cast<JournalStore *>(ud); };
        capstan_journal *raw = nullptr;
        capstan_status st = capstan_journal_new(&cbs, &raw);  // on failure destroy has run
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return Journal(raw);
    }

    Journal(Journal &&o) noexcept : raw_(std::exchange(o.raw_, nullptr)) {}
    Journal &operator=(Journal &&o) noexcept {
        if (this != &o) {
            capstan_journal_free(raw_);
            raw_ = std::exchange(o.raw_, nullptr);
        }
        return *this;
    }
    Journal(const Journal &) = delete;
    Journal &operator=(const Journal &) = delete;
    ~Journal() { capstan_journal_free(raw_); }

    capstan_journal *get() const noexcept { return raw_; }

private:
    explicit Journal(capstan_journal *raw) noexcept : raw_(raw) {}

    static std::int32_t record_thunk(void *ud, const char *json, std::size_t len) noexcept {
#if CAPSTAN_HPP_EXCEPTIONS
        try {
            return static_cast<JournalStore *>(ud)->record(std::string_view(json, len)) ? 0 : 1;
        } catch (...) {
            return 1;
        }
#else
        return static_cast<JournalStore *>(ud)->record(std::string_view(json, len)) ? 0 : 1;
#endif
    }
    static std::int32_t lookup_thunk(void *ud, const char *run, std::size_t run_len, const char *call,
                                     std::size_t call_len, capstan_journal_answer *answer) noexcept {
#if CAPSTAN_HPP_EXCEPTIONS
        try {
#endif
            std::optional<std::string> found =
                static_cast<JournalStore *>(ud)->lookup(std::string_view(run, run_len), std::string_view(call, call_len));
            if (!found) return 0;
            return capstan_journal_answer_set(answer, found->data(), found->size()) == CAPSTAN_OK ? 0 : 1;
#if CAPSTAN_HPP_EXCEPTIONS
        } catch (...) {
            return 1;
        }
#endif
    }

    capstan_journal *raw_ = nullptr;
};

}  // namespace capstan

#endif  // CAPSTAN_HPP_JOURNAL
