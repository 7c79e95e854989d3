'use strict';
// What the quick path writes and reads (issue #46): the calls it writes by
// concatenation, the options it encodes once, and the results it reads
// without JSON.parse's objects, against what the path with a call handle
// (a tool registered quick: false) gives for the same calls.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry } = require('..');
const { api } = require('../lib/native.cjs');
const { HostRuns, toResults } = require('../lib/host.cjs');
const { scanHanded, scanResults } = require('../lib/host_wire.cjs');

// Runs `fn` with capstan_host_batch_begin counted.
async function begins(fn) {
  const real = api.host_batch_begin;
  let n = 0;
  api.host_batch_begin = (...args) => {
    n++;
    return real(...args);
  };
  try {
    return { value: await fn(), begins: n };
  } finally {
    api.host_batch_begin = real;
  }
}

// Two registries with the same tools, quick in one and with a call handle in the other.
function pair(name, fn, def = {}) {
  const quick = new Registry();
  const handle = new Registry();
  quick.tool({ name, ...def }, fn);
  handle.tool({ name, ...def, quick: false }, fn);
  return { quick, handle, close: () => [quick, handle].forEach((r) => r.close()) };
}

const shape = (r) => r.map((x) => ({ ...x, durationUs: 0 }));

test('the quick path writes the calls as the handle path reads them: odd ids, no id, no or null arguments, toJSON, unknown tools', async () => {
  const { quick, handle, close } = pair('echo', (args) => args);
  const when = new Date(Date.UTC(2026, 0, 2));
  const calls = [
    { id: 'quote " backslash \\ slash / tab \t nul \u0000', name: 'echo', arguments: { s: 'a"b\\c' } },
    { id: 'é 😀 \u2028 \ud83d\ude00', name: 'echo', arguments: { nested: { '"k"': [1, 'x"', null, { deep: '\\' }] } } },
    { name: 'echo' },
    { id: null, name: 'echo', arguments: null },
    { id: 'date', name: 'echo', arguments: { when } },
    { id: 'gone', name: 'no "such" tool', arguments: {} },
    { id: 'fn', name: 'echo', arguments: { f: () => 1, kept: 1 } },
    { id: 'nest', name: 'echo', arguments: { items: [{ a: { b: 1 } }, { index: 2 }], s: '}},{"index":9,"id":"x","name":"echo","arguments":{' } },
    { id: '","name":"echo","arguments":{', name: 'echo', arguments: {} },
  ];
  const q = await begins(() => quick.execute(calls, { limit: 10 }));
  assert.equal(q.begins, 1, 'the quick registry took the host path');
  const h = await begins(() => handle.execute(calls, { limit: 10 }));
  assert.equal(h.begins, 0, 'the handle registry did not');
  assert.deepEqual(shape(q.value), shape(h.value));
  assert.deepEqual(
    q.value.map((r) => r.id),
    [calls[0].id, calls[1].id, 'call_2', 'call_3', 'date', 'gone', 'fn', 'nest', calls[8].id],
  );
  assert.equal(q.value[4].content, JSON.stringify({ when: when.toJSON() }));
  assert.equal(q.value[5].outcome, 'unknown_tool');
  assert.equal(q.value[6].content, '{"kept":1}');
  assert.deepEqual(JSON.parse(q.value[7].content), calls[7].arguments);
  close();
});

test('the quick path throws what the handle path throws for a bad call or bad options, and runs nothing', async () => {
  let ran = 0;
  const { quick, handle, close } = pair('t', () => {
    ran++;
    return 'ran';
  });
  const bad = [
    [['{"name":"t"}'], {}],
    [[null], {}],
    [[[]], {}],
    [[{ id: 'x' }], {}],
    [[{ name: 't' }], { limit: -1 }],
    [[{ name: 't' }], { limit: 1.5 }],
    [[{ name: 't' }], { timeoutMs: false }],
    [[{ name: 't' }], { deadlineMs: -5 }],
    [[{ name: 't' }], { approvedIds: 'x' }],
    [[{ name: 't' }], { approvedIds: '' }],
    [[{ name: 't' }], { approvedIds: [1] }],
    [[{ name: 't' }], { runId: '' }],
  ];
  for (const [calls, options] of bad) {
    const what = `${JSON.stringify(calls)} ${JSON.stringify(options)}`;
    const errors = [];
    for (const reg of [quick, handle]) errors.push(await reg.execute(calls, options).then(() => null, (e) => e));
    assert.ok(errors[0] instanceof Error, `quick path threw for ${what}`);
    assert.equal(errors[0].constructor, errors[1].constructor, what);
    assert.equal(errors[0].message, errors[1].message, what);
  }
  assert.equal(ran, 0);
  // Good options of every kind still run (approvedIds [] and a run id pass as before).
  for (const options of [{}, { limit: 3 }, { parallel: false }, { strictNulls: true }, { approvedIds: [] }, { runId: 'r1' }, { limit: 0, timeoutMs: 0, deadlineMs: null }]) {
    const [r] = await quick.execute({ name: 't' }, options);
    assert.equal(r.content, 'ran', JSON.stringify(options));
  }
  close();
});

