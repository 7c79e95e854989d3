'use strict';
// A JS tool asking its caller for input (throw InputRequired; read
// ctx.input): a stateless 2026-07-28 MCP client, played here with plain HTTP
// POSTs, gets the requests and a sealed requestState, answers, and the tool
// sees the answers and its own state; a tampered state never reaches the
// tool. Any other caller cannot be asked: the call is a tool error saying why.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, InputRequired, CapstanError } = require('..');

const ASK = {
  name: {
    method: 'elicitation/create',
    params: {
      message: 'What is your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
  },
};

// `greet` (async: it asks after an await, so the call is asked from a
// promise's rejection, not from inside the pump) and `greetNow` (sync).
function greeter(seen) {
  const reg = new Registry();
  const body = (ctx) => {
    seen.push(ctx.input);
    const answer = ctx.input.inputResponses?.name;
    if (answer?.action !== 'accept') throw new InputRequired(ASK, 'asked-name');
    return `Hello, ${answer.content.name}! (${ctx.input.requestState})`;
  };
  reg.tool('greet', async (_args, ctx) => {
    await new Promise((r) => setTimeout(r, 1));
    return body(ctx);
  });
  reg.tool('greetNow', (_args, ctx) => body(ctx));
  return reg;
}

// One stateless 2026-07-28 tools/call (tests/mcp_server/input.rs call_modern).
async function callModern(url, name, capabilities, extra = {}) {
  const params = {
    name,
    arguments: {},
    ...extra,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': Object.fromEntries(capabilities.map((c) => [c, {}])),
    },
  };
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params }),
  });
  const text = await response.text();
  const data = text.split('\n').find((l) => l.startsWith('data: {'));
  return JSON.parse(data ? data.slice(6) : text);
}

for (const tool of ['greet', 'greetNow']) {
  test(`${tool}: a 2026-07-28 client gets the input requests, answers, and the tool sees the answers and its state`, async () => {
    const seen = [];
    const reg = greeter(seen);
    const server = reg.serve();
    try {
      const first = await callModern(server.url, tool, ['elicitation', 'sampling', 'roots']);
      const result = first.result;
      assert.equal(result.resultType, 'input_required', JSON.stringify(first));
      assert.deepEqual(Object.keys(result.inputRequests), ['name']);
      assert.equal(result.inputRequests.name.method, 'elicitation/create');
      assert.equal(result.inputRequests.name.params.message, 'What is your name?');
      assert.equal(result.content, undefined);
      const sealed = result.requestState;
      assert.equal(typeof sealed, 'string');
      assert.ok(!sealed.includes('asked-name'), `the state travels sealed: ${sealed}`);
      assert.deepEqual(seen, [{ canAsk: ['elicitation/create', 'sampling/createMessage', 'roots/list'] }]);

      const answers = { name: { action: 'accept', content: { name: 'Ada' } } };
      const second = await callModern(server.url, tool, ['elicitation'], { inputResponses: answers, requestState: sealed });
      assert.notEqual(second.result.isError, true, JSON.stringify(second));
      assert.equal(second.result.content[0].text, 'Hello, Ada! (asked-name)');
      assert.deepEqual(seen[1].inputResponses, answers);
      assert.equal(seen[1].requestState, 'asked-name');

      // A changed state is refused before the tool runs.
      const last = sealed.at(-1) === 'A' ? 'B' : 'A';
      const tampered = await callModern(server.url, tool, ['elicitation'], {
        inputResponses: answers,
        requestState: sealed.slice(0, -1) + last,
      });
      assert.equal(tampered.error?.code, -32602, JSON.stringify(tampered));
      assert.match(tampered.error.message, /requestState failed its integrity check/);
      assert.equal(seen.length, 2, 'the tool never ran on the refused round');
    } finally {
      await server.stop();
      reg.close();
    }
  });
}

test('a client that did not declare the capability asked for gets MissingRequiredClientCapability naming it', async () => {
  const seen = [];
  const reg = greeter(seen);
  const server = reg.serve();
  try {
    // The tool's ask is refused (it fails then): a 2026-07-28 client gets -32021.
    const answer = await callModern(server.url, 'greet', ['sampling']);
    assert.equal(answer.error?.code, -32021, JSON.stringify(answer));
    assert.deepEqual(answer.error.data.requiredCapabilities, { elicitation: {} });
    assert.deepEqual(seen[0].canAsk, ['sampling/createMessage']);
  } finally {
    await server.stop();
    reg.close();
  }
});

test('a caller that cannot answer (a plain execute) gets a tool error saying why', async () => {
  const seen = [];
  const reg = greeter(seen);
  const r = await reg.execute([
    { id: 'a', name: 'greet' },
    { id: 'b', name: 'greetNow' },
  ]);
  for (const result of r) {
    assert.equal(result.outcome, 'tool_error', JSON.stringify(result));
    assert.match(result.content, /the tool asked for input \(name \(elicitation\/create\)\), which its caller cannot give: .*cannot be asked/);
  }
  assert.deepEqual(seen, [{ canAsk: [] }, { canAsk: [] }]);
  reg.close();
});

test('requests capstan refuses end the call with its reason; bad arguments to InputRequired throw', async () => {
  const reg = new Registry();
  reg.tool('bad', () => {
    throw new InputRequired({ k: { method: 'ping' } });
  });
  const [result] = await reg.execute({ id: '1', name: 'bad' });
  assert.equal(result.outcome, 'tool_error');
  assert.match(result.content, /must be one of elicitation\/create/);
  assert.throws(() => new InputRequired([]), TypeError);
  assert.throws(() => new InputRequired({}, 7), TypeError);
  assert.ok(!(new InputRequired({}) instanceof CapstanError));
  reg.close();
});
