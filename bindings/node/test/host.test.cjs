'use strict';
// Quick tools (issue #46): a JS tool that takes no ctx runs through
// capstan's host batches: its checked calls come out in one crossing, it
// runs on the JS thread, and the answers go back in one crossing, while the
// batch's other tools run as capstan runs them.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, Image, CapstanError } = require('..');
const { api } = require('../lib/native.cjs');
const { deferred } = require('./helpers.cjs');

const cityArgs = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'], default: 'c' } },
  required: ['city'],
};

// Counts the crossings into capstan that `fn` makes, by function.
async function crossings(names, fn) {
  const counts = Object.fromEntries(names.map((n) => [n, 0]));
  const saved = {};
  for (const n of names) {
    saved[n] = api[n];
    const real = api[n];
    const counted = (...args) => {
      counts[n]++;
      return real(...args);
    };
    counted.async = real.async;
    api[n] = counted;
  }
  try {
    return { value: await fn(), counts };
  } finally {
    Object.assign(api, saved);
  }
}

const PATHS = ['host_batch_begin', 'host_batch_finish', 'batch_submit', 'call_return', 'call_fail', 'call_arguments', 'registry_pump'];

test('a batch of quick tools is one crossing out and one back, whatever its size; defaults filled, results in call order', async () => {
  const reg = new Registry();
  const thread = [];
  reg.tool({ name: 'weather', parameters: cityArgs }, ({ city, unit }) => {
    thread.push(process.pid);
    return { city, unit };
  });
  reg.tool('echo', async ({ s }) => `said ${s}`);
  const calls = Array.from({ length: 100 }, (_, i) =>
    i % 2 ? { id: `e${i}`, name: 'echo', arguments: { s: i } } : { id: `w${i}`, name: 'weather', arguments: { city: `c${i}` } },
  );
  const { value: r, counts } = await crossings(PATHS, () => reg.execute(calls, { limit: 100 }));
  assert.deepEqual(counts, { host_batch_begin: 1, host_batch_finish: 1, batch_submit: 0, call_return: 0, call_fail: 0, call_arguments: 0, registry_pump: 0 });
  assert.equal(r.length, 100);
  for (let i = 0; i < 100; i++) {
    assert.equal(r[i].index, i);
    assert.equal(r[i].id, calls[i].id);
    assert.equal(r[i].outcome, 'ok');
    assert.equal(r[i].content, i % 2 ? `said ${i}` : JSON.stringify({ city: `c${i}`, unit: 'c' }));
  }
  assert.equal(thread.length, 50);
  reg.close();
});

test('quick by default: a function of one parameter without timeoutMs; quick: false or a ctx parameter takes a call handle', async () => {
  const reg = new Registry();
  reg.tool('plain', () => 'p');
  reg.tool('withCtx', (args, ctx) => `id ${ctx.id}`);
  reg.tool({ name: 'slowish', timeoutMs: 1000 }, () => 's');
  reg.tool({ name: 'forced', quick: false }, () => 'f');
  reg.tool({ name: 'chosen', quick: true }, (args, ctx) => `quick ${ctx.id} ${ctx.name}`);
  const run = (name) => crossings(PATHS, () => reg.execute({ id: 'x', name }));
  for (const name of ['plain', 'chosen']) {
    const { value, counts } = await run(name);
    assert.equal(counts.host_batch_begin, 1, name);
    assert.equal(counts.call_return, 0, name);
    assert.equal(value[0].outcome, 'ok');
  }
  assert.equal((await run('chosen')).value[0].content, 'quick x chosen');
  for (const name of ['withCtx', 'slowish', 'forced']) {
    const { value, counts } = await run(name);
    assert.equal(counts.host_batch_begin, 0, name);
    assert.equal(counts.call_return, 1, name);
    assert.equal(value[0].outcome, 'ok', name);
  }
  assert.throws(() => reg.tool({ name: 'bad', quick: 'yes' }, () => 1), TypeError);
  reg.close();
});

test('other tools of the batch run meanwhile: a quick async call waits for a ctx tool of the same batch', async () => {
  const reg = new Registry();
  const fed = deferred();
  reg.tool('waiter', async () => `got ${await fed.promise}`);
  reg.tool('feeder', async (args, ctx) => {
    ctx.progress(1, 1);
    fed.resolve(ctx.id);
    return 'fed';
  });
  reg.tool('twice', ({ n }) => n * 2);
  const r = await reg.execute([
    { id: 'w', name: 'waiter' },
    { id: 'f', name: 'feeder' },
    { id: 'u', name: 'nope' },
    { id: 't', name: 'twice', arguments: { n: 21 } },
  ]);
  assert.deepEqual(
    r.map((x) => [x.id, x.outcome, x.outcome === 'unknown_tool' ? '' : x.content]),
    [
      ['w', 'ok', 'got f'],
      ['f', 'ok', 'fed'],
      ['u', 'unknown_tool', ''],
      ['t', 'ok', '42'],
    ],
  );
  reg.close();
});

