'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, CapstanError, SchemaError, version } = require('..');
const { deferred } = require('./helpers.cjs');

const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'], default: 'c' } },
  required: ['city'],
};

test('version is the 0.4 library', () => {
  assert.match(version, /^0\.4\./);
});

test('plain and async tools: results in call order, defaults filled, JSON and text content', async () => {
  const reg = new Registry();
  const seen = [];
  reg.tool({ name: 'weather', parameters: weatherSchema }, async (args, ctx) => {
    seen.push({ args, id: ctx.id, name: ctx.name });
    await new Promise((r) => setTimeout(r, 5));
    return { city: args.city, unit: args.unit, t: 21 };
  });
  reg.tool({ name: 'time' }, () => '12:00');
  const results = await reg.execute([
    { id: 'a', name: 'weather', arguments: { city: 'Oslo' } },
    { id: 'b', name: 'time', arguments: '{}' },
  ]);
  assert.deepEqual(
    results.map((r) => [r.index, r.id, r.name, r.outcome, r.isError, r.content]),
    [
      [0, 'a', 'weather', 'ok', false, '{"city":"Oslo","unit":"c","t":21}'],
      [1, 'b', 'time', 'ok', false, '12:00'],
    ],
  );
  assert.deepEqual(seen, [{ args: { city: 'Oslo', unit: 'c' }, id: 'a', name: 'weather' }]);
  assert.ok(results[0].durationUs > 0);
  reg.close();
});

test('failures are results: throw, rejection, unknown tool, invalid arguments', async () => {
  const reg = new Registry();
  reg.tool({ name: 'weather', parameters: weatherSchema }, () => 'x');
  reg.tool('throws', () => {
    throw new Error('disk on fire');
  });
  reg.tool('rejects', async () => {
    throw new TypeError('bad luck');
  });
  reg.tool('cyclic', () => {
    const o = {};
    o.o = o;
    return o;
  });
  const r = await reg.execute([
    { id: '1', name: 'throws' },
    { id: '2', name: 'rejects' },
    { id: '3', name: 'nope' },
    { id: '4', name: 'weather', arguments: { city: 3 } },
    { id: '5', name: 'cyclic' },
  ]);
  assert.deepEqual(
    r.map((x) => x.outcome),
    ['tool_error', 'tool_error', 'unknown_tool', 'invalid_arguments', 'tool_error'],
  );
  assert.equal(r[0].content, 'disk on fire');
  assert.equal(r[1].content, 'bad luck');
  assert.match(r[2].content, /nope/);
  assert.match(r[3].content, /city/);
  assert.match(r[4].content, /not JSON-serializable/);
  assert.ok(r.every((x) => x.isError));
  reg.close();
});

test('a batch of async tools runs concurrently on the event loop', async () => {
  // Every call waits until all of them have started: run one at a time,
  // the first would never finish (the deadline turns that into timeouts).
  const n = 20;
  const reg = new Registry();
  let started = 0;
  const all = deferred();
  reg.tool('meet', async (args) => {
    if (++started === n) all.resolve();
    await all.promise;
    return args.i;
  });
  const calls = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'meet', arguments: { i } }));
  const r = await reg.execute(calls, { limit: n, deadlineMs: 5000 });
  assert.deepEqual(
    r.map((x) => [x.outcome, x.content]),
    calls.map((_, i) => ['ok', String(i)]),
  );
  reg.close();
});

// One capstan batch: capstan's own limit holds for main-thread calls that
// an async tool completes later (the binding used to apply it itself).
test('limit bounds how many calls run at once', async () => {
  const reg = new Registry();
  let running = 0;
  let most = 0;
  reg.tool('slow', async () => {
    most = Math.max(most, ++running);
    await new Promise((r) => setTimeout(r, 2));
    running--;
    return 'ok';
  });
  const calls = Array.from({ length: 12 }, (_, i) => ({ id: `${i}`, name: 'slow' }));
  await reg.execute(calls, { limit: 3 });
  assert.equal(most, 3);
  most = 0;
  const seen = [];
  for await (const r of reg.submit(calls, { limit: 5 })) seen.push(r.outcome);
  assert.ok(most <= 5, `${most} ran at once under limit 5`);
  assert.equal(seen.length, 12);
  most = 0;
  await reg.execute(calls, { parallel: false });
  assert.equal(most, 1);
  reg.close();
});

