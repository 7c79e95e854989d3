'use strict';
// journal.cjs: durable calls (issue #47): a journal a registry records its
// calls in, under the run id each batch is given (`runId`), and answers a
// completed call from without running its tool (docs/durable-calls.md).

const { api } = require('./native.cjs');
const { JOURNAL_FULL_SYNC } = require('./constants.cjs');
const { CapstanError, check } = require('./errors.cjs');

function pathBytes(path, what) {
  if (typeof path !== 'string' || path.length === 0) throw new TypeError(`${what}: path must be a non-empty string`);
  return Buffer.from(path, 'utf8');
}

/**
 * A journal: a JSON Lines file (record/replay fixtures, one process at a
 * time) or an SQLite database (several processes; a library built with the
 * journal-sqlite feature). Registry.setJournal attaches it; the registry
 * keeps what it needs, so close() may come first.
 */
class Journal {
  constructor(ptr) {
    this._ptr = ptr;
  }

  /**
   * Opens (creating it if absent) a JSON Lines journal. A line that is not a
   * record throws CapstanError CAPSTAN_ERR_INVALID_ARGUMENT naming it (the
   * file is left as it was).
   */
  static openJsonl(path) {
    const p = pathBytes(path, 'Journal.openJsonl');
    const out = [null];
    check(api.journal_open_jsonl(p, p.length, out));
    return new Journal(out[0]);
  }

  /**
   * Opens (creating it if absent) an SQLite journal (WAL, one transaction
   * per record). `fullSync`: fsync every commit. CAPSTAN_ERR_UNSUPPORTED in
   * a library built without the journal-sqlite feature.
   */
  static openSqlite(path, options = {}) {
    const p = pathBytes(path, 'Journal.openSqlite');
    const out = [null];
    check(api.journal_open_sqlite(p, p.length, options.fullSync ? JOURNAL_FULL_SYNC : 0, out));
    return new Journal(out[0]);
  }

  /** Frees the journal; registries using it keep it until they stop using it. */
  close() {
    if (this._ptr === null) return;
    api.journal_free(this._ptr);
    this._ptr = null;
  }

  [Symbol.dispose]() {
    this.close();
  }
}

// The journal's pointer, for Registry.setJournal.
function journalOf(journal) {
  if (!(journal instanceof Journal)) throw new TypeError('setJournal: a Journal (Journal.openJsonl / openSqlite) or null');
  if (journal._ptr === null) {
    throw new CapstanError({ status: 'CAPSTAN_ERR_STALE_HANDLE', status_code: 12, message: 'setJournal: the journal is closed' });
  }
  return journal._ptr;
}

module.exports = { Journal, journalOf };
