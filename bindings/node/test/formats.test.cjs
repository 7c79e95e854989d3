'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, parseCalls, formatResults, ProviderError, CapstanError } = require('..');
const { fixture } = require('./helpers.cjs');

// Echoes what it was called with, so each message can be traced to its call.
function echoRegistry(names) {
  const reg = new Registry();
  for (const n of names) reg.tool(n, async (args, ctx) => ({ tool: ctx.name, args }));
  return reg;
}

test('openai_chat: a chat completion with parallel tool calls -> tool messages', async () => {
  const reg = echoRegistry(['book_trip', 'get_time']);
  const turn = await reg.runTurn('openai_chat', fixture('openai_chat_parallel.json'));
  assert.deepEqual(
    turn.calls.map((c) => [c.id, c.name]),
    [
      ['call_Wx1', 'book_trip'],
      ['call_Wx2', 'get_time'],
    ],
  );
  assert.equal(turn.messages.length, 2);
  assert.deepEqual(
    turn.messages.map((m) => [m.role, m.tool_call_id]),
    [
      ['tool', 'call_Wx1'],
      ['tool', 'call_Wx2'],
    ],
  );
  const booked = JSON.parse(turn.messages[0].content);
  assert.deepEqual(booked.args.traveler, { name: 'Zoë Ørsted', tags: ['vip', '直行'] });
  assert.equal(booked.args.note, '🚆 then ✈️');
  reg.close();
});

test('openai_responses: function_call items -> function_call_output items', async () => {
  const reg = echoRegistry(['get_weather']);
  const turn = await reg.runTurn('openai_responses', fixture('openai_responses_parallel.json'));
  assert.deepEqual(
    turn.messages.map((m) => [m.type, m.call_id, JSON.parse(m.output).args.city]),
    [
      ['function_call_output', 'call_Par1s', 'Paris'],
      ['function_call_output', 'call_T0ky0', '東京'],
    ],
  );
  reg.close();
});

test('anthropic: tool_use blocks -> one user message of tool_result blocks', async () => {
  const reg = echoRegistry(['get_weather', 'get_time']);
  const turn = await reg.runTurn('anthropic', fixture('anthropic_parallel.json'));
  assert.equal(turn.messages.role, 'user');
  assert.deepEqual(
    turn.messages.content.map((b) => [b.type, b.tool_use_id]),
    [
      ['tool_result', 'toolu_01A'],
      ['tool_result', 'toolu_01B'],
    ],
  );
  assert.equal(JSON.parse(turn.messages.content[0].content).args.location, 'São Paulo, BR');
  reg.close();
});

test('gemini: functionCall parts -> functionResponse parts', async () => {
  const reg = echoRegistry(['set_light', 'get_time']);
  const turn = await reg.runTurn('gemini', fixture('gemini_parallel.json'));
  assert.equal(turn.messages.role, 'user');
  const responses = turn.messages.parts.map((p) => p.functionResponse);
  assert.deepEqual(
    responses.map((r) => r.name),
    ['set_light', 'get_time'],
  );
  assert.deepEqual(responses[0].response.output.args, { room: 'kök', level: { brightness: 25, warm: true } });
  reg.close();
});

test('mcp: tools/call requests -> CallToolResults', async () => {
  const reg = echoRegistry(['get_weather', 'get_current_time']);
  const turn = await reg.runTurn('mcp', fixture('mcp_tools_call_batch.json').requests);
  assert.deepEqual(
    turn.calls.map((c) => c.id),
    ['7', 'req-8'],
  );
  assert.equal(turn.messages.length, 2);
  assert.equal(turn.messages[0].isError, false);
  assert.deepEqual(turn.messages[0].structuredContent.args, { location: 'Zürich' });
  reg.close();
});

test('responses asking for no tool: no calls, nothing runs', async () => {
  const reg = new Registry();
  assert.deepEqual(parseCalls('anthropic', fixture('anthropic_no_calls.json')), []);
  const turn = await reg.runTurn('openai_chat', fixture('openai_chat_no_calls.json'));
  assert.deepEqual(turn.calls, []);
  assert.deepEqual(turn.results, []);
  reg.close();
});

