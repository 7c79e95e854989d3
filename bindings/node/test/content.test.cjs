'use strict';
// Content parts (a tool returning text and an image), history check and
// repair, tool search with the search tool and deferred tools.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, Image, File, CapstanError, checkHistory, parseCalls, formatResults } = require('..');

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const ANTHROPIC_CALLS = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'tool_use', id: 'toolu_1', name: 'chart', input: {} },
    { type: 'tool_use', id: 'toolu_2', name: 'add', input: { a: 1 } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 1, output_tokens: 1 },
};

function charts() {
  const reg = new Registry();
  reg.tool({ name: 'chart', description: 'Draws a chart.' }, async () => ['the chart:', new Image(PNG, 'image/png')]);
  reg.tool({ name: 'add', parameters: { type: 'object', properties: { a: { type: 'integer' } } } }, ({ a }) => ({ sum: a }));
  return reg;
}

test('a tool returning text and an image: the parts and their text, the caller\'s ids', async () => {
  const reg = charts();
  const [r, plain] = await reg.execute([
    { id: 'x', name: 'chart' },
    { id: 'x', name: 'add', arguments: { a: 2 } },
  ]);
  assert.equal(r.outcome, 'ok', r.content);
  assert.equal(r.id, 'x');
  assert.equal(r.content, 'the chart:\n[image: image/png, 8 bytes]');
  assert.deepEqual(r.parts, [
    { type: 'text', text: 'the chart:' },
    { type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' },
  ]);
  assert.equal(plain.id, 'x');
  assert.equal(plain.parts, undefined);
  reg.close();
});

test('runTurn sends the image to the provider as its tool_result block', async () => {
  const reg = charts();
  const turn = await reg.runTurn('anthropic', ANTHROPIC_CALLS);
  const [chart, add] = turn.messages.content;
  assert.equal(chart.type, 'tool_result');
  assert.equal(chart.tool_use_id, 'toolu_1');
  assert.deepEqual(chart.content[1], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } });
  assert.equal(add.tool_use_id, 'toolu_2');
  // OpenAI Chat: tool messages take text only; the image follows in one user message
  const chat = formatResults('openai_chat', turn.results);
  assert.equal(chat.at(-1).role, 'user');
  assert.ok(JSON.stringify(chat.at(-1)).includes(`data:image/png;base64,${PNG.toString('base64')}`));
  reg.close();
});

test('a part that fails capstan\'s check is a tool error naming it; audio files are audio parts', async () => {
  const reg = new Registry();
  reg.tool('bad', () => new Image(PNG, 'text/plain'));
  reg.tool('voice', () => new File(Buffer.from([1, 2]), 'audio/wav', 'a.wav'));
  reg.tool('pdf', () => ['see', new File(Buffer.from('%PDF-1.4'), 'application/pdf', 'r.pdf')]);
  const [bad, voice, pdf] = await reg.execute([
    { id: '1', name: 'bad' },
    { id: '2', name: 'voice' },
    { id: '3', name: 'pdf' },
  ]);
  assert.equal(bad.outcome, 'tool_error');
  assert.match(bad.content, /image\//);
  assert.equal(bad.parts, undefined);
  assert.equal(voice.parts[0].type, 'audio');
  assert.equal(pdf.parts[1].resource.uri, 'file:///r.pdf');
  assert.throws(() => new Image('not bytes', 'image/png'), TypeError);
  reg.close();
});

test('maxOutputChars caps each text part as capstan does', async () => {
  const reg = new Registry();
  reg.tool({ name: 'long', maxOutputChars: 5 }, () => ['abcdéfgh', new Image(PNG)]);
  const [r] = await reg.execute({ id: '1', name: 'long' });
  // the parts are capstan's own (capstan_result.parts_json): content is their text
  assert.equal(r.content, `${r.parts[0].text}\n[image: image/png, 8 bytes]`);
  assert.equal(r.parts[0].text, 'abcdé\n[truncated: 3 more characters]');
  reg.close();
});

test('ids: gated batches, approvals and the tool\'s ctx see the caller\'s ids', async () => {
  const reg = new Registry();
  const seen = [];
  reg.tool({ name: 'gated', requiresApproval: true }, (args, ctx) => {
    seen.push(ctx.id);
    return new Image(PNG);
  });
  const asked = [];
  reg.setApprover((req) => {
    asked.push(req.id);
    return true;
  });
  const calls = Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, name: 'gated' }));
  const results = await reg.execute(calls, { limit: 2, approvedIds: ['c3'] });
  assert.deepEqual(results.map((r) => r.id), calls.map((c) => c.id));
  assert.ok(results.every((r) => r.outcome === 'ok' && r.parts.length === 1));
  assert.deepEqual(seen.slice().sort(), calls.map((c) => c.id).sort());
  assert.deepEqual(asked.slice().sort(), calls.map((c) => c.id).filter((id) => id !== 'c3').sort());
  reg.close();
});

const CHAT_HISTORY = [
  { role: 'user', content: 'add 1 and 2' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } }] },
  { role: 'user', content: 'well?' },
];

