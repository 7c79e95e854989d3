'use strict';
// One OAuth mount's callbacks (capstan_mcp_authorize_fn, the token store,
// oauth_destroy), registered on this worker: capstan calls them on its MCP
// threads, koffi runs them here, and each one asks the JS thread (where the
// host's functions live, an async authorize among them) through a message,
// then waits on a SharedArrayBuffer for the answer, bounded by the mount's
// connect timeout. The JS thread stays free meanwhile: a callback never waits
// on it while it waits on capstan. Registered here, not on the JS thread, so
// that waiting blocks only this worker, never the JS thread's event loop.
const { parentPort, workerData } = require('node:worker_threads');
const { koffi } = require('./native.cjs');

const timeoutMs = workerData.timeoutMs;
const PENDING = 0;
const ANSWERED = 1;

// Posts `message` with a shared answer buffer of `cap` bytes and waits for
// the JS thread: the answer's bytes (a Buffer), or null (refused, no answer
// in time).
function ask(message, cap) {
  const shared = new SharedArrayBuffer(8 + cap);
  const head = new Int32Array(shared, 0, 2);
  parentPort.postMessage({ ...message, shared });
  if (Atomics.wait(head, 0, PENDING, timeoutMs) === 'timed-out' && Atomics.load(head, 0) === PENDING) return null;
  if (Atomics.load(head, 0) !== ANSWERED || head[1] < 0) return null;
  return Buffer.from(shared, 8, head[1]);
}

function authorize(_ud, url, redirect, cap) {
  const answer = ask({ kind: 'authorize', url }, Number(cap));
  if (answer === null || answer.length === 0) return 0;
  koffi.encode(redirect, 'uint8_t', Array.from(answer), answer.length);
  return answer.length;
}

function load(_ud, buf, cap) {
  const answer = ask({ kind: 'load' }, Number(cap));
  if (answer === null || answer.length === 0) return 0;
  koffi.encode(buf, 'uint8_t', Array.from(answer), answer.length);
  return answer.length;
}

function save(_ud, json, len) {
  const n = Number(len);
  const text = n > 0 && json !== null ? koffi.decode(json, 'char', n) : null;
  ask({ kind: 'save', json: text }, 0);
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
  koffi.register(authorize, proto('size_t capstan_node_authorize_fn(void *ud, const char *url, void *redirect, size_t cap)')),
  koffi.register(load, proto('size_t capstan_node_tokens_load_fn(void *ud, void *buf, size_t cap)')),
  koffi.register(save, proto('void capstan_node_tokens_save_fn(void *ud, void *json, size_t len)')),
  koffi.register(destroy, proto('void capstan_node_oauth_destroy_fn(void *ud)')),
);
const [authorizeFn, loadFn, saveFn, destroyFn] = callbacks.map((cb) => koffi.address(cb));
// A listening port keeps this worker alive (koffi's broker does not) until
// destroy closes it: a callback into an ended worker would crash the process.
parentPort.on('message', () => {});
parentPort.postMessage({ kind: 'ready', authorize: authorizeFn, load: loadFn, save: saveFn, destroy: destroyFn });
