'use strict';
// An MCP server on stdio with JS tools, for test/mcp.test.cjs (started by a mount).
const { Registry } = require('..');

const registry = new Registry();
registry.tool(
  { name: 'upper', description: 'Upper-cases text', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  async ({ text }) => text.toUpperCase(),
);
registry.tool('fail', () => {
  throw new Error('it failed on purpose');
});
registry
  .serveStdio({ name: 'node-test-server' })
  .then(() => registry.close())
  .catch((e) => {
    process.stderr.write(`serveStdio: ${e.message}\n`);
    process.exit(1);
  });
