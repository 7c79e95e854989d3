'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Registry, CapstanError, version } = require('..');

function calculator() {
  const reg = new Registry();
  reg.tool(
    { name: 'add', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } },
    async ({ a, b }) => {
      await new Promise((r) => setTimeout(r, 2));
      return a + b;
    },
  );
  reg.tool('boom', () => {
    throw new Error('exploded');
  });
  return reg;
}

test('serve over HTTP, mount the URL in another registry: calls reach the JS tools', async () => {
  const served = calculator();
  const server = served.serve({ name: 'calc' });
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const client = new Registry();
  const mount = await client.mount({ url: server.url, prefix: 'calc_' });
  const info = mount.info();
  assert.equal(info.connected, true);
  assert.deepEqual(info.tools, { calc_add: 'add', calc_boom: 'boom' });
  const calls = Array.from({ length: 10 }, (_, i) => ({ id: `${i}`, name: 'calc_add', arguments: { a: i, b: 1 } }));
  calls.push({ id: 'x', name: 'calc_add', arguments: { a: 'one' } }, { id: 'b', name: 'calc_boom' });
  const r = await client.execute(calls, { limit: 20 });
  assert.deepEqual(
    r.slice(0, 10).map((x) => x.content),
    calls.slice(0, 10).map((_, i) => String(i + 1)),
  );
  assert.equal(r[10].outcome, 'invalid_arguments'); // checked locally against the remote schema
  assert.equal(r[11].outcome, 'tool_error');
  assert.match(r[11].content, /exploded/);
  await mount.close();
  assert.equal((await client.execute({ id: '1', name: 'calc_add', arguments: { a: 1, b: 1 } }))[0].outcome, 'unknown_tool');
  await server.stop();
  client.close();
  served.close();
});

test('a bearer token is required once set', async () => {
  const served = calculator();
  const server = served.serve({ bearerToken: 's3cret' });
  const client = new Registry();
  await assert.rejects(client.mount({ url: server.url, connectTimeoutMs: 3000 }), (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_MCP_CONNECT');
  const mount = await client.mount({ url: server.url, headers: { Authorization: 'Bearer s3cret' } });
  assert.equal((await client.execute({ id: '1', name: 'add', arguments: { a: 2, b: 2 } }))[0].content, '4');
  await mount.close();
  await server.stop();
  client.close();
  served.close();
});

test('mount a command on stdio: a Node process serving its JS tools with serveStdio', async () => {
  const client = new Registry();
  const mount = await client.mount({
    command: [process.execPath, path.join(__dirname, 'mcp_stdio_server.cjs')],
    env: { CAPSTAN_LIB: require('..').libraryPath },
    prefix: 'child_',
  });
  assert.deepEqual(Object.keys(mount.info().tools).sort(), ['child_fail', 'child_upper']);
  const r = await client.execute([
    { id: '1', name: 'child_upper', arguments: { text: 'grüße' } },
    { id: '2', name: 'child_fail' },
  ]);
  assert.deepEqual(
    r.map((x) => [x.outcome, x.content]),
    [
      ['ok', 'GRÜSSE'],
      ['tool_error', r[1].content],
    ],
  );
  assert.match(r[1].content, /it failed on purpose/);
  await mount.close();
  client.close();
});

test('a mount that cannot start rejects with MCP_CONNECT naming why', async () => {
  const client = new Registry();
  await assert.rejects(
    client.mount({ command: ['/nonexistent/capstan-mcp-server'], connectTimeoutMs: 2000 }),
    (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_MCP_CONNECT' && /nonexistent\/capstan-mcp-server/.test(e.message),
  );
  await assert.rejects(client.mount({}), TypeError);
  await assert.rejects(client.mount({ command: ['x'], url: 'http://127.0.0.1:1/mcp' }), TypeError);
  client.close();
});

test('close() stops live servers and mounts', async () => {
  const served = calculator();
  const server = served.serve();
  const client = new Registry();
  await client.mount({ url: server.url });
  client.close();
  served.close();
  await server.stop();
  assert.match(version, /^0\.4\./);
});