test('submit: results are iterated as they finish, then in call order from results()', async () => {
  const reg = new Registry();
  const second = deferred();
  reg.tool('first', async () => {
    await second.promise;
    return 'first';
  });
  reg.tool('second', () => {
    setImmediate(second.resolve);
    return 'second';
  });
  const batch = reg.submit([
    { id: '1', name: 'first' },
    { id: '2', name: 'second' },
  ]);
  assert.equal(batch.size, 2);
  const order = [];
  for await (const r of batch) order.push(r.content);
  assert.deepEqual(order, ['second', 'first']);
  assert.deepEqual(
    (await batch.results()).map((r) => r.content),
    ['first', 'second'],
  );
  reg.close();
});

test('a tool that never finishes times out (delivered by capstan from its own thread)', async () => {
  const reg = new Registry();
  let ctxSeen;
  reg.tool({ name: 'hang', timeoutMs: 30 }, (args, ctx) => {
    ctxSeen = ctx;
    return new Promise(() => {});
  });
  const [r] = await reg.execute({ id: 'h', name: 'hang' });
  assert.equal(r.outcome, 'timeout');
  assert.equal(ctxSeen.cancelled(), true);
  reg.close();
});

test('cancel: calls not started end cancelled', async () => {
  const reg = new Registry();
  const gate = deferred();
  const running = deferred();
  reg.tool('wait', async () => {
    running.resolve();
    await gate.promise;
    return 'done';
  });
  const batch = reg.submit(
    [
      { id: '1', name: 'wait' },
      { id: '2', name: 'wait' },
    ],
    { parallel: false },
  );
  const first = batch[Symbol.asyncIterator]().next();
  await running.promise; // the first call runs (a sequential batch starts it through the pump)
  batch.cancel();
  gate.resolve();
  const results = await batch.results();
  // the iterator delivers them as they end: the cancelled call at once
  assert.equal((await first).value.id, '2');
  assert.deepEqual(
    results.map((r) => r.outcome),
    ['ok', 'cancelled'],
  );
  reg.close();
});

