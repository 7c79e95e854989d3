// What `require('capstan')` exports is what index.d.ts declares and
// index.mjs re-exports: the module is cut into files by area (lib/), and a
// name dropped or left undefined by that cut fails here.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const capstan = require('capstan');

const root = path.join(__dirname, '..');
const read = (name) => fs.readFileSync(path.join(root, name), 'utf8');

test('require(capstan) exports exactly the values index.d.ts declares, none undefined', () => {
  const declared = [...read('index.d.ts').matchAll(/^export (?:declare )?(?:const|function|class) (\w+)/gm)].map((m) => m[1]);
  assert.ok(declared.length > 10, 'index.d.ts declares the API');
  assert.deepEqual(Object.keys(capstan).sort(), [...new Set(declared)].sort());
  for (const name of declared) assert.notEqual(capstan[name], undefined, name);
});

test('index.mjs re-exports every name of the CommonJS module', () => {
  const block = read('index.mjs').match(/export const \{([^}]*)\} = capstan;/);
  assert.ok(block, 'index.mjs has its export list');
  const names = block[1].split(',').map((s) => s.trim()).filter(Boolean);
  assert.deepEqual(names.sort(), Object.keys(capstan).sort());
});

test('package.json ships every file lib/ requires', () => {
  const pkg = JSON.parse(read('package.json'));
  const shipped = (file) => pkg.files.some((f) => (f.endsWith('/') ? file.startsWith(f) : file === f));
  assert.ok(shipped(pkg.main.replace(/^\.\//, '')), pkg.main);
  for (const file of fs.readdirSync(path.join(root, 'lib'))) {
    for (const m of read(path.join('lib', file)).matchAll(/require\('\.\/([^']+)'\)/g)) {
      assert.ok(fs.existsSync(path.join(root, 'lib', m[1])), `lib/${file} requires a missing ./${m[1]}`);
      assert.ok(shipped(`lib/${m[1]}`), `lib/${m[1]} is not in package.json's files`);
    }
  }
});
