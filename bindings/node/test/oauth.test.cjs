'use strict';
// Mounting an MCP server that asks for OAuth 2.1 (tests/mcp/oauth_server.py:
// the MCP server and its authorization server in one stdlib-only Python
// process): the host's async authorize follows the authorization URL as a
// browser would, the tokens go to the host's store, a second mount with them
// needs no new authorization, and a refused authorization fails the mount.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, CapstanError } = require('..');

const { oauthServer, browser, urlsSeen } = require('./oauth_helpers.cjs');

function mountOptions(url, oauth) {
  return { url, prefix: 'o_', protocolVersion: '2025-11-25', connectTimeoutMs: 60000, oauth };
}

test('an OAuth server mounts through an async authorize; saved tokens let the next mount in without one', async () => {
  const server = await oauthServer();
  const reg = new Registry();
  try {
    let stored = null;
    const saves = [];
    const tokens = {
      load: () => stored,
      save: (json) => {
        saves.push(json);
        stored = json;
      },
    };
    const oauth = { authorize: browser, redirectUri: 'http://127.0.0.1:9/callback', tokens };
    const mount = await reg.mount(mountOptions(server.url, oauth));
    assert.deepEqual(Object.keys(mount.info().tools), ['o_whoami']);
    const [r] = await reg.execute({ id: '1', name: 'o_whoami' });
    assert.equal(r.outcome, 'ok', r.content);
    assert.match(r.content, /at-/);
    let stats = await server.stats();
    assert.equal(stats.registrations, 1);
    assert.equal(stats.authorizations, 1);
    assert.equal(stats.code_grants, 1);
    assert.equal(urlsSeen.length, 1);
    const authUrl = new URL(urlsSeen[0]);
    assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authUrl.searchParams.get('redirect_uri'), 'http://127.0.0.1:9/callback');
    assert.ok(stored !== null && JSON.parse(stored) && stored.includes('access_token'), `tokens saved: ${stored}`);
    await mount.close();

    // Another mount with the saved tokens: no registration, no authorization.
    const again = await reg.mount(mountOptions(server.url, { authorize: () => Promise.reject(new Error('not needed')), redirectUri: 'http://127.0.0.1:9/callback', tokens }));
    const [r2] = await reg.execute({ id: '2', name: 'o_whoami' });
    assert.equal(r2.outcome, 'ok', r2.content);
    stats = await server.stats();
    assert.equal(stats.registrations, 1);
    assert.equal(stats.authorizations, 1);
    assert.equal(urlsSeen.length, 1);
    await again.close();
  } finally {
    reg.close();
    await server.quit();
  }
});

test('an authorize that fails or refuses fails the mount with MCP_CONNECT saying so', async () => {
  const server = await oauthServer();
  const reg = new Registry();
  try {
    for (const authorize of [
      async () => {
        throw new Error('the user closed the browser');
      },
      () => null,
    ]) {
      await assert.rejects(
        reg.mount(mountOptions(server.url, { authorize, redirectUri: 'http://127.0.0.1:9/callback' })),
        (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_MCP_CONNECT' && /OAuth authorization was refused/.test(e.message),
      );
    }
    assert.equal((await reg.execute({ id: "x", name: "o_whoami" }))[0].outcome, "unknown_tool", "nothing was mounted");
    // Options capstan refuses: authorize without redirectUri; not functions.
    await assert.rejects(reg.mount(mountOptions(server.url, { authorize: browser })), (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT');
    await assert.rejects(reg.mount(mountOptions(server.url, { authorize: 'yes' })), TypeError);
    await assert.rejects(reg.mount(mountOptions(server.url, { tokens: { load: () => null } })), TypeError);
  } finally {
    reg.close();
    await server.quit();
  }
});
