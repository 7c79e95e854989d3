'use strict';
// journal.cjs: durable calls (issue #47): a journal a registry records its
// calls in, under the run id each batch is given (`runId`), and answers a
// completed call from without running its tool (docs/durable-calls.md).

const native = require('./native.cjs');
const { koffi, api } = native;
const { JOURNAL_FULL_SYNC } = require('./constants.cjs');
const { CapstanError, check } = require('./errors.cjs');
const { keys } = require('./keys.cjs');

function pathBytes(path, what) {
  if (typeof path !== 'string' || path.length === 0) throw new TypeError(`${what}: path must be a non-empty string`);
  return Buffer.from(path, 'utf8');
}

// --- the host's own store (Journal.custom) ---------------------------------
//
// capstan calls `record` and `lookup` on the thread running the call: the JS
// thread (inside capstan_batch_submit, capstan_call_return, the pump) or one
// of its own (a pool worker starting a call, the timer thread ending one at
// its timeout, libuv's pool running a whole turn). koffi runs the trampoline
// on the JS thread either way, holding a thread of capstan's until the event
// loop got to it, as it does for the approver: the store's methods are
// synchronous and always run on the JS thread. What keeps that from
// deadlocking is that the JS thread never waits on capstan while such a
// thread may wait for it: a registry given a custom store closes without
// waiting (Registry._free).

// What a trampoline returns to capstan, which puts the number in the call's
// error ("the host's record returned 1"); the error itself goes to onError.
const STORE_OK = 0;
const STORE_THREW = 1;
const STORE_ASYNC = 2;
const STORE_BAD_ANSWER = 3;

// key (the journal's user_data) -> { store, onError, onRelease }; dropped by
// capstan's destroy, once the journal and every registry using it are gone.
const stores = new Map();

function decodeText(ptr, len) {
  const n = Number(len);
  return ptr === null || n === 0 ? '' : koffi.decode.string(ptr, n);
}

function isThenable(v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
}

// Hands a store's failure to onError (default: a process warning), never
// letting anything cross back into capstan; the code capstan gets.
function failed(entry, code, error, info) {
  try {
    if (entry.onError) entry.onError(error, info);
    else process.emitWarning(`the journal store's ${info.op} failed for call "${info.callId}" (run "${info.runId}"): ${error instanceof Error ? error.message : String(error)}`, 'CapstanJournalWarning');
  } catch {
    // a throwing onError changes nothing: the call fails as it would
  }
  return code;
}

function asyncError(op) {
  return new TypeError(
    `Journal.custom: the store's ${op} returned a Promise; a store must be synchronous (capstan calls it from inside the call and waits for its answer)`,
  );
}

function recordTrampoline(key, json, len) {
  const entry = stores.get(Number(key));
  if (entry === undefined) return STORE_THREW; // cannot happen: destroy comes after the last use
  let info = { op: 'record', runId: '', callId: '' };
  try {
    const text = decodeText(json, len);
    try {
      const parsed = JSON.parse(text);
      info = { op: 'record', runId: String(parsed.run), callId: String(parsed.call), kind: parsed.kind };
    } catch {
      // capstan's records are JSON; keep the empty names if not
    }
    const value = entry.store.record(text);
    if (isThenable(value)) {
      Promise.resolve(value).catch(() => {}); // its outcome can no longer matter
      return failed(entry, STORE_ASYNC, asyncError('record'), info);
    }
    return STORE_OK;
  } catch (e) {
    return failed(entry, STORE_THREW, e, info);
  }
}

function lookupTrampoline(key, run, runLen, call, callLen, answer) {
  const entry = stores.get(Number(key));
  if (entry === undefined) return STORE_THREW;
  const info = { op: 'lookup', runId: '', callId: '' };
  try {
    info.runId = decodeText(run, runLen);
    info.callId = decodeText(call, callLen);
    const value = entry.store.lookup(info.runId, info.callId);
    if (value === null || value === undefined) return STORE_OK;
    if (isThenable(value)) {
      Promise.resolve(value).catch(() => {});
      return failed(entry, STORE_ASYNC, asyncError('lookup'), info);
    }
    if (typeof value !== 'string' || value.length === 0) {
      const what = typeof value === 'string' ? 'an empty string' : typeof value;
      return failed(entry, STORE_BAD_ANSWER, new TypeError(`Journal.custom: the store's lookup returned ${what}; it returns the record's JSON text as record() got it, or null`), info);
    }
    const bytes = Buffer.from(value, 'utf8');
    // Not a record: capstan fails the call saying why ("the host's lookup answered: ...").
    api.journal_answer_set(answer, bytes, bytes.length);
    return STORE_OK;
  } catch (e) {
    return failed(entry, STORE_THREW, e, info);
  }
}

