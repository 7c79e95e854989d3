// Type-checked by test/types.test.cjs (tsc --noEmit): the CommonJS view of index.d.ts.
import capstan = require('capstan');

const reg = new capstan.Registry();
reg.tool({ name: 't', timeoutMs: 100, serial: true }, () => 1);
const p: Promise<capstan.ToolResult[]> = reg.execute({ id: '1', name: 't' });
void p;
// @ts-expect-error: limit is a number
reg.execute([], { limit: 'many' });
reg.close();
