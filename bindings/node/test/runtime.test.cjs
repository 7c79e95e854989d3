'use strict';
// capstan's threads, process-wide (node --test runs each file in its own process).
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry, runtime } = require('..');

test("runtime.shutdown joins capstan's threads and capstan starts them again when needed", async () => {
  runtime.configure({ threads: 1, keepAliveMs: 50 });
  const reg = new Registry();
  // approval runs on a pool thread (the approver is called from there)
  reg.tool({ name: 'gated', requiresApproval: true }, () => 'ran');
  reg.setApprover(async () => true);
  assert.equal((await reg.execute({ id: '1', name: 'gated' }))[0].content, 'ran');
  assert.equal(await runtime.shutdown(30000), true);
  assert.equal((await reg.execute({ id: '2', name: 'gated' }))[0].content, 'ran');
  // a call with a timeout still running arms capstan's timer: shutdown cannot finish in 50 ms
  let release;
  reg.tool({ name: 'slow', timeoutMs: 20000 }, () => new Promise((r) => (release = r)));
  const pending = reg.execute({ id: '3', name: 'slow' });
  assert.equal(await runtime.shutdown(50), false);
  release('done');
  assert.equal((await pending)[0].content, 'done');
  assert.equal(await runtime.shutdown(30000), true);
  reg.close();
  runtime.configure();
  assert.throws(() => runtime.configure({ threads: -1 }), RangeError);
  assert.throws(() => runtime.configure({ keepAliveMs: -5 }), RangeError);
});
