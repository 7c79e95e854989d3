'use strict';
// registry.mount({ url, input }): the host answers what a mounted server asks
// while running a tool. The server is capstan's own, serving a JS tool that
// throws InputRequired; the mount answers for either protocol era (an async
// answerer, as a user answering is), and a host that gives no answer, throws
// or rejects fails the call as a tool error. The relay worker carrying the
// answerer (lib/input_relay.cjs) ends once capstan lets go of it. Its own
// file: worker_threads.Worker is watched before the binding loads.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const threads = require('node:worker_threads');

const relays = { started: 0, ended: 0 };
const Worker = threads.Worker;
threads.Worker = class extends Worker {
  constructor(file, options) {
    super(file, options);
    if (path.basename(String(file)) === 'input_relay.cjs') {
      relays.started++;
      this.once('exit', () => relays.ended++);
    }
  }
};
const { Registry, InputRequired } = require('..');

const ASK = {
  name: {
    method: 'elicitation/create',
    params: {
      message: 'What is your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
  },
};

function asker() {
  const reg = new Registry();
  reg.tool('ask_name', (_args, ctx) => {
    const answer = ctx.input.inputResponses?.name;
    if (answer?.action !== 'accept') throw new InputRequired(ASK, 'asked');
    return `Hello, ${answer.content.name}!`;
  });
  return reg;
}

async function allEnded() {
  for (let i = 0; i < 200 && relays.ended < relays.started; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(relays.ended, relays.started, 'every relay ended once capstan let go of it');
}

async function callOnce(url, options) {
  const client = new Registry();
  try {
    const mount = await client.mount({ url, prefix: 'in_', ...options });
    const [r] = await client.execute({ id: '1', name: 'in_ask_name', arguments: {} });
    await mount.close();
    return r;
  } finally {
    client.close();
  }
}

test("a server's input request is answered by the host, for either era", async () => {
  const served = asker();
  const server = served.serve();
  try {
    for (const protocolVersion of [undefined, '2025-11-25']) {
      const asked = [];
      const input = async (tool, method, params) => {
        asked.push({ tool, method, params });
        await new Promise((r) => setTimeout(r, 5)); // a user answering
        return { action: 'accept', content: { name: 'Ada' } };
      };
      const before = relays.started;
      const r = await callOnce(server.url, { protocolVersion, input });
      assert.equal(relays.started, before + 1);
      assert.equal(r.outcome, 'ok', r.content);
      assert.equal(r.content, 'Hello, Ada!');
      assert.equal(asked.length, 1);
      // A 2026-07-28 request belongs to the call; an older one names none.
      assert.equal(asked[0].tool, protocolVersion ? null : 'in_ask_name');
      assert.equal(asked[0].method, 'elicitation/create');
      assert.equal(asked[0].params.message, 'What is your name?');
      assert.deepEqual(asked[0].params.requestedSchema.required, ['name']);
      await allEnded();
    }
  } finally {
    await server.stop();
    served.close();
  }
});

test('a host that gives no answer, throws or rejects fails the call, saying so', async () => {
  const served = asker();
  const server = served.serve();
  try {
    const hosts = {
      none: () => undefined,
      null: () => null,
      throws: () => { throw new Error('the user closed the window'); },
      rejects: async () => { throw new Error('no user'); },
      unserializable: () => () => 1, // JSON.stringify gives undefined
    };
    for (const [why, input] of Object.entries(hosts)) {
      const r = await callOnce(server.url, { input });
      assert.equal(r.outcome, 'tool_error', `${why}: ${r.content}`);
      assert.match(r.content, /the host gave no answer to elicitation\/create/, why);
    }
    // An older server's request refused: the call still ends as an error, no crash.
    const old = await callOnce(server.url, { protocolVersion: '2025-11-25', input: () => { throw new Error('x'); } });
    assert.equal(old.outcome, 'tool_error', old.content);
    await allEnded();
  } finally {
    await server.stop();
    served.close();
  }
});

test('the methods answered are declared to the server; bad ones are clear errors', async () => {
  const served = asker();
  const server = served.serve();
  const reg = new Registry();
  try {
    // Without elicitation declared the tool cannot ask: the host is not asked.
    const asked = [];
    const r = await callOnce(server.url, { input: (...a) => asked.push(a), inputMethods: ['roots/list', 'sampling/createMessage'] });
    assert.equal(r.outcome, 'tool_error');
    assert.deepEqual(asked, []);
    const started = relays.started;
    await assert.rejects(reg.mount({ url: server.url, inputMethods: ['roots/list'] }), /inputMethods needs input/);
    await assert.rejects(reg.mount({ url: server.url, input: () => null, inputMethods: [] }), /inputMethods is empty/);
    await assert.rejects(reg.mount({ url: server.url, input: () => null, inputMethods: ['ping'] }), /unknown method "ping"/);
    await assert.rejects(reg.mount({ url: server.url, input: () => null, inputMethods: 'roots/list' }), /array of method names/);
    await assert.rejects(reg.mount({ url: server.url, input: 'yes' }), /input must be a function/);
    assert.equal(relays.started, started, 'no relay for options refused in JS');
    // A mount capstan fails still lets go of the answerer: its relay ends.
    await assert.rejects(reg.mount({ url: 'http://127.0.0.1:1/mcp', input: () => null, connectTimeoutMs: 2000, maxReconnects: 0 }));
    assert.equal(relays.started, started + 1);
    await allEnded();
  } finally {
    reg.close();
    await server.stop();
    served.close();
  }
});