test('results are read as JSON.parse reads them: escapes, look-alike text, errors, truncation; parts fall back to the parse', async () => {
  const texts = [
    '',
    'plain',
    '","is_error":true,"outcome":"denied","duration_us":1},{"id":"x',
    'back\\slash \\" and \\\\" end\\',
    'nul \u0000 bell \u0007 line\nsep \u2028 é 😀',
    ',"content":"',
  ];
  const { quick, handle, close } = pair('say', ({ i }) => texts[i]);
  quick.tool('json', ({ v }) => v);
  handle.tool({ name: 'json', quick: false }, ({ v }) => v);
  quick.tool('fails', () => {
    throw new Error('broken "quoted", \\ too');
  });
  handle.tool({ name: 'fails', quick: false }, () => {
    throw new Error('broken "quoted", \\ too');
  });
  quick.tool({ name: 'long', maxOutputChars: 10 }, () => 'x'.repeat(100));
  handle.tool({ name: 'long', maxOutputChars: 10, quick: false }, () => 'x'.repeat(100));
  const calls = [
    ...texts.map((_, i) => ({ id: `t${i}`, name: 'say', arguments: { i } })),
    { id: 'j', name: 'json', arguments: { v: { a: '"', b: ['\\', { c: null }], d: 1.5 } } },
    { id: 'f', name: 'fails' },
    { id: 'l', name: 'long' },
  ];
  const q = await quick.execute(calls, { limit: 20 });
  const h = await handle.execute(calls, { limit: 20 });
  assert.deepEqual(shape(q), shape(h));
  assert.deepEqual(q.slice(0, texts.length).map((r) => r.content), texts);
  assert.equal(q[texts.length + 1].isError, true);
  assert.equal(q[texts.length + 1].outcome, 'tool_error');
  assert.ok(q[texts.length + 2].content.length < 100);
  close();
});

test('scanResults reads what toResults parses, and gives up (null) on any other shape', () => {
  const handed = [
    { index: 0, id: 'a', name: 't' },
    { index: 1, id: 'b "q"', name: 't' },
  ];
  const entry = (id, content, tail = '') =>
    `{"id":${JSON.stringify(id)},"name":"t","content":${JSON.stringify(content)},"is_error":false,"outcome":"ok","duration_us":12${tail}}`;
  const good = `[${entry('a', 'x\\"y')},${entry('b "q"', '","is_error":true,')}]`;
  assert.deepEqual(scanResults(good, handed), toResults(good));
  const error = `[${entry('a', 'ok')},{"id":"b \\"q\\"","name":"t","content":"no","is_error":true,"outcome":"tool_error","duration_us":0}]`;
  assert.deepEqual(scanResults(error, handed), toResults(error));
  const others = [
    `[${entry('a', 'x', ',"parts":[{"type":"text","text":"x"}]')},${entry('b "q"', 'y')}]`, // parts
    `[${entry('a', 'x', ',"structured_content":{"a":1}')},${entry('b "q"', 'y')}]`,
    `[{"name":"t","id":"a","content":"x","is_error":false,"outcome":"ok","duration_us":1},${entry('b "q"', 'y')}]`, // another order
    `[{"id":"a","name":"t","is_error":false,"content":"x","outcome":"ok","duration_us":1},${entry('b "q"', 'y')}]`,
    `[${entry('a', 'x')}]`, // one result for two calls
    `[${entry('a', 'x')},${entry('b "q"', 'y')},${entry('c', 'z')}]`, // three
    `[${entry('a', 'x')},${entry('b "q"', 'y')}] `, // trailing text
    `[${entry('a', 'x')},{"id":"b","name":"t","content":"y","is_error":false,"outcome":"ok","duration_us":-1}]`,
  ];
  for (const text of others) assert.equal(scanResults(text, handed), null, text);
  // A key between the content and is_error whose text has no escape: the
  // content is not what lies before the next is_error.
  const lone = [{ index: 0, id: 'a', name: 't' }];
  const between = '[{"id":"a","name":"t","content":"x","y":"z","is_error":false,"outcome":"ok","duration_us":2}]';
  assert.equal(scanResults(between, lone), null);
  assert.equal(toResults(between)[0].content, 'x');
  // Handed-out calls not in call order (a call not handed out): not read.
  assert.equal(scanResults(good, [handed[1], handed[0]]), null);
});