test('what a quick tool returns or throws: text, JSON, parts, nothing; a throw, a rejection and an unsendable value are tool errors', async () => {
  const reg = new Registry();
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  reg.tool('text', () => 'héllo "quoted"\n');
  reg.tool('json', async () => ({ a: [1, null, 'x'] }));
  reg.tool('nothing', () => undefined);
  reg.tool('picture', () => ['a chart:', new Image(PNG, 'image/png')]);
  reg.tool('throws', () => {
    throw new Error('broken');
  });
  reg.tool('rejects', async () => {
    throw new TypeError('bad type');
  });
  reg.tool('bigint', () => ({ n: 1n }));
  reg.tool('cyclic', () => {
    const o = {};
    o.o = o;
    return o;
  });
  const names = ['text', 'json', 'nothing', 'picture', 'throws', 'rejects', 'bigint', 'cyclic'];
  const r = await reg.execute(names.map((name, i) => ({ id: `${i}`, name })));
  assert.deepEqual(
    r.slice(0, 3).map((x) => [x.outcome, x.content]),
    [
      ['ok', 'héllo "quoted"\n'],
      ['ok', '{"a":[1,null,"x"]}'],
      ['ok', ''],
    ],
  );
  assert.equal(r[3].outcome, 'ok');
  assert.deepEqual(r[3].parts.map((p) => p.type), ['text', 'image']);
  assert.deepEqual(
    r.slice(4, 6).map((x) => [x.outcome, x.isError, x.content]),
    [
      ['tool_error', true, 'broken'],
      ['tool_error', true, 'bad type'],
    ],
  );
  assert.match(r[6].content, /not JSON-serializable.*BigInt/);
  assert.match(r[7].content, /not JSON-serializable.*circular/);
  reg.close();
});

test('a quick tool has no call handle: ctx.progress and ctx.log throw saying how to get one; ctx.input asks for nothing', async () => {
  const reg = new Registry();
  const seen = {};
  reg.tool({ name: 'q', quick: true }, (args, ctx) => {
    seen.input = ctx.input;
    seen.cancelled = ctx.cancelled();
    for (const m of ['progress', 'log']) {
      try {
        ctx[m](1, 'x');
      } catch (e) {
        seen[m] = e;
      }
    }
    return 'ok';
  });
  const [r] = await reg.execute({ id: '1', name: 'q' });
  assert.equal(r.outcome, 'ok');
  assert.deepEqual(seen.input, { canAsk: [] });
  assert.equal(seen.cancelled, false);
  for (const m of ['progress', 'log']) {
    assert.ok(seen[m] instanceof CapstanError, m);
    assert.match(seen[m].message, /quick: false/);
  }
  reg.close();
});

test('a batch bigger than its limit takes the quick path once its tools are known to answer at once; async ones keep the limit', async () => {
  const reg = new Registry();
  reg.tool('sync', ({ i }) => i);
  let running = 0;
  let most = 0;
  reg.tool('slow', async () => {
    most = Math.max(most, ++running);
    await new Promise((r) => setTimeout(r, 1));
    running--;
    return 'ok';
  });
  const calls = (name) => Array.from({ length: 20 }, (_, i) => ({ id: `${i}`, name, arguments: { i } }));
  // The first batch teaches the binding that `sync` answers at once.
  let c = await crossings(PATHS, () => reg.execute(calls('sync'), { limit: 2 }));
  assert.equal(c.counts.host_batch_begin, 0);
  c = await crossings(PATHS, () => reg.execute(calls('sync'), { limit: 2 }));
  assert.equal(c.counts.host_batch_begin, 1);
  assert.deepEqual(c.value.map((r) => r.content), calls('sync').map((_, i) => String(i)));
  c = await crossings(PATHS, () => reg.execute(calls('slow'), { limit: 4 }));
  assert.equal(c.counts.host_batch_begin, 0);
  assert.equal(most, 4);
  reg.close();
});

test('a quick tool may run a nested batch of the same registry', async () => {
  const reg = new Registry();
  reg.tool('inner', ({ n }) => n + 1);
  reg.tool('outer', async ({ n }) => {
    const [r] = await reg.execute({ id: 'in', name: 'inner', arguments: { n } });
    return `inner said ${r.content}`;
  });
  const [r] = await reg.execute({ id: 'out', name: 'outer', arguments: { n: 1 } });
  assert.equal(r.content, 'inner said 2');
  reg.close();
});

test('close with quick calls in flight: every call of the batch ends cancelled, the late answer is dropped', async () => {
  const reg = new Registry();
  const started = deferred();
  const never = deferred();
  reg.tool('hang', () => {
    started.resolve();
    return never.promise;
  });
  reg.tool('fast', () => 'fast');
  const p = reg.execute([
    { id: 'h', name: 'hang' },
    { id: 'f', name: 'fast' },
  ]);
  await started.promise;
  reg.close();
  const r = await p;
  assert.deepEqual(
    r.map((x) => [x.id, x.outcome]),
    [
      ['h', 'cancelled'],
      ['f', 'cancelled'],
    ],
  );
  never.resolve('too late');
  await new Promise((r) => setImmediate(r));
});

test('a lone surrogate in what a quick tool returns becomes U+FFFD, as with a call handle; the other answers stand', async () => {
  const reg = new Registry();
  reg.tool('text', () => 'a\ud800b');
  reg.tool('json', () => ({ s: 'x\udc00', path: 'C:\\udata', smile: '\ud83d\ude00' }));
  reg.tool({ name: 'handle', quick: false }, () => 'a\ud800b');
  reg.tool('fine', () => 'fine');
  const r = await reg.execute(['text', 'json', 'handle', 'fine'].map((name) => ({ name })));
  assert.deepEqual(
    r.map((x) => [x.outcome, x.content]),
    [
      ['ok', 'a\ufffdb'],
      ['ok', JSON.stringify({ s: 'x\ufffd', path: 'C:\\udata', smile: '\ud83d\ude00' })],
      ['ok', 'a\ufffdb'],
      ['ok', 'fine'],
    ],
  );
  reg.close();
});
