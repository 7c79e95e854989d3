'use strict';
// Durable calls (issue #47): a journal records each call under a run id;
// after a crash the same calls again do not re-run what completed, and a
// call that started and never completed follows its tool's policy.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Registry, Journal, CapstanError } = require('..');

const CHILD = path.join(__dirname, 'journal_child.cjs');

function workdir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capstan-node-journal-'));
  return { journal: path.join(dir, 'calls.jsonl'), ran: path.join(dir, 'ran.log'), dir };
}

function child(w, mode, calls, runId = 'run-1') {
  const out = spawnSync(process.execPath, [CHILD, w.journal, runId, mode, w.ran, JSON.stringify(calls)], { encoding: 'utf8', timeout: 60000 });
  return out;
}

function ranTools(w) {
  return fs.existsSync(w.ran) ? fs.readFileSync(w.ran, 'utf8').trim().split('\n') : [];
}

const CALLS = [
  { id: 'p', name: 'pay', arguments: { amount: 5 } },
  { id: 'f', name: 'fetch' },
  { id: 'c', name: 'charge' },
  { id: 'x', name: 'crash' },
];

test('killed between started and completed: the completed call is not run again, an unknown one fails "Outcome unknown" unless idempotent', () => {
  const w = workdir();
  const crashed = child(w, 'crash', CALLS);
  assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
  assert.deepEqual(ranTools(w), ['pay', 'fetch', 'charge', 'crash']);

  const again = child(w, 'again', CALLS);
  assert.equal(again.status, 0, again.stderr);
  const { results, replayed, stats } = JSON.parse(again.stdout);
  assert.deepEqual(results.map((r) => [r.id, r.outcome]), [
    ['p', 'ok'],
    ['f', 'ok'],
    ['c', 'tool_error'],
    ['x', 'tool_error'],
  ]);
  assert.equal(results[0].content, 'paid 5'); // as recorded
  assert.equal(results[1].content, 'fetched'); // idempotent: run again
  assert.match(results[2].content, /^Outcome unknown: call "c" of tool "charge" \(run "run-1"\)/);
  assert.match(results[3].content, /^Outcome unknown: call "x" of tool "crash"/);
  assert.deepEqual(replayed, ['p']);
  assert.equal(stats.tools.pay.replayed, 1);
  // Only the idempotent tool ran a second time.
  assert.deepEqual(ranTools(w), ['pay', 'fetch', 'charge', 'crash', 'fetch']);

  // Another run id is another run: everything runs.
  const other = child(w, 'again', CALLS.slice(0, 1), 'run-2');
  assert.equal(JSON.parse(other.stdout).results[0].outcome, 'ok');
  assert.deepEqual(ranTools(w).slice(-1), ['pay']);
});

test('replay mode runs no tool: a recorded call is answered, one missing from the recording fails naming it', () => {
  const w = workdir();
  assert.equal(child(w, 'again', CALLS.slice(0, 1)).status, 0);
  const out = child(w, 'replay', [CALLS[0], { id: 'p2', name: 'pay', arguments: { amount: 7 } }]);
  assert.equal(out.status, 0, out.stderr);
  const { results, replayed } = JSON.parse(out.stdout);
  assert.deepEqual(results.map((r) => [r.outcome, r.content]), [
    ['ok', 'paid 5'],
    ['tool_error', 'Call "p2" of tool "pay" is not in the recording of run "run-1"; a replay runs no tool.'],
  ]);
  assert.deepEqual(replayed, ['p']);
  assert.deepEqual(ranTools(w), ['pay']);
});

test('a tool whose schema changed since the recording fails its replay naming the change, and does not run', () => {
  const w = workdir();
  assert.equal(child(w, 'again', CALLS.slice(0, 1)).status, 0);
  const out = child(w, 'changed', CALLS.slice(0, 1));
  assert.equal(out.status, 0, out.stderr);
  const [r] = JSON.parse(out.stdout).results;
  assert.equal(r.outcome, 'tool_error');
  assert.match(r.content, /^Replay of call "p" \(run "run-1"\) refused: .*schema/);
  assert.match(r.content, /pay/);
  assert.deepEqual(ranTools(w), ['pay']);
});

test('journals: a corrupt file fails to open naming its line; bad arguments are errors; a closed journal cannot be attached', async () => {
  const w = workdir();
  fs.writeFileSync(w.journal, '{"kind":"nonsense"}\n');
  assert.throws(() => Journal.openJsonl(w.journal), (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT' && /line 1/.test(e.message));
  assert.throws(() => Journal.openJsonl(''), TypeError);
  const reg = new Registry();
  assert.throws(() => reg.setJournal('calls.jsonl'), TypeError);
  const j = Journal.openJsonl(path.join(w.dir, 'ok.jsonl'));
  j.close();
  j.close(); // idempotent
  assert.throws(() => reg.setJournal(j), (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_STALE_HANDLE');
  await assert.rejects(reg.execute([], { runId: '' }), TypeError);
  reg.close();
});

test('SQLite journals open where the library has them, and say UNSUPPORTED where it does not', () => {
  const w = workdir();
  let journal = null;
  try {
    journal = Journal.openSqlite(path.join(w.dir, 'calls.db'), { fullSync: true });
  } catch (e) {
    assert.ok(e instanceof CapstanError, String(e));
    assert.equal(e.status, 'CAPSTAN_ERR_UNSUPPORTED');
    assert.match(e.message, /journal-sqlite/);
    return;
  }
  const reg = new Registry();
  reg.setJournal(journal);
  journal.close();
  reg.close();
});
