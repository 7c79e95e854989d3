'use strict';
// A process of test/journal.test.cjs: runs one batch with a journal under a
// run id and prints { results, replayed, stats } as JSON. In mode "crash"
// the `crash` tool kills this process (SIGKILL) while `fetch` and `charge`
// are running: their `started` records have no `completed`.
//   node journal_child.cjs JOURNAL RUN_ID MODE RAN_LOG CALLS_JSON
const fs = require('node:fs');
const { Registry, Journal } = require('..');

const [journalPath, runId, mode, ranLog, callsJson] = process.argv.slice(2);
const ran = (tool) => fs.appendFileSync(ranLog, `${tool}\n`);
const hang = () => new Promise(() => {});

const reg = new Registry();
const journal = Journal.openJsonl(journalPath);
reg.setJournal(journal, { replay: mode === 'replay' });
journal.close(); // the registry keeps it
const amount = { amount: { type: 'integer' } };
const payArgs = { type: 'object', properties: mode === 'changed' ? { ...amount, currency: { type: 'string' } } : amount };
reg.tool({ name: 'pay', parameters: payArgs }, ({ amount: n }) => {
  ran('pay');
  return `paid ${n}`;
});
reg.tool({ name: 'fetch', idempotent: true }, () => {
  ran('fetch');
  return mode === 'crash' ? hang() : 'fetched';
});
reg.tool({ name: 'charge' }, () => {
  ran('charge');
  return mode === 'crash' ? hang() : 'charged';
});
reg.tool({ name: 'crash' }, () => {
  ran('crash');
  if (mode === 'crash') process.kill(process.pid, 'SIGKILL');
  return 'no crash';
});
const replayed = [];
reg.setEventHook((e) => {
  if (e.kind === 'replayed') replayed.push(e.id);
});
reg.execute(JSON.parse(callsJson), { runId }).then(async (results) => {
  await new Promise((r) => setImmediate(r)); // the hook's microtasks
  process.stdout.write(JSON.stringify({ results, replayed, stats: reg.stats() }));
  reg.close();
});
