'use strict';
// batch.cjs: batches: calls running in the background, their results delivered on the event loop.

const native = require('./native.cjs');
const { koffi, api } = native;
const { EXEC_DELIVER_POLL, EXEC_START_INLINE } = require('./constants.cjs');
const { check } = require('./errors.cjs');
const { execOptions, toResult } = require('./marshal.cjs');
const { keys, parts } = require('./keys.cjs');

// Runs inside capstan_batch_poll, on the JS thread.
function resultTrampoline(key, resultPtr) {
  const part = parts.get(Number(key));
  if (!part) return;
  if (resultPtr === null) {
    part.finished = true;
    return;
  }
  try {
    const result = toResult(koffi.decode(resultPtr, native.Result));
    result.index += part.offset;
    part.batch._deliver(result);
  } catch (e) {
    part.batch._internalError = e;
  }
}

const resultCallback = koffi.register(
  resultTrampoline,
  koffi.pointer(koffi.proto('void capstan_node_result_fn(uintptr_t user_data, void *result)')),
);

// --- batches --------------------------------------------------------------

/**
 * Calls running in the background: an async iterable of results in the
 * order they finish; `results()` gives them all in call order.
 *
 * The calls are one capstan batch, whose `limit` and `parallel: false`
 * (CAPSTAN_EXEC_SEQUENTIAL) bound them: capstan counts a main-thread call
 * as running until the tool completes it, async tools included. A batch
 * within its limit (every call would start at once anyway) is submitted
 * with CAPSTAN_EXEC_START_INLINE, which starts its calls right inside
 * capstan_batch_submit; a bigger or sequential one is not, since the limit
 * does not apply to START_INLINE calls: they wait for the pump instead.
 */
class Batch {
  constructor(registry, calls, options) {
    this._registry = registry;
    this._calls = calls;
    this.size = calls.length;
    this._parts = new Set();
    this._results = new Array(calls.length);
    this._delivered = 0;
    this._queue = [];
    this._waiters = [];
    this._cancelled = false;
    this._done = false;
    this._internalError = null;
    this._promise = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    this._promise.catch(() => {});
    const limit = options.limit || 8;
    const inline = options.parallel !== false && calls.length <= limit ? EXEC_START_INLINE : 0;
    this._submit(0, calls, options, inline);
    if (this.size === 0) this._finish();
  }

  _submit(offset, calls, options, inline) {
    const wire = calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    const bytes = Buffer.from(JSON.stringify(wire), 'utf8');
    const out = [null];
    const key = keys.next();
    check(api.batch_submit(this._registry._live(), bytes, bytes.length, execOptions(options, EXEC_DELIVER_POLL | inline), null, 0, out));
    const part = { key, ptr: out[0], offset, batch: this, finished: false };
    parts.set(key, part);
    this._parts.add(part);
  }

  _deliver(result) {
    const call = this._calls[result.index];
    if (call) result.id = call.id;
    this._results[result.index] = result;
    this._delivered++;
    const w = this._waiters.shift();
    if (w) w.resolve({ value: result, done: false });
    else this._queue.push(result);
  }

  // Hands queued results over, frees finished parts, starts gated calls.
  _poll() {
    for (const part of [...this._parts]) {
      api.batch_poll(part.ptr, resultCallback, part.key, 0xffffffff);
      if (part.finished) {
        this._parts.delete(part);
        parts.delete(part.key);
        api.batch_free(part.ptr);
      }
    }
    if (this._parts.size === 0 && this._delivered === this.size) this._finish();
  }

  _finish() {
    if (this._done) return;
    this._done = true;
    this._registry._batches.delete(this);
    for (const w of this._waiters.splice(0)) w.resolve({ value: undefined, done: true });
    if (this._internalError) this._reject(this._internalError);
    else this._resolve(this._results);
  }

  /** Cancels calls not yet started (they end `cancelled`); running ones see ctx.cancelled(). */
  cancel() {
    if (this._done) return;
    this._cancelled = true;
    for (const part of this._parts) api.batch_cancel(part.ptr);
    this._registry._scheduleDrive();
  }

  /** Every result, in call order, once the batch is done. */
  results() {
    return this._promise;
  }

  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this._queue.length) return Promise.resolve({ value: this._queue.shift(), done: false });
        if (this._done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this._waiters.push({ resolve, reject }));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}

module.exports = { resultTrampoline, resultCallback, Batch };
