'use strict';
// The event hook, progress, stats, the deadline, Gemini lowering and MCP
// tool metadata (issue #34).
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, CapstanError } = require('..');

// Lets the hook's microtasks run.
const settle = () => new Promise((r) => setImmediate(r));

test('the event hook sees each call start and finish with its outcome, and stats count them', async () => {
  const reg = new Registry();
  reg.tool({ name: 'ok', parameters: { type: 'object', properties: { n: { type: 'integer' } } } }, ({ n }) => n);
  reg.tool('bad', async () => {
    throw new Error('no');
  });
  const events = [];
  reg.setEventHook((e) => events.push(e));
  const r = await reg.execute([
    { id: 'a', name: 'ok', arguments: { n: 1 } },
    { id: 'b', name: 'bad' },
    { id: 'c', name: 'ok', arguments: { n: 'x' } },
  ]);
  assert.deepEqual(
    r.map((x) => x.outcome),
    ['ok', 'tool_error', 'invalid_arguments'],
  );
  await settle();
  const seen = events.map((e) => `${e.kind}:${e.id}:${e.tool}:${e.index}${e.outcome ? `:${e.outcome}` : ''}`).sort();
  assert.deepEqual(seen, ['finished:a:ok:0:ok', 'finished:b:bad:1:tool_error', 'finished:c:ok:2:invalid_arguments', 'started:a:ok:0', 'started:b:bad:1'].sort());
  const stats = reg.stats().tools;
  assert.equal(stats.ok.calls, 2);
  assert.equal(stats.ok.outcomes.ok, 1);
  assert.equal(stats.ok.outcomes.invalid_arguments, 1);
  assert.equal(stats.bad.outcomes.tool_error, 1);
  // Removed: no more events.
  reg.setEventHook(null);
  events.length = 0;
  await reg.execute({ id: 'd', name: 'ok', arguments: { n: 2 } });
  await settle();
  assert.deepEqual(events, []);
  reg.close();
});

test('a tool reports progress through ctx.progress; it reaches the event hook; bad reports throw, late ones return false', async () => {
  const reg = new Registry();
  let ctxSeen = null;
  const refused = [];
  reg.tool('work', async (_args, ctx) => {
    ctxSeen = ctx;
    assert.equal(ctx.progress(1, 4, 'one'), true);
    for (const bad of [
      () => ctx.progress(1, 4, 'same'), // not above the previous report
      () => ctx.progress(Number.NaN),
      () => ctx.progress(5, -1),
    ]) {
      try {
        bad();
        refused.push('accepted');
      } catch (e) {
        refused.push(e instanceof CapstanError ? e.status : String(e));
      }
    }
    await new Promise((r) => setTimeout(r, 1));
    assert.equal(ctx.progress(2.5), true);
    return 'done';
  });
  const events = [];
  reg.setEventHook((e) => {
    if (e.kind === 'progress') events.push([e.id, e.tool, e.progress, e.total, e.message]);
  });
  const [res] = await reg.execute({ id: 'p1', name: 'work' });
  assert.equal(res.content, 'done');
  await settle();
  assert.deepEqual(refused, ['CAPSTAN_ERR_INVALID_ARGUMENT', 'CAPSTAN_ERR_INVALID_ARGUMENT', 'CAPSTAN_ERR_INVALID_ARGUMENT']);
  assert.deepEqual(events, [
    ['p1', 'work', 1, 4, 'one'],
    ['p1', 'work', 2.5, 0, null],
  ]);
  // The call has its result: a report now is refused without a throw.
  assert.equal(ctxSeen.progress(3, 4, 'late'), false);
  reg.close();
});