test('parseCalls takes an object, JSON text or bytes alike', () => {
  const body = fixture('anthropic_parallel.json');
  const a = parseCalls('anthropic', body);
  assert.deepEqual(parseCalls('anthropic', JSON.stringify(body)), a);
  assert.deepEqual(parseCalls('anthropic', Buffer.from(JSON.stringify(body))), a);
  assert.deepEqual(a[1], { id: 'toolu_01B', name: 'get_time', arguments: {} });
});

test('formatResults writes error results as errors', () => {
  const msgs = formatResults('anthropic', [
    { id: 'toolu_1', name: 't', content: 'boom', isError: true, outcome: 'tool_error', durationUs: 1 },
  ]);
  assert.deepEqual(msgs.content[0], { type: 'tool_result', tool_use_id: 'toolu_1', content: 'boom', is_error: true });
});

test('provider error bodies reject as ProviderError with the provider fields; nothing runs', async () => {
  const reg = new Registry();
  let ran = false;
  reg.tool('t', () => {
    ran = true;
  });
  await assert.rejects(
    reg.runTurn('gemini', { error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }),
    (e) =>
      e instanceof ProviderError &&
      e.status === 'CAPSTAN_ERR_PROVIDER_ERROR' &&
      e.provider.type === 'RESOURCE_EXHAUSTED' &&
      e.provider.httpStatus === 429 &&
      e.provider.message === 'quota',
  );
  assert.throws(
    () => parseCalls('openai_chat', { error: { message: 'Rate limit', type: 'requests', code: 'rate_limit_exceeded' } }),
    (e) => e instanceof ProviderError && e.provider.code === 'rate_limit_exceeded' && /Rate limit/.test(e.message),
  );
  assert.throws(
    () => parseCalls('anthropic', { type: 'error', error: { type: 'overloaded_error', message: 'busy' } }),
    (e) => e instanceof ProviderError && e.provider.kind === 'overloaded_error',
  );
  assert.equal(ran, false);
  reg.close();
});

test('malformed responses and unknown formats', () => {
  assert.throws(
    () => parseCalls('anthropic', '{"content": [{"type": "tool_use"}]}'),
    (e) => e instanceof CapstanError && !(e instanceof ProviderError) && e.status === 'CAPSTAN_ERR_INVALID_RESPONSE' && /content\[0\]/.test(e.message),
  );
  assert.throws(() => parseCalls('openai_chatt', {}), (e) => e instanceof TypeError && /openai_chat/.test(e.message));
});

// The bindings agree (issue 49): `openai` is `openai_chat` here as in Python.
test('openai is an alias of openai_chat', () => {
  const reg = new Registry();
  reg.tool({ name: 'get_time', parameters: { type: 'object' } }, () => '');
  assert.deepEqual(reg.tools('openai'), reg.tools('openai_chat'));
  const body = { choices: [{ message: { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }] } }] };
  assert.deepEqual(parseCalls('openai', body), parseCalls('openai_chat', body));
  reg.close();
});

test('tools() in each format', () => {
  const reg = new Registry();
  reg.tool({ name: 'get_time', description: 'Current time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } }, () => '');
  assert.equal(reg.tools('openai_chat')[0].function.name, 'get_time');
  assert.equal(reg.tools('openai_responses')[0].name, 'get_time');
  assert.equal(reg.tools('anthropic')[0].input_schema.properties.tz.type, 'string');
  assert.equal(reg.tools('gemini')[0].functionDeclarations[0].name, 'get_time');
  assert.equal(reg.tools('mcp')[0].inputSchema.type, 'object');
  const { tools, report } = reg.exportTools('openai_chat', { strict: true });
  assert.equal(tools[0].function.strict, true);
  assert.deepEqual(report, []);
  reg.close();
});
