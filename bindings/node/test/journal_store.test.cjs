'use strict';
// Journal.custom: durable calls (issue #47) kept in the host's own store
// (capstan_journal_new). The store sees what capstan writes; a completed call
// is answered from it; a crash's `started` follows the tool's policy; a store
// that fails fails the call naming it; the store lives as long as a journal
// or a registry uses it; and its methods, always run on the JS thread, are
// reached from capstan's own threads too without ever deadlocking.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Registry, Journal, CapstanError } = require('..');
const { stores } = require('../lib/journal.cjs');

const CHILD = path.join(__dirname, 'journal_store_child.cjs');

// A store in a Map, keyed by run and call, as a host's database would keep it.
class MapStore {
  constructor() {
    this.rows = new Map();
    this.seen = []; // every record, as capstan wrote it
    this.lookups = 0;
    this.failRecord = null; // (record) => an Error to throw, or a value to return
    this.dropCompleted = false; // a crash: `completed` never reaches the store
  }

  record(json) {
    const r = JSON.parse(json);
    this.seen.push(json);
    if (this.failRecord) {
      const fail = this.failRecord(r);
      if (fail instanceof Error) throw fail;
      if (fail !== undefined) return fail;
    }
    if (r.kind === 'tools' || (r.kind === 'completed' && this.dropCompleted)) return undefined;
    this.rows.set(`${r.run}\n${r.call}`, json);
    return undefined;
  }

  lookup(runId, callId) {
    this.lookups++;
    return this.rows.get(`${runId}\n${callId}`) ?? null;
  }

  kinds(callId) {
    return this.seen.map((j) => JSON.parse(j)).filter((r) => r.call === callId && r.kind !== 'tools').map((r) => r.kind);
  }
}

// A registry with `count` (not idempotent) and `fetch` (idempotent) over `journal`.
function registry(journal, ran, options = {}) {
  const reg = new Registry();
  reg.tool({ name: 'count', parameters: { type: 'object', properties: { n: { type: 'integer' } } } }, ({ n }) => {
    ran.push('count');
    return `counted ${n}`;
  });
  reg.tool({ name: 'fetch', idempotent: true }, () => {
    ran.push('fetch');
    return 'fetched';
  });
  reg.setJournal(journal, options);
  return reg;
}

const COUNT = { id: 'c1', name: 'count', arguments: { n: 5 } };
const FETCH = { id: 'f1', name: 'fetch' };

test('a completed call recorded in the store is answered from it by a second registry, without running the tool', async () => {
  const store = new MapStore();
  const ran = [];
  const first = Journal.custom(store);
  const reg1 = registry(first, ran);
  first.close(); // the registry keeps it
  const results = await reg1.execute([COUNT, FETCH], { runId: 'run-1' });
  assert.deepEqual(results.map((r) => r.content), ['counted 5', 'fetched']);
  reg1.close();
  assert.deepEqual(ran, ['count', 'fetch']);
  // What the store saw is what capstan wrote: the batch's tools, then a
  // `started` before and a `completed` after each call.
  assert.equal(JSON.parse(store.seen[0]).kind, 'tools');
  assert.deepEqual(store.kinds('c1'), ['started', 'completed']);
  assert.deepEqual(store.kinds('f1'), ['started', 'completed']);
  const done = JSON.parse(store.rows.get('run-1\nc1'));
  assert.equal(done.tool, 'count');
  assert.deepEqual(done.result, { duration_us: done.result.duration_us, outcome: 'ok', content: 'counted 5', is_error: false });

  const second = Journal.custom(store);
  const reg2 = registry(second, ran);
  second.close();
  const replayed = [];
  reg2.setEventHook((e) => e.kind === 'replayed' && replayed.push(e.id));
  const again = await reg2.execute(COUNT, { runId: 'run-1' });
  await new Promise((r) => setImmediate(r));
  assert.equal(again[0].outcome, 'ok');
  assert.equal(again[0].content, 'counted 5');
  assert.deepEqual(ran, ['count', 'fetch']); // not run again
  assert.deepEqual(replayed, ['c1']);
  assert.equal(reg2.stats().tools.count.replayed, 1);
  // Another run id is another run.
  assert.equal((await reg2.execute(COUNT, { runId: 'run-2' }))[0].content, 'counted 5');
  assert.deepEqual(ran, ['count', 'fetch', 'count']);
  reg2.close();
});

test('a call the store holds as started only (a crash): not idempotent fails "Outcome unknown:", idempotent runs again', async () => {
  const store = new MapStore();
  store.dropCompleted = true;
  const ran = [];
  const crashed = Journal.custom(store);
  const reg1 = registry(crashed, ran);
  crashed.close();
  await reg1.execute([COUNT, FETCH], { runId: 'run-1' });
  reg1.close();
  assert.deepEqual(ran, ['count', 'fetch']);
  store.dropCompleted = false;

  const j = Journal.custom(store);
  const reg2 = registry(j, ran);
  j.close();
  const [count, fetch] = await reg2.execute([COUNT, FETCH], { runId: 'run-1' });
  assert.equal(count.outcome, 'tool_error');
  assert.match(count.content, /^Outcome unknown: call "c1" of tool "count" \(run "run-1"\)/);
  assert.equal(fetch.outcome, 'ok');
  assert.equal(fetch.content, 'fetched');
  assert.deepEqual(ran, ['count', 'fetch', 'fetch']); // only the idempotent tool ran again
  assert.equal(JSON.parse(store.rows.get('run-1\nf1')).kind, 'completed');
  reg2.close();
});