test('a tool logs through ctx.log; info then warning reach the event hook in order between started and finished; a bad level throws and nothing is sent, a late log returns false', async () => {
  const reg = new Registry();
  let ctxSeen = null;
  const refused = [];
  reg.tool('chatty', async (_args, ctx) => {
    ctxSeen = ctx;
    assert.equal(ctx.log('info', 'started'), true);
    for (const bad of [
      () => ctx.log('verbose', 'x'), // not an MCP level
      () => ctx.log('INFO', 'x'), // the names are lower case
      () => ctx.log(1, 'x'),
      () => ctx.log('info', 'x'.repeat(64 * 1024 + 1)), // past 64 KiB: capstan refuses it
    ]) {
      try {
        bad();
        refused.push('accepted');
      } catch (e) {
        refused.push(e instanceof CapstanError ? e.status : String(e));
      }
    }
    assert.throws(() => ctx.log('info', null), TypeError);
    await new Promise((r) => setTimeout(r, 1));
    assert.equal(ctx.log('warning', 'half way'), true);
    return 'done';
  });
  const events = [];
  reg.setEventHook((e) => events.push(e));
  const [res] = await reg.execute({ id: 'l1', name: 'chatty' });
  assert.equal(res.content, 'done');
  await settle();
  assert.deepEqual(refused, Array(4).fill('CAPSTAN_ERR_INVALID_ARGUMENT'));
  assert.deepEqual(
    events.map((e) => [e.kind, e.level, e.message]),
    [
      ['started', undefined, undefined],
      ['log', 'info', 'started'],
      ['log', 'warning', 'half way'],
      ['finished', undefined, undefined],
    ],
  );
  assert.equal(events[1].tool, 'chatty');
  assert.equal(events[1].id, 'l1');
  // The call has its result: a log now is refused without a throw and reaches nobody.
  assert.equal(ctxSeen.log('error', 'late'), false);
  await settle();
  assert.equal(events.length, 4);
  // The level is still checked.
  assert.throws(() => ctxSeen.log('loud', 'late'), (e) => e instanceof CapstanError && /not one of debug, info/.test(e.message));
  reg.close();
});

test('every MCP log level reaches the event hook by its name', async () => {
  const levels = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
  const reg = new Registry();
  reg.tool('loud', (_args, ctx) => {
    for (const level of levels) ctx.log(level, level.toUpperCase());
    return 'ok';
  });
  const events = [];
  reg.setEventHook((e) => {
    if (e.kind === 'log') events.push([e.level, e.message]);
  });
  await reg.execute({ id: 'l2', name: 'loud' });
  await settle();
  assert.deepEqual(
    events,
    levels.map((l) => [l, l.toUpperCase()]),
  );
  reg.close();
});

test('a call running past deadlineMs ends timeout saying so; the tool sees the cancellation; the hook sees timed_out', async () => {
  const reg = new Registry();
  let ctxSeen = null;
  const started = [];
  reg.tool('stuck', (_args, ctx) => {
    ctxSeen = ctx;
    started.push(ctx.id);
    return new Promise(() => {}); // never settles
  });
  const events = [];
  reg.setEventHook((e) => events.push(`${e.kind}:${e.id}${e.outcome ? `:${e.outcome}` : ''}`));
  // One call: it starts inside execute() (START_INLINE), so it is running
  // when the deadline passes, however late the event loop is.
  const r = await reg.execute({ id: 's1', name: 'stuck' }, { deadlineMs: 60 });
  assert.equal(r[0].outcome, 'timeout');
  assert.match(r[0].content, /deadline of 60 ms/);
  assert.deepEqual(started, ['s1']);
  assert.equal(ctxSeen.cancelled(), true);
  await settle();
  assert.ok(events.includes('timed_out:s1'), events.join(' '));
  assert.ok(events.includes('finished:s1:timeout'), events.join(' '));
  reg.close();
});

test('geminiLower exports the OpenAPI subset Gemini takes (parameters, $ref inlined) instead of parametersJsonSchema', () => {
  const reg = new Registry();
  reg.tool(
    {
      name: 't',
      parameters: { type: 'object', $defs: { p: { type: 'string', pattern: '^x' } }, properties: { v: { $ref: '#/$defs/p' } }, required: ['v'] },
    },
    () => '',
  );
  const plain = reg.tools('gemini')[0].functionDeclarations[0];
  assert.ok(plain.parametersJsonSchema, JSON.stringify(plain));
  const low = reg.tools('gemini', { geminiLower: true })[0].functionDeclarations[0];
  assert.equal(low.parametersJsonSchema, undefined, JSON.stringify(low));
  assert.equal(low.parameters.properties.v.type.toLowerCase(), 'string');
  assert.deepEqual(low.parameters.required, ['v']);
  reg.close();
});

const META = {
  title: 'Addition',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] },
  icons: [{ src: 'https://example.com/add.png', mimeType: 'image/png', sizes: ['48x48'] }],
};

function summer() {
  const reg = new Registry();
  reg.tool(
    { name: 'sum', description: 'Adds.', parameters: { type: 'object', properties: { lie: { type: 'boolean' } } }, ...META },
    ({ lie }) => (lie ? { sum: '3' } : { sum: 3 }),
  );
  return reg;
}

