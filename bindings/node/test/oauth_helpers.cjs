'use strict';
// Shared by the OAuth tests: tests/mcp/oauth_server.py (the MCP server and its
// authorization server in one stdlib-only Python process) and a browser.
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');

const SERVER = path.resolve(__dirname, '..', '..', '..', 'tests', 'mcp', 'oauth_server.py');

async function oauthServer() {
  // Standard library only: $CAPSTAN_TEST_PYTHON when it exists, else python3.
  const env = process.env.CAPSTAN_TEST_PYTHON;
  const python = env && fs.existsSync(env) ? env : 'python3';
  const child = spawn(python, [SERVER, '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const [port] = await Promise.race([
    new Promise((resolve) => lines.once('line', (l) => resolve([l.trim()]))),
    new Promise((_, reject) => child.once('error', reject)),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`oauth_server.py exited (${code})`)))),
  ]);
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/mcp`,
    stats: async () => (await fetch(`${base}/stats`)).json(),
    quit: async () => {
      await fetch(`${base}/quit`).catch(() => {});
      child.kill();
    },
  };
}

// The user's browser: follows the authorization URL (the server redirects at
// once) and hands back where it was sent.
const urlsSeen = [];
async function browser(url) {
  urlsSeen.push(url);
  await new Promise((r) => setTimeout(r, 5)); // a real authorize waits on the user
  const response = await fetch(url, { redirect: 'manual' });
  return response.headers.get('location');
}

module.exports = { oauthServer, browser, urlsSeen };
