'use strict';
// One OAuth mount's callbacks (capstan_mcp_authorize_fn, the token store,
// capstan_mcp_assertion_fn, oauth_destroy), registered on this worker: capstan calls them on its MCP
// threads, koffi runs them here, and each one asks the JS thread (where the
// host's functions live, an async authorize among them) through a message,
// then waits on a SharedArrayBuffer for the answer, bounded by the mount's
// connect timeout. The JS thread stays free meanwhile: a callback never waits
// on it while it waits on capstan. Registered here, not on the JS thread, so
// that waiting blocks only this worker, never the JS thread's event loop.
const { koffi } = require('./native.cjs');
const { ask, copyOut, serve } = require('./relay_worker.cjs');

function authorize(_ud, url, redirect, cap) {
  return copyOut(ask({ kind: 'authorize', url }, Number(cap)), redirect);
}

function assertion(_ud, audience, out, cap) {
  return copyOut(ask({ kind: 'assertion', audience }, Number(cap)), out);
}

function load(_ud, buf, cap) {
  return copyOut(ask({ kind: 'load' }, Number(cap)), buf);
}

function save(_ud, json, len) {
  const n = Number(len);
  const text = n > 0 && json !== null ? koffi.decode.string(json, n) : null;
  ask({ kind: 'save', json: text }, 0);
}

serve(
  [
    [authorize, 'size_t capstan_node_authorize_fn(void *ud, const char *url, void *redirect, size_t cap)'],
    [load, 'size_t capstan_node_tokens_load_fn(void *ud, void *buf, size_t cap)'],
    [save, 'void capstan_node_tokens_save_fn(void *ud, void *json, size_t len)'],
    [assertion, 'size_t capstan_node_assertion_fn(void *ud, const char *audience, void *out, size_t cap)'],
  ],
  ['authorize', 'load', 'save', 'assertion'],
  'void capstan_node_oauth_destroy_fn(void *ud)',
);