// One JSON-RPC request over streamable HTTP: every message of the answer
// (JSON, or the SSE events' data), the response last.
async function rpcAll(url, session, id, method, params) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) {
    headers['mcp-session-id'] = session;
    headers['mcp-protocol-version'] = '2025-06-18';
  }
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  assert.equal(res.status, 200);
  const text = await res.text();
  if (!res.headers.get('content-type').startsWith('text/event-stream')) return [JSON.parse(text)];
  return text
    .split('\n')
    .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '')
    .map((l) => JSON.parse(l.slice(5)));
}

// One JSON-RPC request over streamable HTTP; the answer is JSON or one SSE event.
async function rpc(url, session, id, method, params) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) {
    headers['mcp-session-id'] = session;
    headers['mcp-protocol-version'] = '2025-06-18';
  }
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  assert.equal(res.status, 200, await res.clone().text());
  const text = await res.text();
  const body = res.headers.get('content-type').startsWith('text/event-stream')
    ? JSON.parse(text.split('\n').find((l) => l.startsWith('data:') && l.slice(5).trim() !== '').slice(5))
    : JSON.parse(text);
  return { body, session: res.headers.get('mcp-session-id') ?? session };
}

test('MCP metadata on a tool: title, annotations, outputSchema and icons in the exports and the served tools/list', async () => {
  const reg = summer();
  const mcp = reg.tools('mcp')[0];
  assert.equal(mcp.title, 'Addition');
  assert.deepEqual(mcp.annotations, META.annotations);
  assert.deepEqual(mcp.outputSchema, META.outputSchema);
  assert.deepEqual(mcp.icons, META.icons);
  assert.equal(reg.tools('describe')[0].mcp.title, 'Addition');
  const server = reg.serve();
  const init = await rpc(server.url, null, 1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'node-test', version: '0' },
  });
  await fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(init.session ? { 'mcp-session-id': init.session } : {}),
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  const list = await rpc(server.url, init.session, 2, 'tools/list', {});
  const served = list.body.result.tools.find((t) => t.name === 'sum');
  assert.equal(served.title, 'Addition');
  assert.deepEqual(served.annotations, META.annotations);
  assert.deepEqual(served.outputSchema, META.outputSchema);
  assert.deepEqual(served.icons, META.icons);
  await server.stop();
  // The server's toolsMeta replaces the fields it gives, per tool.
  const other = reg.serve({ toolsMeta: { sum: { title: 'Sum (served)' } } });
  const init2 = await rpc(other.url, null, 1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'node-test', version: '0' },
  });
  const listed = (await rpc(other.url, init2.session, 2, 'tools/list', {})).body.result.tools.find((t) => t.name === 'sum');
  assert.equal(listed.title, 'Sum (served)');
  assert.deepEqual(listed.annotations, META.annotations);
  await other.stop();
  reg.close();
});

test('with an outputSchema, a result that fails it is a tool error naming the place; bad metadata is refused', async () => {
  const reg = summer();
  const [good, lie] = await reg.execute([
    { id: 'a', name: 'sum' },
    { id: 'b', name: 'sum', arguments: { lie: true } },
  ]);
  assert.equal(good.outcome, 'ok');
  assert.deepEqual(good.structuredContent ?? JSON.parse(good.content), { sum: 3 });
  assert.equal(lie.outcome, 'tool_error');
  assert.match(lie.content, /does not match its outputSchema/);
  assert.match(lie.content, /\/sum/);
  assert.throws(
    () => reg.tool({ name: 'x', annotations: { readOnlyHint: 'yes' } }, () => ''),
    (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT' && /readOnlyHint/.test(e.message),
  );
  reg.close();
});

test('progress a JS tool reports reaches an MCP client that sent a progressToken', async () => {
  const reg = new Registry();
  reg.tool('work', async (_args, ctx) => {
    ctx.progress(1, 2, 'half');
    await new Promise((r) => setTimeout(r, 1));
    ctx.progress(2, 2);
    return 'done';
  });
  const server = reg.serve();
  const init = await rpc(server.url, null, 1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'node-test', version: '0' },
  });
  const messages = await rpcAll(server.url, init.session, 2, 'tools/call', { name: 'work', arguments: {}, _meta: { progressToken: 'tok' } });
  const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params);
  assert.deepEqual(progress, [
    { progressToken: 'tok', progress: 1, total: 2, message: 'half' },
    { progressToken: 'tok', progress: 2, total: 2 },
  ]);
  assert.equal(messages.at(-1).result.content[0].text, 'done');
  await server.stop();
  reg.close();
});
