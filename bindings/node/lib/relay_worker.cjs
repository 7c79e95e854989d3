'use strict';
// What the relay workers (oauth_relay.cjs, input_relay.cjs) share: a
// callback registered on the worker asks the JS thread through a message and
// waits on a SharedArrayBuffer for its answer (mcp.cjs's `replyToRelay`
// writes it), bounded by the worker's `timeoutMs`; `serve` registers the
// callbacks, keeps the worker alive until capstan's destroy, and then lets it
// end.
const { parentPort, workerData } = require('node:worker_threads');
const { koffi } = require('./native.cjs');

const PENDING = 0;
const ANSWERED = 1;

// Posts `message` with a shared answer buffer of `cap` bytes and waits for
// the JS thread: the answer's bytes (a Buffer), or null (refused, no answer
// in time).
function ask(message, cap) {
  const shared = new SharedArrayBuffer(8 + cap);
  const head = new Int32Array(shared, 0, 2);
  parentPort.postMessage({ ...message, shared });
  if (Atomics.wait(head, 0, PENDING, workerData.timeoutMs) === 'timed-out' && Atomics.load(head, 0) === PENDING) return null;
  if (Atomics.load(head, 0) !== ANSWERED || head[1] < 0) return null;
  return Buffer.from(shared, 8, head[1]);
}

// Copies a non-empty answer into capstan's buffer `out`; its length, 0 for none.
function copyOut(answer, out) {
  if (answer === null || answer.length === 0) return 0;
  koffi.encode(out, 'uint8_t', Array.from(answer), answer.length);
  return answer.length;
}

// Registers `fns` (each [function, C signature]) and a destroy callback
// (`destroySig`), and tells the JS thread their addresses as `names` plus
// `destroy` in a 'ready' message. A listening port keeps this worker alive
// (koffi's broker does not) until destroy closes it: a callback into an
// ended worker would crash the process.
function serve(fns, names, destroySig) {
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
  for (const [fn, sig] of fns) callbacks.push(koffi.register(fn, proto(sig)));
  callbacks.push(koffi.register(destroy, proto(destroySig)));
  const ready = { kind: 'ready' };
  names.forEach((name, i) => {
    ready[name] = koffi.address(callbacks[i]);
  });
  ready.destroy = koffi.address(callbacks[callbacks.length - 1]);
  parentPort.on('message', () => {});
  parentPort.postMessage(ready);
}

module.exports = { ask, copyOut, serve };
