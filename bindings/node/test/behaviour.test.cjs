'use strict';
// This binding against tests/fixtures/binding_behaviour.json, the table every
// binding's suite checks (issue #49.6), and duplicate registration (#49.5).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Registry, CapstanError } = require('..');

const TABLE = JSON.parse(
  fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures', 'binding_behaviour.json'), 'utf8'),
);
const mistake = (name) => TABLE.errors.find((row) => row.mistake === name);

function registry() {
  const reg = new Registry();
  reg.tool({ name: 'f' }, () => 'old');
  return reg;
}

test('format names: the table\'s accepted ones export, the others throw its status and words', () => {
  const reg = registry();
  const wanted = mistake('unknown_format');
  for (const row of TABLE.formats) {
    if (row.accepted) {
      assert.ok(reg.tools(row.name) !== undefined, row.name);
    } else {
      assert.throws(
        () => reg.tools(row.name),
        (e) => e instanceof TypeError && e.status === wanted.status && e.message.includes(wanted.fragment),
        JSON.stringify(row.name),
      );
    }
  }
  reg.close();
});

test('a call without an id gets the table\'s id', async () => {
  const reg = registry();
  for (const row of TABLE.ids) {
    const results = await reg.execute(Array.from({ length: row.index + 1 }, () => ({ name: 'f' })));
    assert.equal(results[row.index].id, row.id);
  }
  reg.close();
});

test('a second registration is refused naming the tool; { replace: true } runs the new handler', async () => {
  const reg = registry();
  const row = mistake('duplicate_registration');
  assert.throws(
    () => reg.tool({ name: 'f' }, () => 'new'),
    (e) => e instanceof CapstanError && e.status === row.status && e.message.includes(row.fragment) && e.message.includes('"f"'),
  );
  assert.equal((await reg.execute({ name: 'f' }))[0].content, 'old');
  reg.tool({ name: 'f', replace: true }, () => 'new');
  assert.equal((await reg.execute({ name: 'f' }))[0].content, 'new');
  reg.close();
});

test('call mistakes end with the table\'s outcome and words', async () => {
  const reg = registry();
  for (const name of ['unknown_tool', 'arguments_not_json', 'arguments_not_object']) {
    const row = mistake(name);
    const call = name === 'unknown_tool' ? { id: 'a', name: 'nope' } : { id: 'a', name: 'f', arguments: row.arguments };
    const [result] = await reg.execute(call);
    assert.equal(result.outcome, row.outcome, name);
    assert.ok(result.content.includes(row.fragment), `${name}: ${result.content}`);
    if (row.names_tool) assert.ok(result.content.includes('nope'), result.content);
  }
  reg.close();
});

test('a provider-shaped call given to execute points at runTurn', async () => {
  const reg = registry();
  const row = mistake('provider_shaped_call');
  await assert.rejects(async () => reg.execute([row.call]), (e) => e.status === row.status && e.message.includes(row.fragment));
  reg.close();
});