test('scanHanded reads the handed-out calls as JSON.parse does, and gives up (null) on any other shape', () => {
  const call = (index, id, name, args) => `{"index":${index},"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"arguments":${JSON.stringify(args)}}`;
  const texts = [
    '[]',
    `[${call(0, 'a', 't', {})}]`,
    `[${call(0, 'a "q" \\', 't', { s: '"}},{"index":1,"id":"x"' })},${call(3, 'é', 't', { n: [1, { index: 2 }] })}]`,
    // The arguments' own text holds the entries' separator: the first candidate is not JSON.
    `[${call(0, 'a', 't', { items: [{ a: { b: 1 } }, { index: 2, id: 'x', name: 't', arguments: {} }] })},${call(1, 'b', 't', { z: null })}]`,
    `[${call(0, '","name":"t","arguments":{', 't', { x: '","arguments":{' })}]`,
  ];
  for (const text of texts) assert.deepEqual(scanHanded(text), JSON.parse(text), text);
  const others = [
    '[{"id":"a","index":0,"name":"t","arguments":{}}]', // another order
    '[{"index":0,"id":"a","name":"t","arguments":[]}]', // not an object
    '[{"index":0,"id":"a","x":"y","name":"t","arguments":{}}]', // a key between id and name
    '[{"index":0,"id":5,"name":"t","arguments":{}}]',
    '[{"index":0,"id":"a","name":"t","arguments":{}},]',
    '[{"index":0,"id":"a","name":"t","arguments":{}}] ',
    '[{"index":0,"id":"a","name":"t","arguments":{},"extra":1}]',
    '[{"index":0,"id":"a\\","name":"t","arguments":{}}]', // an id ending in an escaped quote
    '[{"index":-1,"id":"a","name":"t","arguments":{}}]',
    '',
  ];
  for (const text of others) assert.equal(scanHanded(text), null, text);
});

test('close with a lone quick call in flight ends it cancelled; the registry keeps its unfinished host batches in order', async () => {
  const reg = new Registry();
  let started;
  const running = new Promise((r) => (started = r));
  reg.tool('hang', () => {
    started();
    return new Promise(() => {});
  });
  const p = reg.execute({ id: 'h', name: 'hang' });
  await running;
  assert.equal(reg._hostRuns.size, 1);
  reg.close();
  const [r] = await p;
  assert.deepEqual([r.id, r.outcome], ['h', 'cancelled']);
  assert.equal(reg._hostRuns.size, 0);

  const runs = new HostRuns();
  const [a, b, c] = ['a', 'b', 'c'].map((name) => ({ name, listed: false, prev: null, next: null }));
  for (const run of [a, b, c, b]) runs.add(run);
  assert.deepEqual([...runs].map((x) => x.name), ['a', 'b', 'c']);
  assert.equal(runs.size, 3);
  for (const run of [...runs]) if (run !== c) runs.delete(run); // deleting while going through a copy
  runs.delete(a);
  assert.deepEqual([...runs].map((x) => x.name), ['c']);
  runs.add(a);
  runs.delete(c);
  assert.deepEqual([...runs].map((x) => x.name), ['a']);
  assert.equal(runs.size, 1);
  runs.delete(a); // the last one, head and tail
  runs.add(b);
  runs.add(c);
  runs.delete(c); // the tail
  runs.add(a);
  assert.deepEqual([...runs].map((x) => x.name), ['b', 'a']);
  assert.equal(runs.size, 2);
});

test('a registry closed while the calls are written (by a toJSON of the arguments) rejects saying so; nothing runs', async () => {
  const reg = new Registry();
  let ran = 0;
  reg.tool('t', () => ran++);
  const args = { toJSON: () => (reg.close(), {}) };
  await assert.rejects(reg.execute({ name: 't', arguments: args }), (e) => e.status === 'CAPSTAN_ERR_SHUTTING_DOWN' && /closed/.test(e.message));
  assert.equal(ran, 0);
});
