'use strict';
// Tools declared with a zod 4 schema (issue #46 item 5): registered as zod's
// own JSON Schema (the input side), validated by capstan, then parsed by zod.
const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const zm = require('zod/mini');
const { Registry } = require('..');

const weather = z.object({
  city: z.string().describe('The city'),
  unit: z.enum(['c', 'f']).default('c'),
  days: z.number().int().min(1).max(7).optional(),
});

test('a zod schema is registered as z.toJSONSchema gives it (input side, no $schema), beside raw JSON Schema', () => {
  const reg = new Registry();
  reg.tool({ name: 'weather', description: 'Weather', parameters: weather }, ({ city }) => city);
  reg.tool({ name: 'raw', parameters: { type: 'object', properties: { a: { type: 'string' } } } }, ({ a }) => a);
  reg.tool({ name: 'mini', parameters: zm.object({ a: zm.string() }) }, ({ a }) => a);
  const byName = Object.fromEntries(reg.tools('describe').map((t) => [t.name, t]));
  const expected = z.toJSONSchema(weather, { io: 'input' });
  delete expected.$schema;
  assert.deepEqual(byName.weather.parameters, expected);
  assert.deepEqual(byName.weather.parameters.required, ['city']); // unit has a default: optional for the model
  assert.deepEqual(byName.raw.parameters, { type: 'object', properties: { a: { type: 'string' } } });
  assert.deepEqual(byName.mini.parameters.required, ['a']);
  const openai = reg.tools('openai').find((t) => t.function.name === 'weather');
  assert.equal(openai.function.parameters.properties.city.description, 'The city');
  reg.close();
});

test('arguments failing the schema are invalid_arguments in capstan\'s words; the tool gets zod\'s output', async () => {
  const reg = new Registry();
  const seen = [];
  reg.tool({ name: 'weather', parameters: weather }, (args) => {
    seen.push(args);
    return 'ok';
  });
  reg.tool({ name: 'len', parameters: z.object({ word: z.string().transform((w) => w.length) }) }, ({ word }) => word * 2);
  const r = await reg.execute([
    { id: '1', name: 'weather', arguments: { city: 'Oslo' } },
    { id: '2', name: 'weather', arguments: { city: 'Oslo', days: 9 } },
    { id: '3', name: 'weather', arguments: { unit: 'k' } },
    { id: '4', name: 'len', arguments: { word: 'abcd' } },
  ]);
  assert.deepEqual(r.map((x) => x.outcome), ['ok', 'invalid_arguments', 'invalid_arguments', 'ok']);
  assert.match(r[1].content, /days/);
  assert.match(r[1].content, /7/);
  assert.match(r[2].content, /city/);
  assert.match(r[2].content, /unit/);
  assert.equal(r[3].content, '8');
  assert.deepEqual(seen, [{ city: 'Oslo', unit: 'c' }]);
  reg.close();
});

test('what JSON Schema cannot say (a refinement, an async check) is zod\'s: a failure is a tool error with zod\'s message, the tool not run', async () => {
  const reg = new Registry();
  let ran = 0;
  const mail = z.object({ to: z.string().refine((s) => s.includes('@'), 'not an e-mail address') });
  const taken = z.object({ user: z.string().refine(async (u) => u !== 'root', 'that name is taken') });
  for (const [name, schema] of [['mail', mail], ['signup', taken]]) {
    reg.tool({ name, parameters: schema }, () => {
      ran++;
      return 'sent';
    });
  }
  const r = await reg.execute([
    { id: '1', name: 'mail', arguments: { to: 'nobody' } },
    { id: '2', name: 'mail', arguments: { to: 'a@b.c' } },
    { id: '3', name: 'signup', arguments: { user: 'root' } },
    { id: '4', name: 'signup', arguments: { user: 'ada' } },
  ]);
  assert.deepEqual(r.map((x) => [x.outcome, x.content.split('\n')[0]]), [
    ['tool_error', 'Invalid arguments:'],
    ['ok', 'sent'],
    ['tool_error', 'Invalid arguments:'],
    ['ok', 'sent'],
  ]);
  assert.match(r[0].content, /not an e-mail address[\s\S]*to/);
  assert.match(r[2].content, /that name is taken/);
  assert.equal(ran, 2);
  reg.close();
});

test('a zod schema with no JSON Schema form is refused at registration, naming the tool', () => {
  const reg = new Registry();
  assert.throws(() => reg.tool({ name: 'when', parameters: z.object({ at: z.date() }) }, () => 1), (e) => e instanceof TypeError && /"when"/.test(e.message) && /Date/.test(e.message));
  assert.deepEqual(reg.tools('describe'), []);
  reg.close();
});
