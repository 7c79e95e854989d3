'use strict';
// host.cjs: quick tools on the event loop through capstan's host batches
// (capstan_host_batch_*, CAPSTAN_TOOL_HOST_RUN): one crossing hands out every
// checked call of the batch's quick tools as one JSON array, the JS functions
// run right here on the JS thread (no pump, no call handle, no hop), and one
// crossing hands every answer back; the batch's other tools (those that take
// a ctx, have a timeout, or are native) run meanwhile as capstan runs them,
// and the registry's drive loop polls the batch until they are done.

const { koffi, api } = require('./native.cjs');
const { OK } = require('./constants.cjs');
const { CapstanError, failure } = require('./errors.cjs');
const { partsOf } = require('./content.cjs');

const ERR_TIMEOUT = 13;
// CAPSTAN_NTS (SIZE_MAX): the JSON text is passed NUL-terminated.
const NTS = koffi.sizeof('size_t') === 8 ? 0xffffffffffffffffn : 0xffffffff;

// Out parameters, reused: each is read right after the call that wrote it,
// before any JS of the host's runs.
const outBatch = [null];
const outText = [null];

function isThenable(v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
}

function errorText(e) {
  return e instanceof Error ? e.message || e.name : String(e);
}

// One answer of capstan_host_batch_finish, as JSON text: text, json, parts or error.
function answerOf(index, value, failed) {
  if (failed) return `{"index":${index},"error":${JSON.stringify(errorText(value))}}`;
  if (typeof value === 'string') return `{"index":${index},"text":${JSON.stringify(value)}}`;
  if (value === undefined) return `{"index":${index},"text":""}`;
  let parts;
  try {
    parts = partsOf(value);
  } catch (e) {
    return answerOf(index, new Error(`tool result parts cannot be sent: ${e.message}`), true);
  }
  if (parts !== null) return `{"index":${index},"parts":${JSON.stringify(parts)}}`;
  let json;
  try {
    json = JSON.stringify(value);
  } catch (e) {
    return answerOf(index, new Error(`tool result is not JSON-serializable: ${e.message}`), true);
  }
  if (json === undefined) return `{"index":${index},"text":""}`;
  return `{"index":${index},"json":${json}}`;
}

// The results of capstan_host_batch_finish (capstan_registry_execute's
// shape) as the binding's ToolResult objects.
function toResults(text) {
  const raw = JSON.parse(text);
  const out = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i];
    const result = {
      index: i,
      id: r.id,
      name: r.name,
      content: r.content,
      isError: r.is_error,
      outcome: r.outcome,
      durationUs: r.duration_us,
    };
    if (r.parts !== undefined) result.parts = r.parts;
    if (r.structured_content !== undefined) result.structuredContent = r.structured_content;
    out[i] = result;
  }
  return out;
}

function quickOnly(what) {
  return () => {
    throw new CapstanError({
      status: 'CAPSTAN_ERR_WRONG_CONTEXT',
      status_code: 15,
      message: `${what}: this tool runs on the quick path (no call handle); register it with quick: false to report progress, log or ask for input`,
    });
  };
}

/** What a quick tool's function gets besides its arguments. */
class QuickContext {
  constructor(run, id, name) {
    this.id = id;
    this.name = name;
    this._run = run;
  }

  cancelled() {
    return this._run.cancelled;
  }

  get input() {
    return { canAsk: [] };
  }
}
QuickContext.prototype.progress = quickOnly('progress');
QuickContext.prototype.log = quickOnly('log');

/** One host batch: its handed-out calls, their answers, and the promise of its results. */
class HostRun {
  constructor(registry, ptr, handed, others) {
    this.registry = registry;
    this.ptr = ptr;
    this.handed = handed;
    // Calls not handed out may still run (other tools): the registry's
    // drive loop pumps and polls for them while this batch lives.
    this.others = others;
    this.answers = null;
    this.pending = 0;
    this.answered = false; // finish took the answers
    this.cancelled = false;
    this.done = false;
    this.resolve = null;
    this.reject = null;
    this.promise = null;
  }

