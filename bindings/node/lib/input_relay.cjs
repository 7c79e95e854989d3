'use strict';
// One mount's answerer of a server's input requests (capstan_mcp_input_fn and
// input_destroy), registered on this worker as lib/oauth_relay.cjs registers
// the OAuth callbacks: capstan calls it on an MCP runtime thread, koffi runs
// it here, and it asks the JS thread (where the host's answerer lives, async
// as a user answering is) through a message, then waits on a
// SharedArrayBuffer for the answer, bounded by `timeoutMs` (the mount's call
// timeout, else an hour: capstan stops waiting for an older server's request
// then). The JS thread stays free meanwhile.
const { parentPort, workerData } = require('node:worker_threads');
const { koffi } = require('./native.cjs');

const timeoutMs = workerData.timeoutMs;
const PENDING = 0;
const ANSWERED = 1;

function answer(_ud, tool, method, params, paramsLen, out, cap) {
  const n = Number(paramsLen);
  const shared = new SharedArrayBuffer(8 + Number(cap));
  const head = new Int32Array(shared, 0, 2);
  parentPort.postMessage({
    kind: 'input',
    tool,
    method,
    params: n > 0 && params !== null ? koffi.decode(params, 'char', n) : '{}',
    shared,
  });
  if (Atomics.wait(head, 0, PENDING, timeoutMs) === 'timed-out' && Atomics.load(head, 0) === PENDING) return 0;
  if (Atomics.load(head, 0) !== ANSWERED || head[1] <= 0) return 0;
  const bytes = new Uint8Array(shared, 8, head[1]);
  koffi.encode(out, 'uint8_t', Array.from(bytes), bytes.length);
  return bytes.length;
}

const callbacks = [];
function destroy() {
  parentPort.postMessage({ kind: 'destroy' });
  // After this call returned: with the callbacks gone and the port closed,
  // nothing keeps this worker alive and it ends.
  setImmediate(() => {
    for (const cb of callbacks) koffi.unregister(cb);
    parentPort.close();
  });
}

const proto = (sig) => koffi.pointer(koffi.proto(sig));
callbacks.push(
  koffi.register(answer, proto('size_t capstan_node_input_fn(void *ud, const char *tool, const char *method, void *params, size_t params_len, void *answer, size_t cap)')),
  koffi.register(destroy, proto('void capstan_node_input_destroy_fn(void *ud)')),
);
const [answerFn, destroyFn] = callbacks.map((cb) => koffi.address(cb));
// A listening port keeps this worker alive (koffi's broker does not) until
// destroy closes it: a callback into an ended worker would crash the process.
parentPort.on('message', () => {});
parentPort.postMessage({ kind: 'ready', answer: answerFn, destroy: destroyFn });
