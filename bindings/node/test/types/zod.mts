// Type-checked by test/types.test.cjs (tsc --noEmit): a tool declared with a
// zod 4 schema gets zod's output type as its arguments; the journal's API (custom stores too).
import { z } from 'zod';
import * as zm from 'zod/mini';
import { Registry, Journal, type ExecOptions } from 'capstan';

const reg = new Registry();
reg.tool(
  {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c'), days: z.number().int().optional() }),
    idempotent: true,
  },
  async ({ city, unit, days }) => {
    const c: string = city;
    const u: 'c' | 'f' = unit; // defaulted: never undefined in the output
    const d: number | undefined = days;
    // @ts-expect-error: city is a string
    const n: number = city;
    void n;
    return { c, u, d };
  },
);
reg.tool({ name: 'lengths', parameters: z.object({ word: z.string().transform((w) => w.length) }) }, ({ word }) => {
  const len: number = word; // the transform's output
  return len;
});
reg.tool({ name: 'mini', parameters: zm.object({ a: zm.string() }) }, ({ a }) => a.toUpperCase());
// @ts-expect-error: the handler's argument is the schema's output: b is not there
reg.tool({ name: 'wrong', parameters: z.object({ a: z.string() }) }, ({ b }: { b: number }) => b);
// Raw JSON Schema still takes an explicit type.
reg.tool<{ x: number }>({ name: 'raw', parameters: { type: 'object', properties: { x: { type: 'number' } } } }, ({ x }) => x + 1);

const journal: Journal = Journal.openJsonl('calls.jsonl');
Journal.openSqlite('calls.db', { fullSync: true }).close();
reg.setJournal(journal);
reg.setJournal(journal, { replay: true });
reg.setJournal(null);
// @ts-expect-error: a Journal, not a path
reg.setJournal('calls.jsonl');
const opts: ExecOptions = { runId: 'conversation-1' };
await reg.execute({ id: 'c1', name: 'get_weather', arguments: { city: 'Oslo' } }, opts);
await reg.runTurn('openai_chat', {}, { runId: 'conversation-1' });
reg.setEventHook((e) => (e.kind === 'replayed' ? e.id : null));
// @ts-expect-error: a run id is a string
await reg.execute([], { runId: 7 });
journal.close();

// The host's own store: synchronous methods over its database.
const rows = new Map<string, string>();
const custom: Journal = Journal.custom(
  {
    record(recordJson) {
      const r = JSON.parse(recordJson) as { run: string; call: string };
      rows.set(`${r.run}/${r.call}`, recordJson);
    },
    lookup: (runId, callId) => rows.get(`${runId}/${callId}`),
  },
  { onError: (e, f) => rows.set(`failed/${f.op}/${f.callId}/${f.kind ?? ''}`, String(e)), onRelease: () => rows.clear() },
);
reg.setJournal(custom);
custom.close();
// @ts-expect-error: lookup is synchronous: a Promise is not a record
Journal.custom({ record() {}, lookup: async () => null });
// @ts-expect-error: a store needs lookup
Journal.custom({ record() {} });
reg.close();
