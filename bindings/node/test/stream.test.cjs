'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { Registry, CapstanError, ProviderError } = require('..');
const { deferred } = require('./helpers.cjs');

// tests/fixtures/stream: streamed bodies (.sse) and the same responses not streamed (.json).
const STREAMS = path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures', 'stream');
const sse = (format, name) => fs.readFileSync(path.join(STREAMS, format, `${name}.sse`));
const whole = (format, name) => JSON.parse(fs.readFileSync(path.join(STREAMS, format, `${name}.json`), 'utf8'));

function weatherRegistry() {
  const reg = new Registry();
  reg.tool('get_weather', async (args) => {
    await new Promise((r) => setImmediate(r));
    return { city: args.city, t: 21 };
  });
  reg.tool('get_time', () => '12:00');
  return reg;
}

// The body as a web ReadableStream of small chunks (splitting lines, JSON and UTF-8).
function chunked(bytes, size = 37) {
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += size) controller.enqueue(new Uint8Array(bytes.subarray(i, i + size)));
      controller.close();
    },
  });
}

for (const format of ['openai_chat', 'openai_responses', 'anthropic', 'gemini']) {
  test(`${format}: a streamed response gives what the same response not streamed gives`, async () => {
    const reg = weatherRegistry();
    const streamed = await reg.runStream(format, chunked(sse(format, 'parallel')));
    const turn = await reg.runTurn(format, whole(format, 'parallel'));
    assert.equal(streamed.calls.length, 3);
    assert.deepEqual(
      streamed.results.map((r) => [r.index, r.id, r.outcome, r.content]),
      turn.results.map((r) => [r.index, r.id, r.outcome, r.content]),
    );
    assert.deepEqual(streamed.messages, turn.messages);
    assert.equal(streamed.cancelled, false);
    reg.close();
  });
}

test('early dispatch: a call runs before the body ends; results iterate as they end', async () => {
  const reg = new Registry();
  const started = deferred();
  const release = deferred();
  reg.tool('get_weather', async (args) => {
    started.resolve(args.city);
    await release.promise;
    return args.city;
  });
  reg.tool('get_time', () => 'noon');
  const body = sse('anthropic', 'parallel');
  // Everything up to the second tool_use block: the first call is complete.
  const cut = body.indexOf('"call_t2"');
  assert.ok(cut > 0);
  const stream = reg.stream('anthropic', { earlyDispatch: true });
  stream.feed(body.subarray(0, cut));
  assert.equal(await started.promise, 'Paris');
  stream.feed(body.subarray(cut));
  release.resolve();
  const seen = [];
  const iterate = (async () => {
    for await (const r of stream) seen.push(r.id);
  })();
  const turn = await stream.finish();
  await iterate;
  assert.deepEqual(seen.slice().sort(), turn.calls.map((c) => c.id).sort());
  assert.deepEqual(
    turn.results.map((r) => r.outcome),
    ['ok', 'ok', 'ok'],
  );
  reg.close();
});

test('without early dispatch no call starts before finish()', async () => {
  const reg = new Registry();
  let runs = 0;
  reg.tool('get_weather', () => {
    runs++;
    return 'x';
  });
  reg.tool('get_time', () => 'noon');
  const stream = reg.stream('openai_chat');
  stream.feed(sse('openai_chat', 'parallel'));
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(runs, 0);
  const turn = await stream.finish();
  assert.equal(runs, 2);
  assert.equal(turn.results.length, 3);
  reg.close();
});

test('text deltas reach onText and add up to the text', async () => {
  const reg = weatherRegistry();
  const deltas = [];
  const turn = await reg.runStream('openai_chat', chunked(sse('openai_chat', 'text_then_calls'), 11), { onText: (t) => deltas.push(t) });
  assert.ok(deltas.length > 1);
  assert.equal(deltas.join(''), turn.text);
  assert.match(turn.text, /☕/);
  reg.close();
});

test('a call the response cut is never run', async () => {
  const reg = weatherRegistry();
  let timeRuns = 0;
  reg.tool({ name: 'get_time', replace: true }, () => {
    timeRuns++;
    return '';
  });
  const turn = await reg.runStream('anthropic', sse('anthropic', 'truncated'));
  assert.equal(turn.stopReason, 'max_tokens');
  assert.deepEqual(turn.cutCalls, [1]);
  assert.equal(turn.results[1].outcome, 'invalid_arguments');
  assert.equal(timeRuns, 0);
  reg.close();
});

test('an error event rejects with ProviderError; a dropped body with STREAM_TRUNCATED', async () => {
  const reg = weatherRegistry();
  await assert.rejects(reg.runStream('anthropic', sse('anthropic', 'error')), (e) => e instanceof ProviderError && e.provider.kind === 'overloaded_error');
  await assert.rejects(
    reg.runStream('openai_chat', sse('openai_chat', 'dropped')),
    (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_STREAM_TRUNCATED',
  );
  assert.throws(() => reg.stream('mcp'), TypeError);
  reg.close();
});

test('runStream reads a fetch() Response body', async () => {
  const body = sse('gemini', 'parallel');
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const next = () => {
      if (i >= body.length) return res.end();
      res.write(body.subarray(i, i + 64));
      i += 64;
      setImmediate(next);
    };
    next();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const reg = weatherRegistry();
    const response = await fetch(`http://127.0.0.1:${server.address().port}/v1beta/models/m:streamGenerateContent?alt=sse`);
    const turn = await reg.runStream('gemini', response);
    assert.deepEqual(
      turn.messages.parts.map((p) => p.functionResponse.name),
      ['get_weather', 'get_time', 'get_weather'],
    );
    reg.close();
  } finally {
    server.close();
  }
});

test('close() with a live stream cancels and finishes it first', async () => {
  const reg = weatherRegistry();
  const stream = reg.stream('openai_chat');
  const body = sse('openai_chat', 'parallel');
  stream.feed(body.subarray(0, 100));
  reg.close();
  const turn = await stream.finish();
  assert.equal(turn.cancelled, true);
  assert.deepEqual(turn.results, []);
  assert.throws(() => reg.stream('openai_chat'), (e) => e.status === 'CAPSTAN_ERR_SHUTTING_DOWN');
});
