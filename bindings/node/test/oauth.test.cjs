'use strict';
// Mounting an MCP server that asks for OAuth 2.1 (tests/mcp/oauth_server.py:
// the MCP server and its authorization server in one stdlib-only Python
// process): the host's async authorize follows the authorization URL as a
// browser would, the tokens go to the host's store, a second mount with them
// needs no new authorization, and a refused authorization fails the mount.
// Without a user: a client key (private_key_jwt) and the host's workload
// assertion (the JWT-bearer grant) get tokens, and the options capstan
// refuses name the problem.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Registry, CapstanError } = require('..');

// The test-only key of oauth_server.py's client "keyed-1" (tests/fixtures/README.md).
const CLIENT_KEY = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures', 'oauth', 'client_key.pem'), 'utf8');

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

// Mounts with `oauth`, calls whoami (the access token) and closes.
async function mountWhoami(reg, url, oauth) {
  const mount = await reg.mount(mountOptions(url, oauth));
  try {
    assert.deepEqual(Object.keys(mount.info().tools), ['o_whoami']);
    const [r] = await reg.execute({ id: '1', name: 'o_whoami' });
    assert.equal(r.outcome, 'ok', r.content);
    assert.match(r.content, /^at-/);
  } finally {
    await mount.close();
  }
}

test('a client key gets tokens with a signed assertion (private_key_jwt)', async () => {
  const server = await oauthServer();
  const reg = new Registry();
  try {
    await mountWhoami(reg, server.url, { clientId: 'keyed-1', clientKey: CLIENT_KEY });
    const stats = await server.stats();
    assert.equal(stats.key_grants, 1);
    assert.equal(stats.client_credentials_grants, 0, 'not with a secret');
    assert.equal(stats.authorizations + stats.registrations, 0);
    assert.deepEqual(stats.resources, [server.url]);
  } finally {
    reg.close();
    await server.quit();
  }
});

test('a workload assertion gets tokens with the JWT-bearer grant; a refused grant or assertion fails the mount', async () => {
  const server = await oauthServer();
  const issuer = server.url.replace(/\/mcp$/, '');
  const reg = new Registry();
  try {
    const asked = [];
    const workload = async (audience) => {
      asked.push(audience);
      return `workload:${audience}`; // what the test server takes from its workloads
    };
    await mountWhoami(reg, server.url, { assertion: workload });
    assert.deepEqual(asked, [issuer], "the audience is the authorization server's issuer");
    assert.equal((await server.stats()).jwt_bearer_grants, 1);

    await assert.rejects(
      reg.mount(mountOptions(server.url, { assertion: workload, scopes: ['rejected'] })),
      (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_MCP_CONNECT' && /invalid_scope/.test(e.message),
    );
    assert.equal(asked.length, 2, 'asked once for the refused mount, not again');
    for (const refusing of [() => null, async () => { throw new Error('no workload identity here'); }, () => 42]) {
      await assert.rejects(
        reg.mount(mountOptions(server.url, { assertion: refusing })),
        (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_MCP_CONNECT',
      );
    }
    assert.equal((await reg.execute({ id: 'x', name: 'o_whoami' }))[0].outcome, 'unknown_tool', 'nothing was mounted');
    const stats = await server.stats();
    assert.equal(stats.jwt_bearer_grants, 1);
    for (const other of ['authorizations', 'registrations', 'client_credentials_grants', 'key_grants']) {
      assert.equal(stats[other], 0, `${other}: no other grant was tried`);
    }
  } finally {
    reg.close();
    await server.quit();
  }
});

test('options without a user that capstan refuses name the problem', async () => {
  const url = 'http://127.0.0.1:9/mcp'; // never reached: the options fail first
  const idp = { issuer: 'https://idp.example.com', tokenEndpoint: 'https://idp.example.com/token', clientId: 'host-1' };
  const reg = new Registry();
  try {
    for (const [oauth, why] of [
      [{ identityProvider: idp }, 'opts.oauth_idp_* needs opts.oauth_assertion'],
      [{ clientKey: CLIENT_KEY }, 'opts.oauth_client_key needs opts.oauth_client_id'],
      [{ clientId: 'keyed-1', clientKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }, 'opts.oauth_client_key: '],
      [{ clientId: 'keyed-1', clientKey: 'not a key' }, 'PKCS#8 EC P-256'],
      [{ assertion: () => null, identityProvider: { issuer: idp.issuer, clientId: 'h' } }, 'go together'],
    ]) {
      await assert.rejects(
        reg.mount({ url, oauth }),
        (e) => e instanceof CapstanError && e.status === 'CAPSTAN_ERR_INVALID_ARGUMENT' && e.message.includes(why),
        why,
      );
    }
    await assert.rejects(reg.mount({ url, oauth: { assertion: 'workload:x' } }), TypeError);
    await assert.rejects(reg.mount({ url, oauth: { assertion: () => null, identityProvider: 'https://idp.example.com' } }), TypeError);
    await assert.rejects(reg.mount({ url, oauth: { clientId: 'keyed-1', clientKey: Buffer.from(CLIENT_KEY) } }), TypeError);
  } finally {
    reg.close();
  }
});