test('replay mode with a custom store runs no tool and writes nothing', async () => {
  const store = new MapStore();
  const ran = [];
  const j = Journal.custom(store);
  const rec = registry(j, ran);
  await rec.execute(COUNT, { runId: 'run-1' });
  rec.close();
  const written = store.seen.length;
  const replay = registry(j, ran, { replay: true });
  j.close();
  const results = await replay.execute([COUNT, { id: 'c2', name: 'count', arguments: { n: 7 } }, FETCH], { runId: 'run-1' });
  assert.deepEqual(results.map((r) => [r.outcome, r.content]), [
    ['ok', 'counted 5'],
    ['tool_error', 'Call "c2" of tool "count" is not in the recording of run "run-1"; a replay runs no tool.'],
    ['tool_error', 'Call "f1" of tool "fetch" is not in the recording of run "run-1"; a replay runs no tool.'],
  ]);
  assert.deepEqual(ran, ['count']);
  assert.equal(store.seen.length, written);
  replay.close();
});

test('a store that throws fails the call naming it, and a failed started keeps the tool from running', async () => {
  const store = new MapStore();
  const errors = [];
  const ran = [];
  const j = Journal.custom(store, { onError: (error, info) => errors.push({ error, info }) });
  const reg = registry(j, ran);
  j.close();

  store.failRecord = (r) => (r.kind === 'started' ? new Error('disk full') : undefined);
  const [r1] = await reg.execute(COUNT, { runId: 'run-1' });
  assert.equal(r1.outcome, 'tool_error');
  assert.match(r1.content, /^The journal could not record the start of call "c1" \(run "run-1"\): the host's record returned 1\. The tool was not run\./);
  assert.deepEqual(ran, []);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].error.message, 'disk full');
  assert.deepEqual(errors[0].info, { op: 'record', runId: 'run-1', callId: 'c1', kind: 'started' });

  // An async store is not supported: a Promise fails the call (code 2).
  store.failRecord = (r) => (r.kind === 'started' ? Promise.resolve() : undefined);
  const [r2] = await reg.execute({ ...COUNT, id: 'c2' }, { runId: 'run-1' });
  assert.match(r2.content, /the host's record returned 2\. The tool was not run\./);
  assert.ok(errors[1].error instanceof TypeError);
  assert.match(errors[1].error.message, /returned a Promise; a store must be synchronous/);
  assert.deepEqual(ran, []);

  // A failed `completed`: the tool ran, the model gets its result; the
  // store's failure is reported.
  store.failRecord = (r) => (r.kind === 'completed' ? new Error('lost') : undefined);
  const [r3] = await reg.execute({ ...COUNT, id: 'c3' }, { runId: 'run-1' });
  assert.equal(r3.content, 'counted 5');
  assert.deepEqual(errors[2].info, { op: 'record', runId: 'run-1', callId: 'c3', kind: 'completed' });
  store.failRecord = null;

  // lookup throwing, returning a Promise, a number, or text that is not a record.
  const lookup = store.lookup;
  const cases = [
    // (A lone call claims its key, looking it up first: "could not record the start".)
    [() => { throw new RangeError('db gone'); }, /^The journal could not \w[^:]* call "c4" \(run "run-1"\): the host's lookup returned 1\. The tool was not run\./, 'db gone'],
    [() => Promise.resolve(null), /: the host's lookup returned 2\. The tool was not run\./, /returned a Promise/],
    [() => 42, /: the host's lookup returned 3\. The tool was not run\./, /lookup returned number/],
    [() => '{"kind":"nonsense"}', /: the host's lookup answered: .+\. The tool was not run\./, null],
  ];
  for (const [fn, content, message] of cases) {
    errors.length = 0;
    store.lookup = fn;
    const [r] = await reg.execute({ ...COUNT, id: 'c4' }, { runId: 'run-1' });
    assert.equal(r.outcome, 'tool_error');
    assert.match(r.content, content);
    if (message === null) assert.equal(errors.length, 0, r.content);
    else {
      assert.equal(errors[0].info.op, 'lookup');
      assert.equal(errors[0].info.callId, 'c4');
      if (typeof message === 'string') assert.equal(errors[0].error.message, message);
      else assert.match(errors[0].error.message, message);
    }
  }
  assert.deepEqual(ran, ['count']); // c3 only
  store.lookup = lookup;
  // Still usable.
  assert.equal((await reg.execute({ ...COUNT, id: 'c5' }, { runId: 'run-1' }))[0].content, 'counted 5');
  reg.close();
});

test('without onError a store failure is a process warning naming it', async () => {
  const store = new MapStore();
  store.failRecord = () => new Error('no space');
  const j = Journal.custom(store);
  const reg = registry(j, []);
  j.close();
  const warned = new Promise((resolve) => process.once('warning', resolve));
  const [r] = await reg.execute(COUNT, { runId: 'run-w' });
  assert.equal(r.outcome, 'tool_error');
  const w = await warned;
  assert.equal(w.name, 'CapstanJournalWarning');
  assert.match(w.message, /record failed for call "c1" \(run "run-w"\): no space/);
  reg.close();
});

test('the store lives while a journal or a registry uses it, and is released once, when both are gone', async () => {
  const base = stores.size;
  let released = 0;
  const store = new MapStore();
  const onRelease = () => released++;
  const tick = () => new Promise((r) => setImmediate(r));

  // The journal closed first: the registry keeps the store.
  const j1 = Journal.custom(store, { onRelease });
  const reg1 = registry(j1, []);
  j1.close();
  j1.close(); // a second close does nothing
  await tick();
  assert.equal(released, 0);
  assert.equal((await reg1.execute(COUNT, { runId: 'life' }))[0].content, 'counted 5');
  assert.throws(() => reg1.setJournal(j1), (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_STALE_HANDLE');
  reg1.close();
  await tick();
  assert.equal(released, 1);
  assert.equal(stores.size, base);

  // The registry closed first, then the journal; and two registries at once.
  const j2 = Journal.custom(store, { onRelease });
  const a = registry(j2, []);
  const b = registry(j2, []);
  a.close();
  b.setJournal(null); // b no longer uses it
  await tick();
  assert.equal(released, 1);
  assert.equal(stores.size, base + 1);
  j2.close();
  await tick();
  assert.equal(released, 2);
  assert.equal(stores.size, base);
  b.close();
  await tick();
  assert.equal(released, 2); // exactly once
});

test('Journal.custom refuses what is not a store', () => {
  assert.throws(() => Journal.custom(null), TypeError);
  assert.throws(() => Journal.custom({ record() {} }), /store\.lookup must be a function/);
  assert.throws(() => Journal.custom({ lookup() {} }), /store\.record must be a function/);
  assert.throws(() => Journal.custom(new MapStore(), { onError: 'log' }), /options\.onError must be a function/);
});

test('calls whose store callbacks come on capstan threads (a pool worker, the timer thread, libuv pool) run, several at once', async () => {
  const store = new MapStore();
  const j = Journal.custom(store);
  const ran = [];
  const reg = registry(j, ran);
  j.close();
  // parallel: false is not started inline: a pool worker starts each call,
  // calling lookup and record from there.
  const lone = Array.from({ length: 8 }, (_, i) => reg.execute({ ...COUNT, id: `p${i}` }, { runId: 'threads', parallel: false }));
  const results = (await Promise.all(lone)).flat();
  assert.deepEqual(results.map((r) => r.content), Array(8).fill('counted 5'));
  for (let i = 0; i < 8; i++) assert.deepEqual(store.kinds(`p${i}`), ['started', 'completed']);
  // A timeout ends the call on capstan's timer thread, which records it.
  reg.tool({ name: 'hang', timeoutMs: 20 }, () => new Promise(() => {}));
  const [t] = await reg.execute({ id: 'h1', name: 'hang' }, { runId: 'threads' });
  assert.equal(t.outcome, 'timeout');
  assert.deepEqual(store.kinds('h1'), ['started', 'completed']);
  assert.equal(JSON.parse(store.rows.get('threads\nh1')).result.outcome, 'timeout');
  // A whole turn runs on libuv's pool, and with it the journal's callbacks.
  const response = {
    choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'w1', type: 'function', function: { name: 'count', arguments: '{"n":5}' } }] }, finish_reason: 'tool_calls' }],
  };
  const turn = await reg.runTurn('openai_chat', response, { wholeTurn: true, runId: 'threads' });
  assert.equal(turn.messages.at(-1).content, 'counted 5');
  assert.deepEqual(store.kinds('w1'), ['started', 'completed']);
  const again = await reg.runTurn('openai_chat', response, { wholeTurn: true, runId: 'threads' });
  assert.equal(again.messages.at(-1).content, 'counted 5');
  assert.equal(ran.length, 9); // the replayed turn did not run count
  reg.close();
});

test('closing the registry while a pool thread waits in the store for the JS thread returns, never hangs', () => {
  // In a child: a hang fails here by the child's timeout, not the suite's.
  const out = spawnSync(process.execPath, [CHILD, 'close-while-waiting'], { encoding: 'utf8', timeout: 60000 });
  assert.equal(out.signal, null, `the child hung: ${out.stderr}`);
  assert.equal(out.status, 0, out.stderr);
  const got = JSON.parse(out.stdout);
  assert.equal(got.outcome, 'cancelled');
  assert.equal(got.released, 1);
});
