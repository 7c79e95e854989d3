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
const { normalizedCall } = require('./marshal.cjs');
const { scanHanded, scanResults } = require('./host_wire.cjs');

const ERR_TIMEOUT = 13;
// CAPSTAN_NTS (SIZE_MAX): the JSON text is passed NUL-terminated.
const WIDE = koffi.sizeof('uintptr_t') === 8;
const NTS = WIDE ? 0xffffffffffffffffn : 0xffffffff;

// The out parameters (uintptr_t): [batch, text address, text length]. Read
// right after the call that wrote them, before any JS of the host's runs.
const outs = WIDE ? new BigUint64Array(3) : new Uint32Array(3);
const outBatch = outs.subarray(0, 1);
const outText = outs.subarray(1, 2);
const outLen = outs.subarray(2, 3);

// The text capstan lent (valid until the batch's free). koffi.decode.string
// with the length costs a third of koffi.decode(p, 'char', len) for a lone
// call's text (and does not stop at a NUL, as 'char' does).
function lentText() {
  const len = Number(outs[2]);
  return len > 0 ? koffi.decode.string(outs[1], len) : '';
}

function errorText(e) {
  return e instanceof Error ? e.message || e.name : String(e);
}

// A lone surrogate has no UTF-8 form: capstan refuses its JSON escape (the
// whole answer with it), so it becomes U+FFFD, as Buffer.from makes it on
// the path with a call handle.
const wellFormed =
  typeof String.prototype.toWellFormed === 'function' ? (s) => s.toWellFormed() : (s) => Buffer.from(s, 'utf8').toString('utf8');
function jsonText(value) {
  const json = JSON.stringify(value);
  if (json === undefined || !json.includes('\\ud')) return json;
  return JSON.stringify(value, (key, v) => (typeof v === 'string' ? wellFormed(v) : v));
}

