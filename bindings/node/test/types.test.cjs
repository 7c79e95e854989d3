'use strict';
// index.d.ts describes the package as TypeScript users import it (ESM and
// CommonJS): test/types/*.ts use the API and must type-check, and their
// @ts-expect-error lines (misuses) must be errors.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

test('index.d.ts type-checks with tsc (strict)', () => {
  const tsc = require.resolve('typescript/bin/tsc');
  const out = spawnSync(process.execPath, [tsc, '-p', path.join(__dirname, 'types')], { encoding: 'utf8', timeout: 120000 });
  assert.equal(out.status, 0, out.stdout + out.stderr);
});