test('close with a call in flight: its batch ends cancelled', async () => {
  const reg = new Registry();
  const started = deferred();
  reg.tool('forever', () => {
    started.resolve();
    return new Promise(() => {});
  });
  const p = reg.execute([{ id: '1', name: 'forever' }]);
  await started.promise;
  reg.close();
  const [r] = await p;
  assert.equal(r.outcome, 'cancelled');
  reg.close(); // idempotent
  assert.throws(() => reg.tool('x', () => 1), (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_SHUTTING_DOWN');
});

test('registration errors are CapstanError subclasses with status and pointer', () => {
  const reg = new Registry();
  assert.throws(
    () => reg.tool({ name: 'bad', parameters: { type: 'object', properties: { a: { type: 12 } } } }, () => 1),
    (e) => e instanceof SchemaError && e instanceof CapstanError && e.status === 'CAPSTAN_ERR_INVALID_SCHEMA' && e.statusCode === 5 && e.pointer === '/properties/a/type',
  );
  assert.throws(
    () => reg.tool('bad name!', () => 1),
    (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_INVALID_NAME' && /bad name!/.test(e.message),
  );
  reg.close();
});

test('bad calls and options reject before anything runs', async () => {
  const reg = new Registry();
  await assert.rejects(reg.execute('x'), (e) => e instanceof TypeError && /calls\[0\]/.test(e.message));
  await assert.rejects(reg.execute([], { limit: -1 }), RangeError);
  assert.deepEqual(await reg.execute([]), []);
  reg.close();
});

test('replacing and removing tools', async () => {
  const reg = new Registry();
  reg.tool('t', () => 'one');
  assert.throws(() => reg.tool('t', () => 'two'), (e) => e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT');
  reg.tool({ name: 't', replace: true }, () => 'two');
  assert.equal((await reg.execute({ id: '1', name: 't' }))[0].content, 'two');
  reg.removeTool('t');
  assert.equal((await reg.execute({ id: '2', name: 't' }))[0].outcome, 'unknown_tool');
  assert.throws(() => reg.removeTool('t'), (e) => e.status === 'CAPSTAN_ERR_NOT_FOUND');
  reg.close();
});

test('checkCall validates without running; tools() exports; coerce option', () => {
  const reg = new Registry({ coerce: true });
  let ran = false;
  reg.tool({ name: 'n', description: 'a number', parameters: { type: 'object', properties: { x: { type: 'integer' } } } }, () => {
    ran = true;
  });
  assert.deepEqual(reg.checkCall('n', { x: '4' }), { outcome: 'ok', arguments: { x: 4 } });
  const bad = reg.checkCall('n', '{"x": "four"}');
  assert.equal(bad.outcome, 'invalid_arguments');
  assert.equal(ran, false);
  const [chat] = reg.tools('openai_chat');
  assert.equal(chat.type, 'function');
  assert.equal(chat.function.name, 'n');
  assert.equal(chat.function.description, 'a number');
  reg.close();
});

test('an idle registry does not keep the process alive', async () => {
  const { spawnSync } = require('node:child_process');
  const script = `
    const { Registry } = require(${JSON.stringify(require.resolve('..'))});
    const reg = new Registry();
    reg.tool({ name: 't', timeoutMs: 10 }, () => new Promise(() => {}));
    reg.execute({ id: '1', name: 't' }).then((r) => console.log(r[0].outcome));
  `;
  const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20000 });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), 'timeout');
});

test('CAPSTAN_LIB names the library; a wrong one fails saying what was tried', () => {
  const { spawnSync } = require('node:child_process');
  const { libraryPath } = require('..');
  if (process.env.CAPSTAN_LIB) assert.equal(libraryPath, process.env.CAPSTAN_LIB);
  const out = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(require.resolve('..'))})`], {
    encoding: 'utf8',
    env: { ...process.env, CAPSTAN_LIB: '/nonexistent/libcapstan.so' },
    timeout: 20000,
  });
  assert.notEqual(out.status, 0);
  assert.match(out.stderr, /cannot load libcapstan \(set CAPSTAN_LIB/);
  assert.match(out.stderr, /\/nonexistent\/libcapstan\.so/);
});

test('close() during a batch bigger than its limit: the calls not started end cancelled', async () => {
  const reg = new Registry();
  const started = deferred();
  reg.tool('forever', () => {
    started.resolve();
    return new Promise(() => {});
  });
  const calls = Array.from({ length: 5 }, (_, i) => ({ id: `${i}`, name: 'forever' }));
  const p = reg.execute(calls, { limit: 2 });
  await started.promise;
  reg.close();
  const r = await p;
  assert.deepEqual(
    r.map((x) => x.outcome),
    ['cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled'],
  );
  assert.equal(r[4].content, 'Cancelled before it started.');
});

// The bindings agree (issue 49): a call without an id gets call_<index>, as in C.
test('a call without an id gets call_<index>', async () => {
  const reg = new Registry();
  reg.tool({ name: 'time' }, () => '12:00');
  const results = await reg.execute([{ name: 'time' }, { id: 'b', name: 'time' }, { name: 'time' }]);
  assert.deepEqual(results.map((r) => r.id), ['call_0', 'b', 'call_2']);
  reg.close();
});

test('JSON text given to execute says to parse it', () => {
  const reg = new Registry();
  reg.tool({ name: 'time' }, () => '12:00');
  assert.throws(() => reg.submit(['{"name": "time"}']), (e) => e instanceof TypeError && /is a string: execute takes call objects/.test(e.message) && /JSON\.parse/.test(e.message));
  reg.close();
});
