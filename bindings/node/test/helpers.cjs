'use strict';
// Shared by the tests: the provider fixtures of the repository
// (tests/fixtures/providers, written for capstan after each provider's reference).
const fs = require('node:fs');
const path = require('node:path');

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures', 'providers');

function fixture(name) {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));
}

// A promise plus its resolve, for tools that wait on each other.
function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

module.exports = { fixture, deferred };
