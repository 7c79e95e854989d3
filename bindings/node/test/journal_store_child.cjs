'use strict';
// A process of test/journal_store.test.cjs, where a hang can be caught.
//   node journal_store_child.cjs close-while-waiting
// A lone call with parallel: false is started by a pool worker, which calls
// the custom store and waits there for the JS thread. Meanwhile the JS
// thread is blocked in Registry.close (a synchronous native call): if close
// waited for that worker, neither would ever go on. Prints the call's
// { outcome, content } and how often the store was released.
const { Registry, Journal } = require('..');

const [mode] = process.argv.slice(2);
if (mode !== 'close-while-waiting') throw new Error(`unknown mode ${mode}`);

const rows = new Map();
const store = {
  record(json) {
    const r = JSON.parse(json);
    if (r.kind !== 'tools') rows.set(`${r.run}\n${r.call}`, json);
  },
  lookup(runId, callId) {
    return rows.get(`${runId}\n${callId}`) ?? null;
  },
};
let released = 0;
const reg = new Registry();
reg.tool({ name: 'count' }, () => 'counted');
const journal = Journal.custom(store, { onRelease: () => released++ });
reg.setJournal(journal);
journal.close();
const pending = reg.execute({ id: 'c1', name: 'count' }, { runId: 'run-1', parallel: false });
// Hold the JS thread a moment so the worker is most likely already waiting
// in the store (the outcome is the same either way; only a close that waits
// for it could hang, and would, most runs).
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
reg.close();
pending.then(([r]) => {
  setImmediate(() => process.stdout.write(JSON.stringify({ outcome: r.outcome, content: r.content, released })));
});