  // Runs the handed-out calls ([{index, id, name, arguments}]) here.
  run() {
    const handed = this.handed;
    const tools = this.registry._toolsByName;
    const answers = (this.answers = new Array(handed.length));
    for (let k = 0; k < handed.length; k++) {
      const c = handed[k];
      const tool = tools.get(c.name);
      if (tool === undefined) {
        answers[k] = answerOf(c.index, new Error('tool was removed'), true);
        continue;
      }
      let value;
      try {
        value = tool.call(c.arguments, new QuickContext(this, c.id, c.name));
      } catch (e) {
        // InputRequired too: execute's caller can give no input.
        answers[k] = answerOf(c.index, e, true);
        continue;
      }
      if (isThenable(value)) {
        tool.sync = false;
        this.pending++;
        const index = c.index;
        Promise.resolve(value).then(
          (v) => this.settle(k, answerOf(index, v, false)),
          (e) => this.settle(k, answerOf(index, e, true)),
        );
      } else {
        if (tool.sync === undefined) tool.sync = true;
        answers[k] = answerOf(c.index, value, false);
      }
    }
    if (this.pending === 0) return this.answer();
    this.registry._hostRuns.add(this);
    if (this.others) this.registry._scheduleDrive();
    return this.later();
  }

  later() {
    if (this.promise === null) {
      this.promise = new Promise((resolve, reject) => {
        this.resolve = resolve;
        this.reject = reject;
      });
    }
    return this.promise;
  }

  settle(k, answer) {
    if (this.answered || this.done) return; // cancelled and answered for already
    this.answers[k] = answer;
    if (--this.pending === 0) {
      const value = this.answer();
      if (value instanceof Promise) return; // polled by the registry from now on
      this.resolve(value);
    }
  }

  // Hands every answer over. The results, or a promise of them while other
  // calls of the batch still run.
  answer() {
    this.answered = true;
    const text = '[' + this.answers.join(',') + ']';
    this.answers = null;
    const value = this.collect(api.host_batch_finish(this.ptr, text, NTS, 0, outText, null));
    // Not done: the other calls run; the drive loop pumps and polls.
    if (value === this.promise) this.registry._scheduleDrive();
    return value;
  }

  // From the registry's drive loop: the batch's other calls may be done.
  poll() {
    if (!this.answered || this.done) return;
    const value = this.collect(api.host_batch_finish(this.ptr, null, 0, 0, outText, null));
    if (!(value instanceof Promise)) this.resolve(value);
  }

  collect(status) {
    if (status === ERR_TIMEOUT) {
      this.others = true;
      this.registry._hostRuns.add(this);
      return this.later();
    }
    this.done = true;
    this.registry._hostRuns.delete(this);
    let results = null;
    let error = null;
    try {
      if (status !== OK) error = failure(status);
      else results = toResults(outText[0]);
    } catch (e) {
      error = e;
    }
    api.host_batch_free(this.ptr);
    this.ptr = null;
    if (error === null) return results;
    if (this.promise === null) throw error;
    this.reject(error);
    return this.promise;
  }

  // The registry closes: unanswered calls end cancelled; the batch's
  // results follow as its other calls end.
  cancel() {
    if (this.done) return;
    this.cancelled = true;
    api.host_batch_cancel(this.ptr);
    if (!this.answered) {
      // Dropped by capstan (those calls already ended cancelled).
      for (let k = 0; k < this.answers.length; k++) {
        if (this.answers[k] === undefined) this.answers[k] = answerOf(this.handed[k].index, new Error('cancelled'), true);
      }
      const value = this.answer();
      if (!(value instanceof Promise)) this.resolve(value);
    }
  }
}

/**
 * Runs `list` (normalized calls) as one host batch; resolves with the
 * results in call order. `opts`: the capstan_exec_options (or null).
 */
function runOnHost(registry, list, opts) {
  const reg = registry._live();
  const status = api.host_batch_begin(reg, JSON.stringify(list), NTS, opts, outBatch, outText, null);
  if (status !== OK) throw failure(status);
  const ptr = outBatch[0];
  let handed;
  try {
    handed = JSON.parse(outText[0]);
  } catch (e) {
    api.host_batch_free(ptr);
    throw e;
  }
  const value = new HostRun(registry, ptr, handed, handed.length < list.length).run();
  return value instanceof Promise ? value : Promise.resolve(value);
}

module.exports = { runOnHost, answerOf, toResults, NTS };