test('checkHistory finds a call without a result and repairs it', () => {
  const found = checkHistory('openai_chat', CHAT_HISTORY);
  assert.equal(found.ok, false);
  assert.equal(found.findings[0].kind, 'missing_result');
  assert.equal(found.findings[0].call_id, 'c1');
  assert.equal(found.repaired, null);
  const fixed = checkHistory('openai_chat', { messages: CHAT_HISTORY }, { repair: true });
  const messages = fixed.repaired.messages;
  assert.equal(messages.length, 4);
  assert.equal(messages[2].role, 'tool');
  assert.equal(messages[2].tool_call_id, 'c1');
  assert.equal(checkHistory('openai_chat', messages).ok, true);
  assert.throws(() => checkHistory('mcp', []), (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT');
  assert.throws(() => checkHistory('nope', []), TypeError);
});

test('checkHistory with geminiSignatures asks for a thought signature', () => {
  const contents = [
    { role: 'user', parts: [{ text: 'hi' }] },
    { role: 'model', parts: [{ functionCall: { name: 'add', args: { a: 1 } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'add', response: { output: '1' } } }] },
  ];
  assert.equal(checkHistory('gemini', contents).ok, true);
  const signed = checkHistory('gemini', contents, { geminiSignatures: true, repair: true });
  assert.equal(signed.findings[0].kind, 'missing_signature');
  assert.equal(signed.repaired[1].parts[0].thoughtSignature, 'skip_thought_signature_validator');
});

function toolbox() {
  const reg = new Registry();
  reg.tool(
    { name: 'get_weather', description: 'Returns the weather forecast for a city.', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    () => 'sunny',
  );
  reg.tool({ name: 'send_email', description: 'Sends an email message to a recipient.', deferred: true }, () => 'sent');
  reg.tool({ name: 'read_file', description: 'Reads a file from disk.' }, () => 'text');
  return reg;
}

const exported = (reg) => reg.tools('openai_chat').map((t) => t.function.name);

test('search ranks tools by words or by a regex', () => {
  const reg = toolbox();
  const hits = reg.search('weather forecast');
  assert.equal(hits[0].name, 'get_weather');
  assert.ok(hits[0].score > 0);
  assert.deepEqual(reg.search('(?i)^send', { regex: true }).map((h) => h.name), ['send_email']);
  assert.throws(() => reg.search('(', { regex: true }), (e) => e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT');
  assert.throws(() => reg.search('x', { limit: 0 }), RangeError);
  reg.close();
});

test('a deferred tool is exported once the search tool found it, until unloadTools', async () => {
  const reg = toolbox().addSearchTool();
  assert.ok(!exported(reg).includes('send_email'));
  assert.ok(exported(reg).includes('tool_search'));
  assert.ok(reg.tools('describe').some((t) => t.name === 'send_email'));
  assert.equal((await reg.execute({ id: '0', name: 'send_email' }))[0].content, 'sent'); // callable any time
  const [found] = await reg.execute({ id: '1', name: 'tool_search', arguments: { query: 'email' } });
  assert.equal(JSON.parse(found.content).tools[0].name, 'send_email');
  assert.ok(exported(reg).includes('send_email'));
  reg.unloadTools();
  assert.ok(!exported(reg).includes('send_email'));
  reg.close();
});

test('the search tool takes a name and a limit', async () => {
  const reg = toolbox().addSearchTool({ name: 'find_tools', limit: 1 });
  const [r] = await reg.execute({ id: '1', name: 'find_tools', arguments: { query: 'file disk' } });
  assert.deepEqual(JSON.parse(r.content).tools.map((t) => t.name), ['read_file']);
  assert.throws(() => reg.addSearchTool({ limit: 101 }), (e) => e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT');
  reg.close();
});

test('parseCalls + execute + formatResults keeps the parts as runTurn does', async () => {
  const reg = charts();
  const turn = await reg.runTurn('anthropic', ANTHROPIC_CALLS);
  const results = await reg.execute(parseCalls('anthropic', ANTHROPIC_CALLS));
  assert.deepEqual(formatResults('anthropic', results), turn.messages);
  reg.close();
});

test('a submitted batch\'s results carry the tool\'s image part, from capstan\'s result', async () => {
  const reg = charts();
  const batch = reg.submit([
    { id: 's1', name: 'chart' },
    { id: 's2', name: 'chart' },
    { id: 's3', name: 'add', arguments: { a: 1 } },
  ]);
  const seen = [];
  for await (const r of batch) seen.push(r);
  assert.equal(seen.length, 3);
  for (const r of seen.filter((x) => x.name === 'chart')) {
    assert.equal(r.outcome, 'ok', r.content);
    assert.deepEqual(r.parts[1], { type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' });
  }
  assert.equal(seen.find((x) => x.name === 'add').parts, undefined);
  const all = await batch.results();
  assert.deepEqual(all.map((r) => r.id), ['s1', 's2', 's3']);
  assert.equal(all[0].parts[1].type, 'image');
  reg.close();
});

test('runTurn with wholeTurn starts with the assistant message holding the thinking block unchanged', async () => {
  const reg = charts();
  const thinking = { type: 'thinking', thinking: 'Add one.', signature: 'EqQBCkYIBRgCKkD/sig==' };
  const response = { ...ANTHROPIC_CALLS, content: [thinking, ...ANTHROPIC_CALLS.content] };
  const turn = await reg.runTurn('anthropic', response, { wholeTurn: true });
  assert.equal(turn.calls.length, 2);
  assert.equal(turn.messages.length, 2);
  assert.equal(turn.messages[0].role, 'assistant');
  assert.deepEqual(turn.messages[0].content[0], thinking);
  assert.equal(turn.messages[1].role, 'user');
  assert.deepEqual(turn.messages[1].content.map((b) => b.tool_use_id), ['toolu_1', 'toolu_2']);
  assert.equal(turn.messages[1].content[0].content[1].type, 'image');
  reg.close();
});