// capstan is done with the store: release it, and tell the host on the next
// microtask (never inside the native call that dropped the journal).
function destroyTrampoline(key) {
  const entry = stores.get(Number(key));
  if (entry === undefined) return;
  stores.delete(Number(key));
  if (entry.onRelease === null) return;
  queueMicrotask(() => {
    try {
      entry.onRelease();
    } catch (e) {
      process.emitWarning(`Journal.custom: onRelease threw: ${e instanceof Error ? e.message : String(e)}`, 'CapstanJournalWarning');
    }
  });
}

// Registered once and never unregistered: capstan may call them on any
// thread until the last destroy, and a key that is gone is refused.
const recordCallback = koffi.register(recordTrampoline, koffi.pointer(native.JournalRecordFn));
const lookupCallback = koffi.register(lookupTrampoline, koffi.pointer(native.JournalLookupFn));
const destroyCallback = koffi.register(destroyTrampoline, koffi.pointer(native.DestroyFn));

function optionalFunction(options, name) {
  const f = options[name];
  if (f === undefined || f === null) return null;
  if (typeof f !== 'function') throw new TypeError(`Journal.custom: options.${name} must be a function`);
  return f;
}

/**
 * A journal: a JSON Lines file (record/replay fixtures, one process at a
 * time), an SQLite database (several processes; a library built with the
 * journal-sqlite feature) or the host's own store (Journal.custom).
 * Registry.setJournal attaches it; the registry keeps what it needs, so
 * close() may come first.
 */
class Journal {
  constructor(ptr, custom = false) {
    this._ptr = ptr;
    this._custom = custom;
  }

  /**
   * A journal kept by `store`, the host's own database or durable engine
   * (capstan_journal_new). `store.record(recordJson)` stores one record (a
   * JSON object's text) durably before it returns; a later `completed`
   * record of a (run, call) key replaces its `started`.
   * `store.lookup(runId, callId)` returns the key's record text as record()
   * got it (`completed` if any, else `started`), or null/undefined.
   *
   * Both are synchronous and run on the JS thread, whichever thread runs the
   * call (capstan's waits for the event loop meanwhile); they must not call
   * into a registry using this journal. A throw, or a Promise returned (an
   * async store is not supported), fails the call: a failed `started` keeps
   * the tool from running. The error goes to `options.onError(error, { op,
   * runId, callId })` (default: a process warning). `options.onRelease()`
   * runs once when capstan is done with the store: the journal closed and
   * every registry using it closed or given another journal.
   */
  static custom(store, options = {}) {
    if (store === null || typeof store !== 'object' && typeof store !== 'function') {
      throw new TypeError('Journal.custom: store must be an object with record(recordJson) and lookup(runId, callId)');
    }
    for (const name of ['record', 'lookup']) {
      if (typeof store[name] !== 'function') throw new TypeError(`Journal.custom: store.${name} must be a function`);
    }
    if (options === null || typeof options !== 'object') throw new TypeError('Journal.custom: options must be an object');
    const entry = { store, onError: optionalFunction(options, 'onError'), onRelease: optionalFunction(options, 'onRelease') };
    const key = keys.next();
    stores.set(key, entry);
    const out = [null];
    // On failure capstan has run destroy (the entry is gone).
    check(
      api.journal_new(
        { struct_size: native.sizes.JournalCallbacks, record: recordCallback, lookup: lookupCallback, user_data: key, destroy: destroyCallback },
        out,
      ),
    );
    return new Journal(out[0], true);
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
  if (!(journal instanceof Journal)) throw new TypeError('setJournal: a Journal (Journal.openJsonl / openSqlite / custom) or null');
  if (journal._ptr === null) {
    throw new CapstanError({ status: 'CAPSTAN_ERR_STALE_HANDLE', status_code: 12, message: 'setJournal: the journal is closed' });
  }
  return journal._ptr;
}

module.exports = { Journal, journalOf, stores };
