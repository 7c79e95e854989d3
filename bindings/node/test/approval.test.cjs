'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { Registry } = require('..');
const { deferred } = require('./helpers.cjs');

function bankRegistry() {
  const reg = new Registry();
  const runs = [];
  reg.tool(
    { name: 'transfer', requiresApproval: true, parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] } },
    async (args) => {
      runs.push(args.amount);
      return `sent ${args.amount}`;
    },
  );
  reg.tool('balance', () => '100');
  return { reg, runs };
}

test('without an approver, approval-gated calls end denied; approvedIds lets them run', async () => {
  const { reg, runs } = bankRegistry();
  const calls = [
    { id: 't1', name: 'transfer', arguments: { amount: 5 } },
    { id: 't2', name: 'transfer', arguments: { amount: 7 } },
    { id: 'b', name: 'balance' },
  ];
  assert.deepEqual(
    reg.needsApproval(calls).map((x) => [x.index, x.id, x.name]),
    [
      [0, 't1', 'transfer'],
      [1, 't2', 'transfer'],
    ],
  );
  assert.deepEqual(reg.needsApproval(calls, { approvedIds: ['t2'] }).map((x) => x.id), ['t1']);
  const r = await reg.execute(calls, { approvedIds: ['t2'] });
  assert.deepEqual(
    r.map((x) => x.outcome),
    ['denied', 'ok', 'ok'],
  );
  assert.deepEqual(runs, [7]);
  reg.close();
});

test('an async approver decides on the event loop; its reason reaches the model', async () => {
  const { reg, runs } = bankRegistry();
  const asked = [];
  reg.setApprover(async (req) => {
    asked.push(req);
    await new Promise((r) => setTimeout(r, 5));
    return req.arguments.amount < 10 ? true : { approve: false, reason: 'Over the limit: ask the user.' };
  });
  const r = await reg.execute([
    { id: 't1', name: 'transfer', arguments: { amount: 5 } },
    { id: 't2', name: 'transfer', arguments: { amount: 50 } },
  ]);
  assert.deepEqual(
    r.map((x) => [x.outcome, x.content]),
    [
      ['ok', 'sent 5'],
      ['denied', r[1].content],
    ],
  );
  assert.match(r[1].content, /Over the limit: ask the user\./);
  assert.deepEqual(runs, [5]);
  assert.deepEqual(
    asked.map((a) => [a.tool, a.id, a.arguments]).sort(),
    [
      ['transfer', 't1', { amount: 5 }],
      ['transfer', 't2', { amount: 50 }],
    ],
  );
  reg.close();
});

test('an approver that throws denies; setApprover(null) removes it', async () => {
  const { reg, runs } = bankRegistry();
  reg.setApprover(() => {
    throw new Error('no UI');
  });
  const [r] = await reg.execute({ id: 't', name: 'transfer', arguments: { amount: 1 } });
  assert.equal(r.outcome, 'denied');
  assert.match(r.content, /no UI/);
  reg.setApprover(null);
  const [r2] = await reg.execute({ id: 't', name: 'transfer', arguments: { amount: 1 } });
  assert.equal(r2.outcome, 'denied');
  assert.deepEqual(runs, []);
  reg.close();
});

test('close() while the approver has not decided: the call ends, close does not hang', async () => {
  const { reg } = bankRegistry();
  const asked = deferred();
  reg.setApprover(() => {
    asked.resolve();
    return new Promise(() => {});
  });
  const p = reg.execute({ id: 't', name: 'transfer', arguments: { amount: 1 } });
  await asked.promise;
  reg.close();
  const [r] = await p;
  assert.equal(r.outcome, 'cancelled');
});