// One answer of capstan_host_batch_finish, as JSON text: text, json, parts or error.
function answerOf(index, value, failed) {
  if (failed) return `{"index":${index},"error":${jsonText(errorText(value))}}`;
  if (typeof value === 'string') return `{"index":${index},"text":${jsonText(value)}}`;
  if (value === undefined) return `{"index":${index},"text":""}`;
  let parts;
  try {
    parts = partsOf(value);
  } catch (e) {
    return answerOf(index, new Error(`tool result parts cannot be sent: ${e.message}`), true);
  }
  if (parts !== null) return `{"index":${index},"parts":${jsonText(parts)}}`;
  let json;
  try {
    json = jsonText(value);
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
    raw[i] = result;
  }
  return raw;
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

/**
 * A registry's host batches not done (its close cancels them, its drive
 * loop polls those with other calls), in the order they were added: a list
 * linked through the batches themselves. A Set of them cost a lone async
 * call about 0.4 us (a fresh object's identity hash, and the table shrinking
 * back on each delete).
 */
class HostRuns {
  constructor() {
    this.head = null;
    this.tail = null;
    this.size = 0;
  }

  add(run) {
    if (run.listed) return;
    run.listed = true;
    run.prev = this.tail;
    run.next = null;
    if (this.tail === null) this.head = run;
    else this.tail.next = run;
    this.tail = run;
    this.size++;
  }

  delete(run) {
    if (!run.listed) return;
    run.listed = false;
    if (run.prev === null) this.head = run.next;
    else run.prev.next = run.next;
    if (run.next === null) this.tail = run.prev;
    else run.next.prev = run.prev;
    run.prev = null;
    run.next = null;
    this.size--;
  }

  // The batches as they are now ([...runs]: a copy, safe to change the list meanwhile).
  [Symbol.iterator]() {
    const all = [];
    for (let run = this.head; run !== null; run = run.next) all.push(run);
    return all[Symbol.iterator]();
  }
}

/** One host batch: its handed-out calls, their answers, and the promise of its results. */
class HostRun {
  constructor(registry, ptr, handed, others) {
    this.listed = false; // in registry._hostRuns (HostRuns)
    this.prev = null;
    this.next = null;
    this.registry = registry;
    this.ptr = ptr;
    this.handed = handed;
    // Calls not handed out may still run (other tools): the registry's
    // drive loop pumps and polls for them while this batch lives.
    this.others = others;
    this.answers = new Array(handed.length);
    this.pending = 0;
    this.answered = false; // finish took the answers
    this.cancelled = false;
    this.done = false;
    this.resolve = null;
    this.reject = null;
    this.promise = null;
  }

  // Runs the handed-out calls here: the results, or a promise of them.
  run() {
    const { handed, answers } = this;
    const tools = this.registry._toolsByName;
    for (let k = 0; k < handed.length; k++) {
      const c = handed[k];
      const tool = tools.get(c.name);
      let value;
      try {
        if (tool === undefined) throw new Error('tool was removed');
        value = tool.call(c.arguments, new QuickContext(this, c.id, c.name));
      } catch (e) {
        // InputRequired too: execute's caller can give no input.
        answers[k] = answerOf(c.index, e, true);
        continue;
      }
      if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
        tool.sync = false;
        this.pending++;
        // A thenable that is not a Promise is adopted by one (its then may throw).
        (value instanceof Promise ? value : Promise.resolve(value)).then(
          (v) => this.settle(k, answerOf(c.index, v, false)),
          (e) => this.settle(k, answerOf(c.index, e, true)),
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
    if (this.answered) return; // cancelled, and answered for already
    this.answers[k] = answer;
    if (--this.pending === 0) this.handOver(this.answer());
  }

  handOver(value) {
    if (value !== this.promise) this.resolve(value);
  }

  // Hands every answer over: the results, or this batch's promise while its
  // other calls still run.
  answer() {
    this.answered = true;
    const text = '[' + this.answers.join(',') + ']';
    this.answers = null;
    const value = this.collect(api.host_batch_finish(this.ptr, text, NTS, 0, outText, outLen));
    // Not done: the other calls run; the drive loop pumps and polls.
    if (value === this.promise) this.registry._scheduleDrive();
    return value;
  }

  // From the registry's drive loop: the batch's other calls may be done.
  poll() {
    if (!this.answered || this.done) return;
    this.handOver(this.collect(api.host_batch_finish(this.ptr, null, 0, 0, outText, outLen)));
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
      else {
        const text = lentText();
        // Every call handed out: read, else parsed.
        if (!this.others) results = scanResults(text, this.handed);
        if (results === null) results = toResults(text);
      }
    } catch (e) {
      error = e;
    }
    api.host_batch_free(this.ptr);
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
      this.handOver(this.answer());
    }
  }
}

// Whether a batch takes the host path, and if so its calls as
// capstan_host_batch_begin takes them; null when it does not. It takes the
// host path when it has a quick tool's call; no timeout or deadline (a
// quick call has no handle for capstan's timer to cancel); is not
// journaled (the answers reach capstan together, at the batch's end, so a
// crash before that would leave calls that completed here "outcome
// unknown"); and its limit cannot bind a quick call: every call fits under
// it, or every call's tool is quick and has only ever returned at once
// (sync calls run one after another anyway).
//
// The calls are checked as normalizedCall checks them (the same errors)
// and written by concatenation, without a normalized copy: the id (or
// call_<index>), the tool's name as JSON text made when it was registered,
// and the arguments (or {}).
function hostCalls(registry, list, options) {
  if (list.length === 0 || options.timeoutMs || options.deadlineMs) return null;
  if (registry._journaled && options.runId) return null;
  const byName = registry._toolsByName;
  let quick = false;
  let allSync = true;
  for (let i = 0; i < list.length; i++) {
    const call = list[i];
    if (call === null || typeof call !== 'object' || Array.isArray(call) || call.name === undefined) {
      normalizedCall(call, i); // throws, saying what is wrong
      return null;
    }
    const t = byName.get(call.name);
    if (t !== undefined && t.quick) {
      quick = true;
      if (t.sync !== true) allSync = false;
    } else {
      allSync = false;
    }
  }
  const limit = options.parallel === false ? 1 : options.limit || 8;
  if (!quick || (list.length > limit && !allSync)) return null;
  let text = '[';
  for (let i = 0; i < list.length; i++) {
    const call = list[i];
    const t = byName.get(call.name);
    const id = JSON.stringify(call.id ?? `call_${i}`);
    const name = t !== undefined ? t.nameJson : JSON.stringify(call.name);
    const args = JSON.stringify(call.arguments ?? {});
    if (i !== 0) text += ',';
    if (id === undefined || name === undefined || args === undefined) {
      // A value JSON cannot hold (a function): its key left out, as before.
      text += JSON.stringify(normalizedCall(call, i));
    } else {
      text += '{"id":' + id + ',"name":' + name + ',"arguments":' + args + '}';
    }
  }
  return text + ']';
}

/**
 * Runs `text` (the `count` calls hostCalls wrote) as one host batch;
 * resolves with the results in call order. `opts`: hostOptions' answer.
 */
function runOnHost(registry, count, text, opts) {
  // _live: a tool's toJSON, run while the calls were written, may have closed the registry.
  const status = api.host_batch_begin(registry._live(), text, NTS, opts, outBatch, outText, outLen);
  if (status !== OK) throw failure(status);
  const ptr = outs[0];
  let handed;
  try {
    const calls = lentText();
    handed = scanHanded(calls) ?? JSON.parse(calls);
  } catch (e) {
    api.host_batch_free(ptr);
    throw e;
  }
  const value = new HostRun(registry, ptr, handed, handed.length < count).run();
  return value instanceof Promise ? value : Promise.resolve(value);
}

module.exports = { HostRuns, hostCalls, runOnHost, answerOf, toResults, NTS };
