// The ESM entry point and the example agent turn.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import capstan, { Registry, ProviderError, CapstanError, parseCalls, version } from 'capstan';

const require = createRequire(import.meta.url);

test('ESM and CommonJS entry points are the same module', () => {
  const cjs = require('capstan');
  assert.equal(Registry, cjs.Registry);
  assert.equal(capstan.Registry, cjs.Registry);
  assert.equal(ProviderError, cjs.ProviderError);
  assert.ok(new ProviderError({ status: 'CAPSTAN_ERR_PROVIDER_ERROR', status_code: 18, message: 'm' }) instanceof CapstanError);
  assert.equal(typeof parseCalls, 'function');
  assert.equal(capstan.checkHistory, cjs.checkHistory);
  assert.equal(capstan.Image, cjs.Image);
  assert.match(version, /^0\.4\./);
});

test('the example agent turn runs and prints the next request', () => {
  const example = fileURLToPath(new URL('../examples/agent_turn.mjs', import.meta.url));
  const fixture = fileURLToPath(new URL('../../../tests/fixtures/providers/anthropic_parallel.json', import.meta.url));
  const out = spawnSync(process.execPath, [example, fixture], { encoding: 'utf8', timeout: 30000 });
  assert.equal(out.status, 0, out.stderr);
  const lines = out.stdout.split('\n');
  assert.equal(lines[0], 'get_weather (toolu_01A): ok {"location":"São Paulo, BR","temperature":24,"unit":"celsius"}');
  assert.equal(lines[1], 'get_time (toolu_01B): ok 2026-12-01T20:00:00Z');
  const request = JSON.parse(lines.slice(2).join('\n'));
  assert.deepEqual(
    request.tools.map((t) => t.name),
    ['get_time', 'get_weather'],
  );
  const last = request.messages.at(-1);
  assert.equal(last.role, 'user');
  assert.deepEqual(
    last.content.map((b) => b.tool_use_id),
    ['toolu_01A', 'toolu_01B'],
  );
});
