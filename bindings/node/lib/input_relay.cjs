'use strict';
// One mount's answerer of a server's input requests (capstan_mcp_input_fn and
// input_destroy), registered on this worker as lib/oauth_relay.cjs registers
// the OAuth callbacks: capstan calls it on an MCP runtime thread, koffi runs
// it here, and it asks the JS thread (where the host's answerer lives, async
// as a user answering is) through a message, then waits on a
// SharedArrayBuffer for the answer, bounded by `timeoutMs` (the mount's call
// timeout, else an hour: capstan stops waiting for an older server's request
// then). The JS thread stays free meanwhile (lib/relay_worker.cjs).
const { koffi } = require('./native.cjs');
const { ask, copyOut, serve } = require('./relay_worker.cjs');

function answer(_ud, tool, method, params, paramsLen, out, cap) {
  const n = Number(paramsLen);
  const text = n > 0 && params !== null ? koffi.decode.string(params, n) : '{}';
  return copyOut(ask({ kind: 'input', tool, method, params: text }, Number(cap)), out);
}

serve(
  [[answer, 'size_t capstan_node_input_fn(void *ud, const char *tool, const char *method, void *params, size_t params_len, void *answer, size_t cap)']],
  ['answer'],
  'void capstan_node_input_destroy_fn(void *ud)',
);
