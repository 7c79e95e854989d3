'use strict';
// The worker that carries an OAuth mount's callbacks (lib/oauth_relay.cjs)
// ends once capstan lets go of them (oauth_destroy): after the mount is
// closed (one authorized by a user, one by a workload assertion), after a
// refused authorization, and after options capstan refused.
// Its own file: worker_threads.Worker is watched before the binding loads.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const threads = require('node:worker_threads');

const relays = { started: 0, ended: 0 };
const Worker = threads.Worker;
threads.Worker = class extends Worker {
  constructor(file, options) {
    super(file, options);
    if (path.basename(String(file)) === 'oauth_relay.cjs') {
      relays.started++;
      this.once('exit', () => relays.ended++);
    }
  }
};
const { Registry } = require('..');
const { oauthServer, browser } = require('./oauth_helpers.cjs');

async function allEnded(count) {
  for (let i = 0; i < 200 && relays.ended < count; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(relays, { started: count, ended: count });
}

test('the relay of an OAuth mount ends once capstan lets go of its callbacks', async () => {
  const server = await oauthServer();
  const reg = new Registry();
  try {
    const oauth = { authorize: browser, redirectUri: 'http://127.0.0.1:9/callback' };
    const mount = await reg.mount({ url: server.url, protocolVersion: '2025-11-25', connectTimeoutMs: 60000, oauth });
    assert.equal(relays.ended, 0, 'the relay lives as long as the mount');
    await mount.close();
    await allEnded(1);
    await assert.rejects(reg.mount({ url: server.url, protocolVersion: '2025-11-25', oauth: { ...oauth, authorize: () => null } }));
    await allEnded(2);
    await assert.rejects(reg.mount({ url: server.url, oauth: { authorize: browser } })); // no redirectUri
    await allEnded(3);
    const workload = await reg.mount({ url: server.url, protocolVersion: '2025-11-25', connectTimeoutMs: 60000, oauth: { assertion: (aud) => `workload:${aud}` } });
    await workload.close();
    await allEnded(4);
  } finally {
    reg.close();
    await server.quit();
  }
});
