'use strict';
// capstan for Node.js: the registry, its tools as JS functions, batches
// delivered on the event loop, and the provider formats.
//
// Threads: every JS function here runs on the JS thread. Tools are
// registered as CAPSTAN_TOOL_MAIN_THREAD tools and the JS thread is a main
// thread of each registry, so capstan never calls them from a pool thread:
// every call waits for capstan_registry_pump, which only this module calls,
// from the event loop. Batch results are delivered by
// CAPSTAN_EXEC_DELIVER_POLL (capstan_batch_poll, also on the JS thread). What
// tells the loop that there is work is the registry's wake fd, watched by a
// poll(2) running on libuv's thread pool (koffi's async call) while work is
// pending; nothing is armed when nothing is pending, so an idle registry
// costs no wake-up and does not keep the process alive. The approver and
// the stream sinks are the only callbacks capstan may run on its own
// threads: koffi then holds that thread until the JS thread ran them, and
// the JS thread never blocks on capstan while one may be pending (see
// Stream.finish, Registry.close).

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const native = require('./native.cjs');
const { koffi, api } = native;

// `openai` is an alias of `openai_chat`, as in the Python binding.
const FORMATS = Object.freeze({
  describe: 0,
  openai: 1,
  openai_chat: 1,
  openai_responses: 2,
  anthropic: 3,
  gemini: 4,
  mcp: 5,
});
const OUTCOMES = ['ok', 'tool_error', 'invalid_arguments', 'unknown_tool', 'timeout', 'cancelled', 'denied'];

const TOOL_REQUIRES_APPROVAL = 1 << 0;
const TOOL_SERIAL = 1 << 1;
const TOOL_MAIN_THREAD = 1 << 2;
const TOOL_WAIT_FOR_RESPONSE = 1 << 3;
const TOOL_DEFERRED = 1 << 4;
const EXEC_SEQUENTIAL = 1 << 0;
const EXEC_DELIVER_POLL = 1 << 1;
const EXEC_STRICT_NULLS = 1 << 2;
const EXEC_START_INLINE = 1 << 3;
const EXEC_EARLY_DISPATCH = 1 << 4;
const EXEC_WHOLE_TURN = 1 << 5;
const REGISTRY_COERCE = 1 << 0;
const REGISTRY_STRICT_DEFAULTS = 1 << 1;
const REGISTRY_STRICT_KEYWORDS = 1 << 2;
const EXPORT_STRICT = 1 << 0;
const EXPORT_GEMINI_LOWER = 1 << 1;
const CONTENT_TEXT = 0;
const CONTENT_JSON = 1;
const CONTENT_PARTS = 2;
const HISTORY_REPAIR = 1 << 0;
const HISTORY_GEMINI_SIGNATURES = 1 << 1;
const SEARCH_REGEX = 1 << 0;
const OK = 0;
const ERR_PROVIDER_ERROR = 18;
const ERR_INVALID_SCHEMA = 5;
const STREAM_FORMATS = Object.freeze({ openai: 1, openai_chat: 1, openai_responses: 2, anthropic: 3, gemini: 4 });

// --- errors ---------------------------------------------------------------

/** A capstan function failed: `status` is its CAPSTAN_ERR_* name, `statusCode` the number. */
class CapstanError extends Error {
  constructor(info) {
    super(info.message || info.status);
    this.name = 'CapstanError';
    this.status = info.status;
    this.statusCode = info.status_code;
    this.provider = null;
    this.pointer = info.pointer ?? null;
  }
}

/** The response was the provider's report of an error (CAPSTAN_ERR_PROVIDER_ERROR). */
class ProviderError extends CapstanError {
  constructor(info) {
    super(info);
    this.name = 'ProviderError';
    const p = info.provider || {};
    this.provider = {
      kind: p.kind ?? null,
      message: p.message ?? null,
      type: p.type ?? null,
      code: p.code ?? null,
      httpStatus: p.http_status ?? null,
      retryAfterMs: p.retry_after_ms ?? null,
    };
  }
}

/** A tool's parameters schema was refused (CAPSTAN_ERR_INVALID_SCHEMA); `pointer` names the place. */
class SchemaError extends CapstanError {
  constructor(info) {
    super(info);
    this.name = 'SchemaError';
  }
}

/**
 * Thrown (or rejected with) by a tool to ask its caller for input instead
 * of answering (MCP 2026-07-28 multi round-trip requests;
 * capstan_call_require_input). `requests`: by key, each `{ method:
 * 'elicitation/create' | 'sampling/createMessage' | 'roots/list', params }`;
 * `state`: the tool's own text, back in the next round's
 * `ctx.input.requestState` (sealed by capstan on the way). Only an MCP
 * client calling a served tool can be asked, and only what it declared
 * (`ctx.input.canAsk`); for any other caller the call ends as a tool error
 * saying why. Not a CapstanError: it is the tool's answer, not a failure.
 */
class InputRequired extends Error {
  constructor(requests, state = undefined) {
    if (requests === null || typeof requests !== 'object' || Array.isArray(requests)) {
      throw new TypeError('InputRequired: requests must be an object of requests by key');
    }
    if (state !== undefined && state !== null && typeof state !== 'string') {
      throw new TypeError('InputRequired: state must be a string');
    }
    const asked = Object.entries(requests)
      .map(([key, r]) => `${key} (${r !== null && typeof r === 'object' && typeof r.method === 'string' ? r.method : '?'})`)
      .join(', ');
    super(`the tool asked for input (${asked || 'another round'}), which its caller cannot give`);
    this.name = 'InputRequired';
    this.requests = requests;
    this.state = state ?? null;
  }
}

function takeText(ptr, len) {
  if (ptr === null) return null;
  try {
    return len > 0 ? koffi.decode(ptr, 'char', Number(len)) : '';
  } finally {
    api.string_free(ptr);
  }
}

// Reads the calling thread's last failure right after `status` came back:
// nothing else ran on this thread in between.
function failure(status) {
  const out = [null];
  const len = [0];
  let info = null;
  if (api.error_json(out, len) === OK) {
    try {
      info = JSON.parse(takeText(out[0], len[0]));
    } catch {
      info = null;
    }
  }
  if (!info || info.status_code !== status) {
    info = { status: api.status_name(status), status_code: status, message: api.status_name(status) };
  }
  if (status === ERR_PROVIDER_ERROR) return new ProviderError(info);
  if (status === ERR_INVALID_SCHEMA) return new SchemaError(info);
  return new CapstanError(info);
}

function failureFromJson(status, text) {
  let info = null;
  try {
    info = text ? JSON.parse(text) : null;
  } catch {
    info = null;
  }
  if (!info || info.status_code !== status) {
    info = { status: api.status_name(status), status_code: status, message: api.status_name(status) };
  }
  return status === ERR_PROVIDER_ERROR ? new ProviderError(info) : status === ERR_INVALID_SCHEMA ? new SchemaError(info) : new CapstanError(info);
}

function check(status) {
  if (status !== OK) throw failure(status);
}

// Calls fn(out, outLen) for a function writing one text, returns the text.
function textOut(fn) {
  const out = [null];
  const len = [0];
  check(fn(out, len));
  return takeText(out[0], len[0]);
}

// --- inputs ---------------------------------------------------------------

function formatOf(format) {
  const f = FORMATS[format];
  if (f === undefined) {
    throw new TypeError(`unknown format ${JSON.stringify(format)}; expected one of: ${Object.keys(FORMATS).join(', ')}`);
  }
  return f;
}

function jsonBytes(value, what) {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value === undefined) throw new TypeError(`${what} is undefined`);
  return Buffer.from(JSON.stringify(value), 'utf8');
}

// A call without an id gets `call_<index>`, as the C ABI and every other
// binding give it (issue 49).
function normalizedCall(call, i) {
  if (typeof call === 'string') {
    throw new TypeError(
      `calls[${i}] is a string: execute takes call objects {id, name, arguments} ` +
        '(JSON.parse the text first; a provider response goes to runTurn)',
    );
  }
  if (call === null || typeof call !== 'object' || Array.isArray(call)) {
    throw new TypeError(`calls[${i}] is not a call object {id, name, arguments}`);
  }
  const out = { id: call.id ?? `call_${i}`, name: call.name, arguments: call.arguments ?? {} };
  return out;
}

function milliseconds(value, what) {
  if (value === undefined || value === null || value === 0) return 0;
  if (typeof value !== 'number' || !(value > 0)) throw new RangeError(`${what} must be a positive number of milliseconds`);
  return Math.min(Math.ceil(value), 0xffffffff);
}

function execOptions(opts = {}, extraFlags = 0) {
  let flags = extraFlags;
  if (opts.parallel === false) flags |= EXEC_SEQUENTIAL;
  if (opts.strictNulls) flags |= EXEC_STRICT_NULLS;
  const limit = opts.limit ?? 0;
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError('limit must be an integer >= 0');
  const approved = opts.approvedIds ?? [];
  if (!Array.isArray(approved) || approved.some((id) => typeof id !== 'string')) {
    throw new TypeError('approvedIds must be an array of call ids (strings)');
  }
  return {
    struct_size: native.sizes.ExecOptions,
    flags,
    limit: Math.min(limit, 0xffffffff),
    timeout_ms: milliseconds(opts.timeoutMs, 'timeoutMs'),
    approved_ids: approved.length ? approved : null,
    approved_count: approved.length,
    deadline_ms: milliseconds(opts.deadlineMs, 'deadlineMs'),
  };
}

// --- results --------------------------------------------------------------

function toResult(r) {
  const s = (p, n) => (n > 0 ? koffi.decode(p, 'char', Number(n)) : '');
  const outcome = OUTCOMES[r.outcome] ?? `outcome_${r.outcome}`;
  return {
    index: Number(r.index),
    id: s(r.id, r.id_len),
    name: s(r.name, r.name_len),
    content: s(r.content, r.content_len),
    isError: Boolean(r.is_error),
    outcome,
    durationUs: Number(r.duration_us),
    ...(r.parts_json !== null && Number(r.parts_json_len) > 0 ? { parts: JSON.parse(s(r.parts_json, r.parts_json_len)) } : {}),
    ...(r.structured_json !== null && Number(r.structured_json_len) > 0
      ? { structuredContent: JSON.parse(s(r.structured_json, r.structured_json_len)) }
      : {}),
  };
}

function normalizedResult(r) {
  return {
    id: r.id,
    name: r.name,
    content: r.content,
    is_error: r.isError ?? r.is_error ?? false,
    outcome: r.outcome ?? (r.isError ? 'tool_error' : 'ok'),
    duration_us: r.durationUs ?? r.duration_us ?? 0,
    ...(r.parts ? { parts: r.parts } : {}),
    ...(r.structuredContent ?? r.structured_content ? { structured_content: r.structuredContent ?? r.structured_content } : {}),
  };
}

// --- the event-loop waker ---------------------------------------------------

// poll(2) and read(2) from the C library, for watching wake fds on libuv's
// pool. null where there is none (Windows): batches are then driven by a
// 2 ms timer while pending.
const waker = (() => {
  if (process.platform === 'win32') return null;
  const names = process.platform === 'darwin' ? ['libc.dylib', '/usr/lib/libSystem.B.dylib'] : ['libc.so.6', 'libc.so'];
  for (const name of names) {
    try {
      const libc = koffi.load(name);
      return {
        poll: libc.func('int poll(void *fds, unsigned long nfds, int timeout)'),
        read: libc.func('intptr_t read(int fd, _Out_ uint8_t *buf, size_t count)'),
      };
    } catch {
      // next
    }
  }
  return null;
})();
const POLLIN = 1;
const WAKE_POLL_MS = 100;

// --- tools and the trampolines ----------------------------------------------

// Tool and batch-part keys (the user_data capstan hands back) -> their JS side.
const tools = new Map();
const parts = new Map();
const streams = new Map();
const approvers = new Map();
const eventHooks = new Map();
// capstan_stream_finish calls running on libuv's pool: while any runs, the
// waker uses a timer rather than another pool thread (the pool may be full).
let finishing = 0;
let nextKey = 1;

function callText(getter, call) {
  const len = [0];
  const p = getter(call, len);
  if (p === null) return null;
  return len[0] > 0 ? koffi.decode(p, 'char', Number(len[0])) : '';
}

// --- content parts -----------------------------------------------------------

function base64Of(data, what) {
  if (Buffer.isBuffer(data)) return data.toString('base64');
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('base64');
  throw new TypeError(`${what}: data must be a Buffer, Uint8Array or ArrayBuffer`);
}

/** An image for the model (PNG, JPEG, GIF and WebP reach every provider). */
class Image {
  constructor(data, mime = 'image/png') {
    if (typeof mime !== 'string') throw new TypeError('Image: mime must be a string');
    this._data = base64Of(data, 'Image');
    this.mime = mime;
  }

  /** The MCP content block. */
  part() {
    return { type: 'image', data: this._data, mimeType: this.mime };
  }
}

/**
 * A file for the model: audio (audio/...) is sent as an MCP audio part,
 * anything else as an embedded resource file:///name (application/pdf
 * reaches every provider as a document).
 */
class File {
  constructor(data, mime, name = 'file') {
    if (typeof mime !== 'string') throw new TypeError('File: mime must be a string');
    this._data = base64Of(data, 'File');
    this.mime = mime;
    this.name = name || 'file';
  }

  part() {
    if (this.mime.startsWith('audio/')) return { type: 'audio', data: this._data, mimeType: this.mime };
    return { type: 'resource', resource: { uri: `file:///${this.name}`, mimeType: this.mime, blob: this._data } };
  }
}

const isMedia = (v) => v instanceof Image || v instanceof File;

// The content blocks of a tool's return value, or null when it holds no
// image or file (then it is text or JSON, as before).
function partsOf(value) {
  if (isMedia(value)) return [value.part()];
  if (!Array.isArray(value) || !value.some(isMedia)) return null;
  return value.map((v) => (isMedia(v) ? v.part() : { type: 'text', text: typeof v === 'string' ? v : JSON.stringify(v) ?? '' }));
}

// Completes a call. capstan hands the parts it accepted (checked and
// capped) back with the call's result (capstan_result.parts_json).
function completeCall(call, value, failed) {
  if (failed && value instanceof InputRequired) {
    const refusal = askForInput(call, value);
    if (refusal === null) return;
    value = refusal;
  }
  if (failed) {
    const message = value instanceof Error ? value.message || value.name : String(value);
    const bytes = Buffer.from(message, 'utf8');
    api.call_fail(call, bytes, bytes.length);
    return;
  }
  let kind = CONTENT_JSON;
  let text;
  let parts = null;
  try {
    parts = partsOf(value);
  } catch (e) {
    return completeCall(call, new Error(`tool result parts cannot be sent: ${e.message}`), true);
  }
  if (parts !== null) {
    kind = CONTENT_PARTS;
    text = JSON.stringify(parts);
  } else if (typeof value === 'string') {
    kind = CONTENT_TEXT;
    text = value;
  } else if (value === undefined) {
    kind = CONTENT_TEXT;
    text = '';
  } else {
    try {
      text = JSON.stringify(value);
    } catch (e) {
      return completeCall(call, new Error(`tool result is not JSON-serializable: ${e.message}`), true);
    }
    if (text === undefined) {
      kind = CONTENT_TEXT;
      text = '';
    }
  }
  const bytes = Buffer.from(text, 'utf8');
  // ALREADY_COMPLETED (the call timed out or its batch was cancelled) and
  // STALE_HANDLE (registry closed) drop the value: nothing waits for it.
  // INVALID_CONTENT: the parts failed capstan's check; the call is a tool error.
  api.call_return(call, kind, bytes, bytes.length);
}

// Completes the call asking its caller for input; null when done, else the
// reason capstan refused (the call is still open then, for the tool error).
function askForInput(call, asked) {
  let requests;
  try {
    requests = Buffer.from(JSON.stringify(asked.requests), 'utf8');
  } catch (e) {
    return new Error(`the input requests are not JSON: ${e.message}`);
  }
  const state = asked.state === null ? null : Buffer.from(asked.state, 'utf8');
  const status = api.call_require_input(call, requests, requests.length, state, state === null ? 0 : state.length);
  // ALREADY_COMPLETED / STALE_HANDLE: nothing waits for the call any more.
  if (status === OK || status === ERR_ALREADY_COMPLETED || status === ERR_STALE_HANDLE) return null;
  return new Error(`${asked.message}: ${failure(status).message}`);
}

// What the caller gave besides the arguments (capstan_call_input), parsed.
function callInput(call) {
  const text = callText(api.call_input, call);
  if (!text) return { canAsk: [] };
  const value = JSON.parse(text);
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { canAsk: [] };
}

// capstan_call_progress: true when reported, false once the call has its
// result (it timed out, was cancelled, or the tool already returned).
const ERR_INVALID_ARGUMENT = 2;
const ERR_ALREADY_COMPLETED = 11;
const ERR_STALE_HANDLE = 12;
function reportProgress(call, progress, total = 0, message = undefined) {
  if (typeof progress !== 'number') throw new TypeError('progress: progress must be a number');
  if (typeof total !== 'number') throw new TypeError('progress: total must be a number (0: unknown)');
  if (message !== undefined && message !== null && typeof message !== 'string') throw new TypeError('progress: message must be a string');
  const bytes = message === undefined || message === null ? null : Buffer.from(message, 'utf8');
  const status = api.call_progress(call, progress, total, bytes, bytes === null ? 0 : bytes.length);
  if (status === ERR_ALREADY_COMPLETED || status === ERR_STALE_HANDLE) return false;
  check(status);
  return true;
}

// capstan_log_level by value (CAPSTAN_LOG_DEBUG 0 .. CAPSTAN_LOG_EMERGENCY 7):
// MCP's level names.
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

// capstan_call_log: true when sent, false once the call has its result (as
// reportProgress). A level that is not one of LOG_LEVELS throws before
// anything is sent.
function sendLog(call, level, message) {
  const code = typeof level === 'string' ? LOG_LEVELS.indexOf(level) : -1;
  if (code < 0) {
    throw new CapstanError({
      status: 'CAPSTAN_ERR_INVALID_ARGUMENT',
      status_code: ERR_INVALID_ARGUMENT,
      message: `log: level ${JSON.stringify(level) ?? String(level)} is not one of ${LOG_LEVELS.join(', ')}`,
    });
  }
  if (typeof message !== 'string') throw new TypeError('log: message must be a string');
  const bytes = Buffer.from(message, 'utf8');
  const status = api.call_log(call, code, bytes, bytes.length);
  if (status === ERR_ALREADY_COMPLETED || status === ERR_STALE_HANDLE) return false;
  check(status);
  return true;
}

// Runs inside capstan_registry_pump, on the JS thread (main-thread tools).
function toolTrampoline(key, call) {
  try {
    const tool = tools.get(Number(key));
    if (!tool) {
      completeCall(call, new Error('tool was removed'), true);
      return;
    }
    const argsText = callText(api.call_arguments, call);
    if (argsText === null) return; // not live: nothing to complete
    let input;
    const ctx = {
      id: callText(api.call_id, call),
      name: callText(api.call_tool, call),
      cancelled: () => api.call_cancelled(call),
      progress: (progress, total, message) => reportProgress(call, progress, total, message),
      log: (level, message) => sendLog(call, level, message),
      // Read once, while the call is open (its handle stops resolving then).
      get input() {
        if (input === undefined) input = callInput(call);
        return input;
      },
    };
    const done = (v) => completeCall(call, v, false);
    let value;
    try {
      value = tool.fn(JSON.parse(argsText), ctx);
    } catch (e) {
      completeCall(call, e, true);
      return;
    }
    if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
      const registry = tool.registry;
      registry._inflight++;
      Promise.resolve(value)
        .then(done, (e) => completeCall(call, e, true))
        .finally(() => {
          registry._inflight--;
          registry._scheduleDrive();
        });
    } else {
      done(value);
    }
  } catch (e) {
    // Never let an exception cross into capstan: fail the call instead.
    try {
      completeCall(call, e, true);
    } catch {
      // the call is gone
    }
  }
}

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

// Stream sink callbacks: on the JS thread inside capstan_stream_feed, or on
// a capstan thread (a call's timeout, capstan_stream_finish running on
// libuv's pool), which koffi blocks until the JS thread runs them: the JS
// thread never waits on such a thread while a stream is live (finish runs
// asynchronously, close waits for the streams' finishes).
function textTrampoline(key, text, len) {
  const stream = streams.get(Number(key));
  if (!stream) return;
  try {
    stream._text(Number(len) > 0 ? koffi.decode(text, 'char', Number(len)) : '');
  } catch (e) {
    stream._callbackError ??= e;
  }
}

function streamResultTrampoline(key, resultPtr) {
  const stream = streams.get(Number(key));
  if (!stream) return;
  if (resultPtr === null) {
    stream._resultsEnded = true;
    return;
  }
  try {
    stream._deliver(toResult(koffi.decode(resultPtr, native.Result)));
  } catch (e) {
    stream._callbackError ??= e;
  }
}

// The approver runs on a capstan pool thread, which koffi blocks until the
// JS thread has run this: it only starts the host's (async) approver and
// returns; the decision is made later, on the JS thread.
function approverTrampoline(key, approval) {
  const registry = approvers.get(Number(key));
  const deny = (reason) => {
    const bytes = Buffer.from(reason, 'utf8');
    api.approval_decide(approval, false, bytes, bytes.length);
  };
  try {
    if (!registry || registry._approver === null) {
      deny('No approver.');
      return;
    }
    const len = [0];
    const text = (getter) => {
      const p = getter(approval, len);
      return p === null ? null : Number(len[0]) > 0 ? koffi.decode(p, 'char', Number(len[0])) : '';
    };
    const argsText = text(api.approval_arguments);
    if (argsText === null) return; // no longer live
    const request = { tool: text(api.approval_tool), id: text(api.approval_id), arguments: JSON.parse(argsText) };
    const approver = registry._approver;
    registry._inflight++;
    Promise.resolve()
      .then(() => approver(request))
      .then(
        (decision) => {
          const approve = decision === true || (decision !== null && typeof decision === 'object' && decision.approve === true);
          const reason = decision !== null && typeof decision === 'object' && typeof decision.reason === 'string' ? decision.reason : null;
          const bytes = reason === null ? null : Buffer.from(reason, 'utf8');
          api.approval_decide(approval, approve, bytes, bytes === null ? 0 : bytes.length);
        },
        (e) => deny(`The approver failed: ${e instanceof Error ? e.message : String(e)}`),
      )
      .finally(() => {
        registry._inflight--;
        registry._scheduleDrive();
      });
  } catch (e) {
    try {
      deny(`The approver failed: ${e.message}`);
    } catch {
      // the approval is gone
    }
  }
}

const EVENT_KINDS = ['started', 'finished', 'timed_out', 'cancelled', 'progress', 'log'];

// The event hook: on the thread where the event happens. For the JS tools
// that is the JS thread (inside capstan_registry_pump, capstan_call_return or
// capstan_call_progress); a timeout, an MCP mount's call or a call completed
// by capstan on its own thread (a deadline, a close) runs it on a capstan
// thread, which koffi holds until the JS thread ran this. It only copies the
// borrowed event; the host's hook runs as a microtask, after the native call
// that reported the event returned (so it may call back into the registry).
function eventTrampoline(key, eventPtr) {
  const registry = eventHooks.get(Number(key));
  if (!registry || registry._eventHook === null) return;
  try {
    const e = koffi.decode(eventPtr, native.Event);
    const s = (p, n) => (p !== null && Number(n) > 0 ? koffi.decode(p, 'char', Number(n)) : '');
    const kind = EVENT_KINDS[e.kind];
    if (kind === undefined) return; // a kind this binding does not know: ignored, as the header asks
    const event = { kind, tool: s(e.tool, e.tool_len), id: s(e.id, e.id_len), index: Number(e.index), durationUs: Number(e.duration_us) };
    if (kind === 'finished') event.outcome = OUTCOMES[e.outcome] ?? `outcome_${e.outcome}`;
    if (kind === 'progress') {
      event.progress = e.progress;
      event.total = e.total;
      event.message = e.message === null ? null : s(e.message, e.message_len);
    }
    if (kind === 'log') {
      event.level = LOG_LEVELS[e.level] ?? `level_${e.level}`;
      event.message = s(e.message, e.message_len);
    }
    const hook = registry._eventHook;
    queueMicrotask(() => {
      try {
        hook(event);
      } catch (err) {
        process.emitWarning(`capstan: the event hook threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  } catch {
    // never let an exception cross into capstan
  }
}

const toolCallback = koffi.register(toolTrampoline, koffi.pointer(koffi.proto('void capstan_node_tool_fn(uintptr_t user_data, void *call)')));
const resultCallback = koffi.register(
  resultTrampoline,
  koffi.pointer(koffi.proto('void capstan_node_result_fn(uintptr_t user_data, void *result)')),
);

const approverCallback = koffi.register(approverTrampoline, koffi.pointer(native.ApproverFn));
const eventCallback = koffi.register(eventTrampoline, koffi.pointer(native.EventFn));
const textCallback = koffi.register(textTrampoline, koffi.pointer(native.TextFn));
const streamResultCallback = koffi.register(streamResultTrampoline, koffi.pointer(native.SinkResultFn));

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
    const key = nextKey++;
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

// --- streams --------------------------------------------------------------

function chunkBytes(chunk) {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return Buffer.from(chunk);
  throw new TypeError('stream chunks must be strings, Buffers, Uint8Arrays or ArrayBuffers');
}

function streamTurn(done) {
  return {
    calls: done.calls,
    results: done.results.map((r, index) => ({
      index,
      id: r.id,
      name: r.name,
      content: r.content,
      isError: Boolean(r.is_error),
      outcome: r.outcome,
      durationUs: r.duration_us ?? 0,
      ...(r.parts ? { parts: r.parts } : {}),
      ...(r.structured_content ? { structuredContent: r.structured_content } : {}),
    })),
    messages: done.messages,
    text: done.text ?? '',
    stopReason: done.stop_reason ?? null,
    cancelled: Boolean(done.cancelled),
    cutCalls: done.cut_calls ?? [],
  };
}

/**
 * A streamed model response being read (registry.stream): feed() the body's
 * bytes as they arrive, iterate results as calls end, then finish().
 */
class Stream {
  constructor(registry, format, options) {
    const fmt = STREAM_FORMATS[format];
    if (fmt === undefined) {
      throw new TypeError(`unknown stream format ${JSON.stringify(format)}; expected one of: ${Object.keys(STREAM_FORMATS).join(', ')}`);
    }
    if (options.onText !== undefined && typeof options.onText !== 'function') throw new TypeError('onText must be a function');
    this._registry = registry;
    this._onText = options.onText;
    this._key = nextKey++;
    this._queue = [];
    this._waiters = [];
    this._resultsEnded = false;
    this._callbackError = null;
    this._feedError = null;
    this._finish = null;
    const opts = execOptions(options, options.earlyDispatch ? EXEC_EARLY_DISPATCH : 0);
    const out = [null];
    streams.set(this._key, this);
    const status = api.stream_new(
      registry._live(),
      fmt,
      opts,
      { struct_size: native.sizes.StreamSink, on_text: textCallback, on_result: streamResultCallback, user_data: this._key },
      out,
    );
    if (status !== OK) {
      streams.delete(this._key);
      throw failure(status);
    }
    this._ptr = out[0];
    registry._streams.add(this);
  }

  _text(text) {
    if (this._onText) this._onText(text);
  }

  _deliver(result) {
    const w = this._waiters.shift();
    if (w) w.resolve({ value: result, done: false });
    else this._queue.push(result);
    this._registry._scheduleDrive();
  }

  /**
   * Reads the next bytes of the body (split anywhere). Throws the stream's
   * error (ProviderError for the provider's error event, CapstanError
   * INVALID_RESPONSE, STREAM_TOO_LARGE), then again on every later feed.
   */
  feed(chunk) {
    if (this._finish) {
      throw new CapstanError({ status: 'CAPSTAN_ERR_WRONG_CONTEXT', status_code: 16, message: 'the stream is finished' });
    }
    if (this._feedError) throw this._feedError;
    const bytes = chunkBytes(chunk);
    const status = api.stream_feed(this._ptr, bytes, bytes.length);
    this._registry._scheduleDrive();
    if (status !== OK) {
      this._feedError = failure(status);
      throw this._feedError;
    }
    if (this._callbackError) {
      const e = this._callbackError;
      this._callbackError = null;
      throw e;
    }
  }

  /** No call starts any more; running ones see ctx.cancelled(). finish() still collects the results. */
  cancel() {
    if (this._ptr !== null) api.stream_cancel(this._ptr);
  }

  /**
   * The body ended: starts the calls not started yet and resolves, once
   * each has its result, with { calls, results, messages, text, stopReason,
   * cancelled, cutCalls } (messages: what to append to the conversation).
   * capstan_stream_finish waits for the calls, so it runs on libuv's pool
   * while the tools run here on the event loop. Then the stream is freed.
   */
  finish() {
    if (this._finish) return this._finish;
    const registry = this._registry;
    this._finish = new Promise((resolve, reject) => {
      const out = [null];
      const len = [0];
      finishing++;
      registry._scheduleDrive();
      api.stream_finish.async(this._ptr, out, len, (err, status) => {
        finishing--;
        let text = null;
        if (!err && status === OK) text = takeText(out[0], len[0]);
        api.stream_free(this._ptr);
        this._ptr = null;
        streams.delete(this._key);
        registry._streams.delete(this);
        this._resultsEnded = true;
        for (const w of this._waiters.splice(0)) w.resolve({ value: undefined, done: true });
        registry._streamEnded();
        if (err) return reject(err);
        if (status !== OK) {
          // The finish ran on another thread: its message is that thread's.
          // A failed feed's error is the same (sticky) status, with its message.
          if (this._feedError && this._feedError.statusCode === status) return reject(this._feedError);
          const name = api.status_name(status);
          const message =
            name === 'CAPSTAN_ERR_STREAM_TRUNCATED'
              ? "stream truncated: the body ended before the response's closing event (calls not started were not run)"
              : name;
          return reject(new CapstanError({ status: name, status_code: status, message }));
        }
        try {
          resolve(streamTurn(JSON.parse(text)));
        } catch (e) {
          reject(e);
        }
      });
    });
    return this._finish;
  }

  /** Results as each call ends, in the order they end; done after the last. */
  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this._queue.length) return Promise.resolve({ value: this._queue.shift(), done: false });
        if (this._resultsEnded) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this._waiters.push({ resolve, reject }));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}

function bodyChunks(body) {
  if (body === null || body === undefined) throw new TypeError('runStream: no body');
  if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) return [body];
  if (typeof body.getReader === 'function' || typeof body[Symbol.asyncIterator] === 'function') return body;
  if (body.body !== undefined && body.body !== null && typeof body.ok === 'boolean') {
    if (!body.ok) throw new Error(`runStream: HTTP ${body.status} ${body.statusText || ''}`.trim());
    return bodyChunks(body.body); // a fetch() Response
  }
  if (typeof body[Symbol.iterator] === 'function') return body;
  throw new TypeError('runStream: body must be a fetch() Response, a ReadableStream, an (async) iterable of chunks, a string or bytes');
}

async function* readChunks(source) {
  if (typeof source.getReader === 'function' && typeof source[Symbol.asyncIterator] !== 'function') {
    const reader = source.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    yield* source;
  }
}

// --- MCP ------------------------------------------------------------------

function asyncCall(fn, ...args) {
  return new Promise((resolve, reject) => fn.async(...args, (err, value) => (err ? reject(err) : resolve(value))));
}

function optionalText(value, what) {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string`);
  return value;
}

function serverOptions(o = {}) {
  const list = (v, what) => (v === undefined || v === null ? null : Array.isArray(v) ? v.join(',') : optionalText(v, what));
  return {
    struct_size: native.sizes.McpServerOptions,
    flags: 0,
    address: optionalText(o.address, 'address'),
    bearer_token: optionalText(o.bearerToken, 'bearerToken'),
    allowed_origins: list(o.allowedOrigins, 'allowedOrigins'),
    allowed_hosts: list(o.allowedHosts, 'allowedHosts'),
    tools_meta: o.toolsMeta === undefined || o.toolsMeta === null ? null : typeof o.toolsMeta === 'string' ? o.toolsMeta : JSON.stringify(o.toolsMeta),
    name: optionalText(o.name, 'name'),
    max_body_bytes: o.maxBodyBytes ?? 0,
    call_timeout_ms: milliseconds(o.callTimeoutMs, 'callTimeoutMs'),
    stop_timeout_ms: milliseconds(o.stopTimeoutMs, 'stopTimeoutMs'),
  };
}

/** maxReconnects as the C field takes it: undefined = 5, 0 = never. */
function reconnects(n) {
  if (n === undefined || n === null) return 5;
  if (!Number.isInteger(n) || n < 0) throw new TypeError(`maxReconnects must be a non-negative integer, not ${n}`);
  return n === 0 ? 0xffffffff : Math.min(n, 0xfffffffe);
}

function mountOptions(o) {
  if (!o || (o.command === undefined) === (o.url === undefined)) {
    throw new TypeError('mount: give exactly one of command (an array: program and arguments) or url');
  }
  if (o.command !== undefined && (!Array.isArray(o.command) || o.command.length === 0 || o.command.some((a) => typeof a !== 'string'))) {
    throw new TypeError('mount: command must be a non-empty array of strings');
  }
  const pairs = (obj, sep, what) => {
    if (obj === undefined || obj === null) return [];
    if (typeof obj !== 'object') throw new TypeError(`mount: ${what} must be an object`);
    return Object.entries(obj).map(([k, v]) => `${k}${sep}${v}`);
  };
  const env = pairs(o.env, '=', 'env');
  const headers = pairs(o.headers, ': ', 'headers');
  return {
    struct_size: native.sizes.McpMountOptions,
    argv: o.command ?? null,
    argc: o.command ? o.command.length : 0,
    env: env.length ? env : null,
    env_count: env.length,
    cwd: optionalText(o.cwd, 'cwd'),
    url: optionalText(o.url, 'url'),
    headers: headers.length ? headers : null,
    header_count: headers.length,
    prefix: optionalText(o.prefix, 'prefix'),
    connect_timeout_ms: milliseconds(o.connectTimeoutMs, 'connectTimeoutMs'),
    call_timeout_ms: milliseconds(o.callTimeoutMs, 'callTimeoutMs'),
    // The C field: 0 is its default (5), UINT32_MAX (CAPSTAN_MCP_RECONNECT_NEVER) never.
    max_reconnects: reconnects(o.maxReconnects),
    reconnect_backoff_ms: milliseconds(o.reconnectBackoffMs, 'reconnectBackoffMs'),
    protocol_version: optionalText(o.protocolVersion, 'protocolVersion'),
    ...oauthFields(o.oauth),
    input_methods: inputMethods(o.input, o.inputMethods),
  };
}

// capstan_mcp_mount_options.input_methods (CAPSTAN_MCP_INPUT_*).
const INPUT_METHODS = Object.freeze({ 'elicitation/create': 1, 'sampling/createMessage': 2, 'roots/list': 4 });

// The flags of `inputMethods` (mount option), checked with `input`, the
// function that answers them (it reaches capstan through lib/input_relay.cjs).
function inputMethods(answer, methods) {
  if (answer === undefined || answer === null) {
    if (methods !== undefined && methods !== null) throw new TypeError('mount: inputMethods needs input (the function that answers them)');
    return 0;
  }
  if (typeof answer !== 'function') throw new TypeError('mount: input must be a function (tool, method, params) => answer');
  if (methods === undefined || methods === null) return INPUT_METHODS['elicitation/create'];
  if (!Array.isArray(methods)) throw new TypeError('mount: inputMethods must be an array of method names');
  const known = Object.keys(INPUT_METHODS).join(', ');
  let flags = 0;
  for (const m of methods) {
    if (!Object.hasOwn(INPUT_METHODS, m)) throw new TypeError(`mount: inputMethods: unknown method ${JSON.stringify(m)}; known: ${known}`);
    flags |= INPUT_METHODS[m];
  }
  if (flags === 0) throw new TypeError(`mount: inputMethods is empty; name at least one of ${known}`);
  return flags;
}

// The text fields of `oauth` (mount option); its functions are checked here
// and reach capstan through lib/oauth_relay.cjs.
function oauthFields(a) {
  if (a === undefined || a === null) return {};
  if (typeof a !== 'object') throw new TypeError('mount: oauth must be an object');
  if (a.authorize !== undefined && a.authorize !== null && typeof a.authorize !== 'function') {
    throw new TypeError('mount: oauth.authorize must be a function (authorization URL => redirect URL)');
  }
  const t = a.tokens;
  if (t !== undefined && t !== null && (typeof t !== 'object' || typeof t.load !== 'function' || typeof t.save !== 'function')) {
    throw new TypeError('mount: oauth.tokens must be an object with load() and save(json) functions');
  }
  if (a.assertion !== undefined && a.assertion !== null && typeof a.assertion !== 'function') {
    throw new TypeError('mount: oauth.assertion must be a function (audience => JWT)');
  }
  const idp = a.identityProvider ?? {};
  if (typeof idp !== 'object') {
    throw new TypeError('mount: oauth.identityProvider must be an object { issuer, tokenEndpoint, clientId, clientSecret }');
  }
  const scopes = Array.isArray(a.scopes) ? a.scopes.join(' ') : optionalText(a.scopes, 'oauth.scopes');
  return {
    oauth_redirect_uri: optionalText(a.redirectUri, 'oauth.redirectUri'),
    oauth_client_id: optionalText(a.clientId, 'oauth.clientId'),
    oauth_client_secret: optionalText(a.clientSecret, 'oauth.clientSecret'),
    oauth_client_metadata_url: optionalText(a.clientMetadataUrl, 'oauth.clientMetadataUrl'),
    oauth_scopes: scopes,
    oauth_client_key: optionalText(a.clientKey, 'oauth.clientKey'),
    // capstan checks that the three go together and need an assertion.
    oauth_idp_issuer: optionalText(idp.issuer, 'oauth.identityProvider.issuer'),
    oauth_idp_token_endpoint: optionalText(idp.tokenEndpoint, 'oauth.identityProvider.tokenEndpoint'),
    oauth_idp_client_id: optionalText(idp.clientId, 'oauth.identityProvider.clientId'),
    oauth_idp_client_secret: optionalText(idp.clientSecret, 'oauth.identityProvider.clientSecret'),
    oauth_client_issuer: optionalText(a.clientIssuer, 'oauth.clientIssuer'),
  };
}

// Hands a relay worker (lib/relay_worker.cjs) its answer: `bytes`, or none
// (null, or more than its buffer holds), and wakes it.
function replyToRelay(shared, bytes) {
  const head = new Int32Array(shared, 0, 2);
  if (bytes === null || bytes.length > shared.byteLength - 8) {
    head[1] = -1;
  } else {
    new Uint8Array(shared, 8, bytes.length).set(bytes);
    head[1] = bytes.length;
  }
  Atomics.store(head, 0, 1);
  Atomics.notify(head, 0);
}

// Starts the relay of an OAuth mount's callbacks (lib/oauth_relay.cjs) and
// answers its questions with the host's functions, on the JS thread; resolves
// to the callback pointers for the mount options. The relay ends itself after
// oauth_destroy. Until then it is unref'd: it never keeps the process alive.
function oauthRelay(oauth, timeoutMs) {
  return new Promise((resolve, reject) => {
    const relay = new Worker(path.join(__dirname, 'oauth_relay.cjs'), { workerData: { timeoutMs } });
    relay.unref();
    const text = (value, what) => {
      if (value === undefined || value === null || value === '') return null;
      if (typeof value !== 'string') throw new TypeError(`${what} must be a string`);
      return Buffer.from(value, 'utf8');
    };
    relay.on('message', (m) => {
      if (m.kind === 'ready') {
        resolve({
          authorize: oauth.authorize ? m.authorize : null,
          load: oauth.tokens ? m.load : null,
          save: oauth.tokens ? m.save : null,
          assertion: oauth.assertion ? m.assertion : null,
          destroy: m.destroy,
        });
      } else if (m.kind === 'authorize') {
        // A rejection, a throw or no URL refuses the authorization.
        new Promise((r) => r(oauth.authorize(m.url)))
          .then((redirect) => text(redirect, 'oauth.authorize: the redirect URL'))
          .then((bytes) => replyToRelay(m.shared, bytes), () => replyToRelay(m.shared, null));
      } else if (m.kind === 'assertion') {
        // As authorize: a rejection, a throw or no JWT refuses the grant.
        new Promise((r) => r(oauth.assertion(m.audience)))
          .then((jwt) => text(jwt, 'oauth.assertion: the JWT'))
          .then((bytes) => replyToRelay(m.shared, bytes), () => replyToRelay(m.shared, null));
      } else if (m.kind === 'load') {
        let bytes = null;
        try {
          bytes = text(oauth.tokens.load(), 'oauth.tokens.load()');
        } catch {
          bytes = null;
        }
        replyToRelay(m.shared, bytes);
      } else if (m.kind === 'save') {
        try {
          oauth.tokens.save(m.json);
        } catch {
          // a store that failed keeps what it had; the mount goes on
        }
        replyToRelay(m.shared, null);
      }
    });
    relay.once('error', reject);
  });
}

// Starts the relay of a mount's answerer (lib/input_relay.cjs) and answers
// its questions with the host's `input(tool, method, params)`, on the JS
// thread; resolves to the callback pointers. As the OAuth relay: ends itself
// after input_destroy, unref'd until then.
function inputRelay(input, timeoutMs) {
  return new Promise((resolve, reject) => {
    const relay = new Worker(path.join(__dirname, 'input_relay.cjs'), { workerData: { timeoutMs } });
    relay.unref();
    relay.on('message', (m) => {
      if (m.kind === 'ready') {
        resolve({ answer: m.answer, destroy: m.destroy });
      } else if (m.kind === 'input') {
        // undefined or null, a throw, a rejection or a value JSON cannot
        // carry: no answer (the call fails as a tool error saying so).
        new Promise((r) => r(input(m.tool, m.method, JSON.parse(m.params))))
          .then((value) => {
            if (value === undefined || value === null) return null;
            const text = JSON.stringify(value);
            return text === undefined ? null : Buffer.from(text, 'utf8');
          })
          .then((bytes) => replyToRelay(m.shared, bytes), () => replyToRelay(m.shared, null));
      }
    });
    relay.once('error', reject);
  });
}

/** The registry's tools served over MCP (streamable HTTP): `url`, then stop(). */
class McpServer {
  constructor(registry, ptr) {
    this._registry = registry;
    this._ptr = ptr;
    this.url = textOut((o, l) => api.mcp_server_url(ptr, o, l));
    this._stopped = null;
  }

  /**
   * Stops the server (calls in flight are cancelled, waited for up to
   * stopTimeoutMs) and frees it; capstan's stop blocks, so it runs on
   * libuv's pool while the tools finish on the loop.
   */
  stop() {
    if (this._stopped) return this._stopped;
    const registry = this._registry;
    this._stopped = asyncCall(api.mcp_server_stop, this._ptr).then(
      () => {
        api.mcp_server_free(this._ptr);
        this._ptr = null;
        registry._servers.delete(this);
      },
      (e) => {
        registry._servers.delete(this);
        throw e;
      },
    );
    return this._stopped;
  }
}

/** An MCP server's tools mounted in the registry: info(), then close(). */
class McpMount {
  constructor(registry, ptr) {
    this._registry = registry;
    this._ptr = ptr;
    this._closed = null;
  }

  /** { connected, tools: {local: remote}, problems, reconnects, gave_up, last_error }. */
  info() {
    if (this._ptr === null) throw new CapstanError({ status: 'CAPSTAN_ERR_STALE_HANDLE', status_code: 12, message: 'the mount is closed' });
    return JSON.parse(textOut((o, l) => api.mcp_mount_info_json(this._ptr, o, l)));
  }

  /** Unmounts: its tools are unregistered, a command it started is stopped. */
  close() {
    if (this._closed) return this._closed;
    const ptr = this._ptr;
    this._ptr = null;
    this._registry._mounts.delete(this);
    this._closed = asyncCall(api.mcp_mount_free, ptr).then(() => undefined);
    return this._closed;
  }
}

// --- registry -------------------------------------------------------------

/** Tools and the calls that run them. Close it with close() (or `using`). */
class Registry {
  constructor(options = {}) {
    let flags = 0;
    if (options.coerce) flags |= REGISTRY_COERCE;
    if (options.strictDefaults) flags |= REGISTRY_STRICT_DEFAULTS;
    if (options.strictKeywords) flags |= REGISTRY_STRICT_KEYWORDS;
    const out = [null];
    check(api.registry_new({ struct_size: native.sizes.RegistryOptions, flags }, out));
    this._ptr = out[0];
    // The JS thread becomes a main thread of the registry (it pumped): with
    // CAPSTAN_EXEC_START_INLINE a batch's main-thread calls then start right
    // inside capstan_batch_submit, on this thread, without a thread hop.
    api.registry_pump(this._ptr, 0);
    this._toolKeys = new Map(); // name -> key
    this._batches = new Set();
    this._streams = new Set();
    this._servers = new Set();
    this._mounts = new Set();
    this._holds = 0; // mounts connecting, stdio serving: the registry is freed after them
    this._turns = 0; // whole turns running on libuv's pool: the waker pumps for them
    this._closing = false;
    this._approver = null;
    this._approverKey = 0;
    this._eventHook = null;
    this._eventKey = 0;
    this._inflight = 0;
    this._armed = false;
    this._driveScheduled = false;
    this._wakeFd = null;
    this._pollfd = null;
  }

  _live() {
    if (this._ptr === null || this._closing) throw new CapstanError({ status: 'CAPSTAN_ERR_SHUTTING_DOWN', status_code: 19, message: 'registry is closed' });
    return this._ptr;
  }

  /**
   * Registers `fn` as tool `def.name` (replacing one of the same name).
   * `fn(args, ctx)` gets the validated arguments (defaults filled in) and
   * returns the result, or a Promise of it: a string is sent as text,
   * anything else as JSON; a throw or rejection is a tool error the model reads.
   */
  tool(def, fn) {
    if (typeof def === 'string') def = { name: def };
    if (typeof fn !== 'function') throw new TypeError('tool: fn must be a function');
    if (!def || typeof def.name !== 'string') throw new TypeError('tool: def.name must be a string');
    let flags = TOOL_MAIN_THREAD;
    if (def.requiresApproval) flags |= TOOL_REQUIRES_APPROVAL;
    if (def.serial) flags |= TOOL_SERIAL;
    if (def.waitForResponse) flags |= TOOL_WAIT_FOR_RESPONSE;
    if (def.deferred) flags |= TOOL_DEFERRED;
    const params = def.parameters === undefined ? null : typeof def.parameters === 'string' ? def.parameters : JSON.stringify(def.parameters);
    const meta = {};
    for (const field of ['title', 'annotations', 'outputSchema', 'icons']) {
      if (def[field] !== undefined && def[field] !== null) meta[field] = typeof def[field] === 'string' && field === 'outputSchema' ? JSON.parse(def[field]) : def[field];
    }
    const mcpMeta = Object.keys(meta).length ? JSON.stringify(meta) : null;
    const key = nextKey++;
    tools.set(key, { fn, registry: this, name: def.name, maxOutputChars: def.maxOutputChars ?? 0 });
    const status = api.registry_add_tool(this._live(), {
      struct_size: native.sizes.ToolDef,
      name: def.name,
      description: def.description ?? null,
      parameters: params,
      callback: toolCallback,
      user_data: key,
      destroy: null,
      timeout_ms: milliseconds(def.timeoutMs, 'timeoutMs'),
      max_output_chars: def.maxOutputChars ?? 0,
      flags,
      mcp_meta: mcpMeta,
    });
    if (status !== OK) {
      tools.delete(key);
      throw failure(status);
    }
    const old = this._toolKeys.get(def.name);
    if (old !== undefined) tools.delete(old);
    this._toolKeys.set(def.name, key);
    return this;
  }

  /** Removes a tool; its calls in flight finish. */
  removeTool(name) {
    const bytes = Buffer.from(name, 'utf8');
    check(api.registry_remove_tool(this._live(), bytes, bytes.length));
    const key = this._toolKeys.get(name);
    this._toolKeys.delete(name);
    if (key !== undefined) tools.delete(key);
  }

  /** The tools as `format`'s API takes them (parsed JSON). */
  tools(format = 'describe', options = {}) {
    return this.exportTools(format, options).tools;
  }

  /** The tools and capstan's report of what it dropped or could not make strict. */
  exportTools(format = 'describe', options = {}) {
    let flags = 0;
    if (options.strict) flags |= EXPORT_STRICT;
    if (options.geminiLower) flags |= EXPORT_GEMINI_LOWER;
    const out = [null];
    const len = [0];
    const rep = [null];
    const repLen = [0];
    check(api.registry_tools_json(this._live(), formatOf(format), { struct_size: native.sizes.ExportOptions, flags }, out, len, rep, repLen));
    const tools = JSON.parse(takeText(out[0], len[0]));
    const report = JSON.parse(takeText(rep[0], repLen[0]) || '[]');
    return { tools, report };
  }

  /**
   * The registered tools that best match `query`, best first, as
   * `{ name, description, score }` (capstan_registry_search_json). Words are
   * ranked by BM25 over names, descriptions and parameter names and
   * descriptions; with `regex: true` the query is a regular expression (Rust
   * syntax) over the same text, name matches first. Options: limit (1 to
   * 100, default 5), regex. A bad query, limit or pattern throws CapstanError
   * CAPSTAN_ERR_INVALID_ARGUMENT saying which.
   */
  search(query, options = {}) {
    if (typeof query !== 'string') throw new TypeError('search: query must be a string');
    const limit = options.limit ?? 5;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new RangeError(`search: limit must be 1 to 100, not ${limit}`);
    const q = Buffer.from(query, 'utf8');
    const opts = { struct_size: native.sizes.SearchOptions, flags: options.regex ? SEARCH_REGEX : 0, limit };
    return JSON.parse(textOut((o, l) => api.registry_search_json(this._live(), q, q.length, opts, o, l))).results;
  }

  /**
   * Registers capstan's search tool (replacing a tool of its name): the model
   * calls it with `{ query }` to find tools it was not shown; each deferred
   * tool (`deferred: true`) it lists is exported by tools() from then on, so
   * the model sees it on its next request. Options: name ("tool_search"),
   * description, limit (tools per search, 1 to 100, default 5), regex.
   */
  addSearchTool(options = {}) {
    const limit = options.limit ?? 0;
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError('addSearchTool: limit must be an integer from 1 to 100');
    check(
      api.registry_add_search_tool(this._live(), {
        struct_size: native.sizes.SearchToolOptions,
        flags: options.regex ? SEARCH_REGEX : 0,
        limit,
        name: options.name ?? null,
        description: options.description ?? null,
      }),
    );
    return this;
  }

  /** Forgets the tools the search tool loaded: deferred tools leave the exports again (a new conversation). */
  unloadTools() {
    check(api.registry_unload_tools(this._live()));
  }

  /** Calls, stats per tool (capstan_registry_stats_json). */
  stats() {
    return JSON.parse(textOut((o, l) => api.registry_stats_json(this._live(), o, l)));
  }

  /** Validates one call without running it: { outcome, arguments | content }. */
  checkCall(name, args = {}, options = {}) {
    const n = Buffer.from(name, 'utf8');
    const a = jsonBytes(args, 'arguments');
    const outcome = [0];
    const out = [null];
    const len = [0];
    check(api.registry_check_call(this._live(), n, n.length, a, a.length, options.strictNulls ? EXEC_STRICT_NULLS : 0, outcome, out, len));
    const text = takeText(out[0], len[0]);
    const o = OUTCOMES[outcome[0]];
    return o === 'ok' ? { outcome: o, arguments: JSON.parse(text) } : { outcome: o, content: text };
  }

  /**
   * Starts `calls` (normalized {id, name, arguments}, one or an array) and
   * returns a Batch at once. Options: parallel (default true), limit (calls
   * at once, default 8), timeoutMs, deadlineMs, strictNulls.
   */
  submit(calls, options = {}) {
    this._live();
    const list = (Array.isArray(calls) ? calls : [calls]).map(normalizedCall);
    execOptions(options); // checks the options before anything starts
    const batch = new Batch(this, list, options);
    if (!batch._done) this._batches.add(batch);
    this._scheduleDrive();
    return batch;
  }

  /** Runs `calls` and resolves with one result per call, in call order. */
  execute(calls, options = {}) {
    try {
      return this.submit(calls, options).results();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * One agent turn: reads the calls out of a provider response in `format`,
   * runs them, and resolves with `{ calls, results, messages }`, `messages`
   * being what to append to the conversation (capstan_format_write_results).
   * A provider error body rejects with ProviderError, and no call runs.
   *
   * `wholeTurn: true` (CAPSTAN_EXEC_WHOLE_TURN) resolves with `{ calls,
   * messages }`, `messages` being the whole turn as the next request needs
   * it: the model's own turn first (thinking blocks and their signatures,
   * reasoning items with encrypted_content, Gemini thought signatures,
   * unchanged), then the results; append it to the history as is.
   * capstan_registry_run_turn waits for the calls, so it runs on libuv's
   * pool while the tools run here on the event loop.
   */
  async runTurn(format, response, options = {}) {
    const calls = parseCalls(format, response);
    if (options.wholeTurn) return { calls, messages: await this._runWholeTurn(format, response, options) };
    const results = calls.length ? await this.execute(calls, options) : [];
    return { calls, results, messages: formatResults(format, results) };
  }

  /**
   * Serves the registry's tools over MCP (streamable HTTP) until stop().
   * Options: address ("127.0.0.1:0" by default: loopback, a port the OS
   * picks), bearerToken, allowedOrigins, allowedHosts, toolsMeta ({name:
   * {title, annotations, outputSchema}}), name, maxBodyBytes, callTimeoutMs,
   * stopTimeoutMs. Its calls run the JS tools on the event loop.
   */
  serve(options = {}) {
    const out = [null];
    check(api.mcp_server_start(this._live(), serverOptions(options), out));
    const server = new McpServer(this, out[0]);
    this._servers.add(server);
    this._scheduleDrive();
    return server;
  }

  /**
   * Serves the tools over MCP on this process's stdin/stdout; resolves when
   * stdin ends (or the registry is closed). Nothing else may write to stdout.
   */
  async serveStdio(options = {}) {
    const opts = serverOptions(options);
    const reg = this._live();
    this._holds++;
    this._servingStdio = (this._servingStdio ?? 0) + 1;
    this._scheduleDrive();
    try {
      const status = await asyncCall(api.mcp_server_serve_stdio, reg, opts);
      if (status !== OK) throw failureFromJson(status, null);
    } finally {
      this._servingStdio--;
      this._release();
    }
  }

  /**
   * Mounts an MCP server's tools: `command` (program and arguments, run on
   * stdio; env, cwd) or `url` (streamable HTTP; headers), plus prefix,
   * connectTimeoutMs, callTimeoutMs, maxReconnects, reconnectBackoffMs,
   * protocolVersion, and `oauth` for a server asking for OAuth 2.1:
   * `{ authorize, redirectUri, clientId, clientSecret, clientMetadataUrl,
   * scopes, tokens: { load, save }, clientKey, assertion, identityProvider,
   * clientIssuer }`
   * (`authorize(url)` returns or resolves to the redirect URL,
   * `assertion(audience)` to a JWT; run on the JS thread), and `input(tool, method,
   * params)` answering what the server asks while running a tool, for the
   * methods in `inputMethods` (default ['elicitation/create']): returns or
   * resolves to the method's result (undefined/null, a throw or a rejection:
   * no answer); run on the JS thread. Connecting runs on a worker
   * thread; resolves with the mount, or rejects (CapstanError
   * CAPSTAN_ERR_MCP_CONNECT saying why).
   */
  mount(options) {
    let opts;
    let reg;
    try {
      opts = mountOptions(options);
      reg = this._live();
    } catch (e) {
      return Promise.reject(e);
    }
    this._holds++;
    const oauth = options.oauth;
    const input = options.input;
    const relay = (oauth
      ? oauthRelay(oauth, opts.connect_timeout_ms || 10000).then((fns) => {
          opts.oauth_authorize = fns.authorize;
          opts.oauth_tokens_load = fns.load;
          opts.oauth_tokens_save = fns.save;
          opts.oauth_assertion = fns.assertion;
          opts.oauth_destroy = fns.destroy;
        })
      : Promise.resolve())
      .then(() => input
        ? inputRelay(input, opts.call_timeout_ms || 3600000).then((fns) => {
            opts.input_answer = fns.answer;
            opts.input_destroy = fns.destroy;
          })
        : undefined)
      .catch((e) => {
        this._release();
        throw e;
      });
    return relay.then(() => new Promise((resolve, reject) => {
      const worker = new Worker(path.join(__dirname, 'mount_worker.cjs'), { workerData: { registry: reg, options: opts } });
      let settled = false;
      worker.once('message', (m) => {
        settled = true;
        if (m.status !== OK) {
          reject(failureFromJson(m.status, m.error));
        } else {
          const mount = new McpMount(this, m.mount);
          this._mounts.add(mount);
          if (this._closing) mount.close().catch(() => {});
          resolve(mount);
        }
      });
      worker.once('error', (e) => {
        settled = true;
        reject(e);
      });
      worker.once('exit', (code) => {
        this._release();
        if (!settled) reject(new Error(`capstan: the mount worker exited with code ${code}`));
      });
    }));
  }

  _release() {
    this._holds--;
    this._streamEnded();
  }

  /**
   * Sets (null: removes) the approver of tools registered with
   * requiresApproval: `approver({ tool, id, arguments })` resolves to true
   * (run it), false, or `{ approve, reason }` (`reason` is what the model
   * reads when denied). It runs on the JS thread; a throw or rejection denies.
   * Without an approver such calls end `denied` (unless in approvedIds).
   */
  setApprover(approver) {
    const reg = this._live();
    if (approver !== null && typeof approver !== 'function') throw new TypeError('setApprover: a function or null');
    if (approver === null) {
      check(api.registry_set_approver(reg, null, 0, null));
      approvers.delete(this._approverKey);
      this._approver = null;
      return;
    }
    if (this._approver === null) {
      this._approverKey = nextKey++;
      approvers.set(this._approverKey, this);
      this._approver = approver;
      const status = api.registry_set_approver(reg, approverCallback, this._approverKey, null);
      if (status !== OK) {
        approvers.delete(this._approverKey);
        this._approver = null;
        throw failure(status);
      }
    } else {
      this._approver = approver;
    }
  }

  /**
   * Sets (null: removes) the event hook: `hook(event)` sees each call start
   * and end, time out or be cancelled, each progress report and each log
   * message, as `{ kind: 'started' | 'finished' | 'timed_out' | 'cancelled' |
   * 'progress' | 'log', tool, id, index, durationUs }` plus `outcome`
   * (finished), `progress`, `total`, `message` (progress) and `level`,
   * `message` (log). It runs on the JS thread, as a microtask
   * soon after the event; a throw is reported with process.emitWarning.
   */
  setEventHook(hook) {
    const reg = this._live();
    if (hook !== null && typeof hook !== 'function') throw new TypeError('setEventHook: a function or null');
    if (hook === null) {
      if (this._eventHook === null) return;
      check(api.registry_set_event_hook(reg, null, 0, null));
      eventHooks.delete(this._eventKey);
      this._eventHook = null;
      return;
    }
    if (this._eventHook === null) {
      this._eventKey = nextKey++;
      eventHooks.set(this._eventKey, this);
      this._eventHook = hook;
      const status = api.registry_set_event_hook(reg, eventCallback, this._eventKey, null);
      if (status !== OK) {
        eventHooks.delete(this._eventKey);
        this._eventHook = null;
        throw failure(status);
      }
    } else {
      this._eventHook = hook;
    }
  }

  /** Which of `calls` would wait for approval: [{ index, id, name }]. Runs nothing. */
  needsApproval(calls, options = {}) {
    const list = (Array.isArray(calls) ? calls : [calls]).map(normalizedCall);
    const bytes = Buffer.from(JSON.stringify(list), 'utf8');
    const opts = execOptions(options);
    return JSON.parse(textOut((o, l) => api.registry_needs_approval(this._live(), bytes, bytes.length, opts, o, l)));
  }

  /**
   * Starts reading a streamed response in `format` (openai_chat,
   * openai_responses, anthropic, gemini: the SSE body). Options: those of
   * submit, plus earlyDispatch (start each call once its arguments are
   * complete, before the body ends) and onText(delta).
   */
  stream(format, options = {}) {
    return new Stream(this, format, options);
  }

  /**
   * One streamed turn: feeds `body` (a fetch() Response, a ReadableStream,
   * an async iterable of chunks, text or bytes) to a stream with early
   * dispatch on by default, and resolves with what finish() gives. If
   * reading the body fails, the stream is cancelled and the error thrown.
   */
  async runStream(format, body, options = {}) {
    const stream = this.stream(format, { earlyDispatch: true, ...options });
    try {
      for await (const chunk of readChunks(bodyChunks(body))) stream.feed(chunk);
    } catch (e) {
      stream.cancel();
      await stream.finish().catch(() => {});
      throw e;
    }
    return stream.finish();
  }

  _runWholeTurn(format, response, options) {
    const fmt = formatOf(format);
    const bytes = jsonBytes(response, 'response');
    const opts = execOptions(options, EXEC_WHOLE_TURN);
    const reg = this._live();
    return new Promise((resolve, reject) => {
      const out = [null];
      const len = [0];
      this._holds++;
      this._turns++;
      finishing++;
      this._scheduleDrive();
      api.registry_run_turn.async(reg, fmt, bytes, bytes.length, opts, out, len, (err, status) => {
        finishing--;
        this._turns--;
        let text = null;
        if (!err && status === OK) text = takeText(out[0], len[0]);
        this._release();
        if (err) return reject(err);
        if (status !== OK) {
          // It ran on another thread: its message is that thread's.
          const name = api.status_name(status);
          return reject(new CapstanError({ status: name, status_code: status, message: `capstan_registry_run_turn: ${name}` }));
        }
        try {
          resolve(JSON.parse(text));
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  _streamEnded() {
    if (this._closing && this._streams.size === 0 && this._holds === 0 && this._ptr !== null) this._free();
  }

  _scheduleDrive() {
    if (this._driveScheduled || this._ptr === null) return;
    this._driveScheduled = true;
    setImmediate(() => this._drive());
  }

  // Runs queued main-thread calls, hands results over, and re-arms the waker
  // while any batch is pending.
  _drive() {
    this._driveScheduled = false;
    if (this._ptr === null) return;
    for (let i = 0; i < 64; i++) {
      if (Number(api.registry_pump(this._ptr, 2)) === 0) break;
    }
    for (const batch of [...this._batches]) batch._poll();
    if (this._batches.size || this._streams.size || this._turns || this._servers.size || this._servingStdio) this._arm();
  }

  _arm() {
    if (this._armed || this._ptr === null) return;
    this._armed = true;
    if (waker === null || finishing > 0) {
      setTimeout(() => {
        this._armed = false;
        this._drive();
      }, 2);
      return;
    }
    if (this._wakeFd === null) {
      const fd = [0];
      check(api.registry_wake_fd(this._ptr, fd));
      this._wakeFd = fd[0];
      this._pollfd = Buffer.alloc(8);
      this._pollfd.writeInt32LE(this._wakeFd, 0);
      this._pollfd.writeInt16LE(POLLIN, 4);
    }
    const pollfd = this._pollfd;
    waker.poll.async(pollfd, 1, WAKE_POLL_MS, () => {
      this._armed = false;
      if (this._ptr === null) return;
      // Reset the fd (non-blocking: an eventfd, or a pipe read until empty).
      const buf = Buffer.alloc(64);
      for (let i = 0; i < 16 && Number(waker.read(this._wakeFd, buf, buf.length)) > 0; i++);
      this._drive();
    });
  }

  /**
   * Closes the registry: calls not started end `cancelled`, pending batches
   * finish with their results, and the registry is freed. Live streams are
   * cancelled and finished first (the registry is freed once they are).
   */
  close() {
    if (this._ptr === null || this._closing) return;
    this._closing = true;
    for (const server of [...this._servers]) server.stop().catch(() => {});
    for (const mount of [...this._mounts]) mount.close().catch(() => {});
    if (this._streams.size || this._holds) {
      for (const stream of this._streams) {
        stream.cancel();
        stream.finish().catch(() => {});
      }
      this._scheduleDrive();
      return;
    }
    this._free();
  }

  _free() {
    const ptr = this._ptr;
    // Tools are main-thread tools, results are polled and no stream is
    // live: no callback of this registry runs on another thread but the
    // approver's, which waits for this thread (koffi): with an approver,
    // close does not wait (a late approver invocation then finds the
    // registry gone and denies).
    // The event hook is the same: a timeout's event on capstan's timer
    // thread waits for this thread.
    if (this._approver !== null || this._eventHook !== null) {
      if (this._approver !== null) api.registry_set_approver(ptr, null, 0, null);
      if (this._eventHook !== null) api.registry_set_event_hook(ptr, null, 0, null);
      this._approver = null;
      this._eventHook = null;
      api.registry_close(ptr, 0);
    } else {
      api.registry_close(ptr, 0xffffffff);
    }
    for (const batch of [...this._batches]) {
      batch._cancelled = true;
      batch._poll();
    }
    for (const key of this._toolKeys.values()) tools.delete(key);
    this._toolKeys.clear();
    this._ptr = null;
    api.registry_free(ptr);
    this._drainAfterFree();
  }

  // Batches still waiting for results after the free (a close that did not
  // wait) are polled on a timer until their last result.
  _drainAfterFree() {
    if (this._batches.size === 0) {
      approvers.delete(this._approverKey);
      eventHooks.delete(this._eventKey);
      return;
    }
    setTimeout(() => {
      for (const batch of [...this._batches]) batch._poll();
      this._drainAfterFree();
    }, 5);
  }

  [Symbol.dispose]() {
    this.close();
  }
}

// --- provider formats without a registry ---------------------------------------

/** The tool calls in a provider response, as normalized calls {id, name, arguments}. */
function parseCalls(format, response) {
  const fmt = formatOf(format);
  const bytes = jsonBytes(response, 'response');
  return JSON.parse(textOut((o, l) => api.format_parse_calls(fmt, bytes, bytes.length, o, l)));
}

/** Results (as execute returns them) as the messages/items `format` expects next. */
function formatResults(format, results) {
  const fmt = formatOf(format);
  const bytes = Buffer.from(JSON.stringify(results.map(normalizedResult)), 'utf8');
  return JSON.parse(textOut((o, l) => api.format_write_results(fmt, bytes, bytes.length, o, l)));
}

/**
 * Checks a conversation against the rules `format` (openai_chat,
 * openai_responses, anthropic, gemini) sets for tool calls and results:
 * calls without results, orphan and second results, repeated or illegal
 * ids, results out of order and, with geminiSignatures (Gemini 3), missing
 * thought signatures. With repair it also returns a history the provider
 * will take (same shape as given), each repair listed in the findings.
 * Resolves nothing: synchronous and pure. Throws CapstanError
 * CAPSTAN_ERR_INVALID_ARGUMENT for describe/mcp or a history of the wrong shape.
 */
function checkHistory(format, history, options = {}) {
  const fmt = formatOf(format);
  const bytes = jsonBytes(history, 'history');
  const flags = (options.repair ? HISTORY_REPAIR : 0) | (options.geminiSignatures ? HISTORY_GEMINI_SIGNATURES : 0);
  const rep = [null];
  const repLen = [0];
  const fixed = [null];
  const fixedLen = [0];
  check(api.format_check_history(fmt, bytes, bytes.length, flags, rep, repLen, fixed, fixedLen));
  const report = JSON.parse(takeText(rep[0], repLen[0]));
  const repaired = options.repair ? JSON.parse(takeText(fixed[0], fixedLen[0])) : null;
  return { ok: report.ok, findings: report.findings, repaired };
}

/**
 * capstan's own threads, process-wide. The binding's tools never run on
 * them (they run on the JS thread); the approver's and the stream sinks'
 * invocations, timeouts and MCP connections do.
 */
const runtime = Object.freeze({
  /**
   * Caps capstan's pool threads (`threads`, 0: 256) and how long an idle one
   * waits before it ends (`keepAliveMs`, 0: 10 s). No argument: the defaults.
   */
  configure(options = {}) {
    const threads = options.threads ?? 0;
    if (!Number.isInteger(threads) || threads < 0) throw new RangeError('runtime.configure: threads must be an integer >= 0');
    check(
      api.runtime_configure({
        struct_size: native.sizes.RuntimeOptions,
        threads: Math.min(threads, 0xffffffff),
        keep_alive_ms: milliseconds(options.keepAliveMs, 'keepAliveMs'),
      }),
    );
  },
  /**
   * Stops and joins every thread capstan started (pool, timer, MCP
   * connections) on libuv's pool, waiting up to `timeoutMs` (default: no
   * limit) for what still runs; cancels nothing. Resolves true when no
   * capstan thread is left, false on timeout. capstan starts its threads
   * again when next needed.
   */
  shutdown(timeoutMs) {
    const ms = timeoutMs === undefined ? 0xffffffff : timeoutMs === 0 ? 0 : milliseconds(timeoutMs, 'timeoutMs');
    return asyncCall(api.runtime_shutdown, ms).then((status) => {
      if (status === 13) return false; // CAPSTAN_ERR_TIMEOUT
      if (status !== OK) throw failureFromJson(status, null);
      return true;
    });
  },
});

const version = api.version_string();

module.exports = {
  Registry,
  Batch,
  Stream,
  McpServer,
  McpMount,
  CapstanError,
  ProviderError,
  SchemaError,
  InputRequired,
  parseCalls,
  formatResults,
  checkHistory,
  Image,
  File,
  runtime,
  FORMATS,
  version,
  libraryPath: native.libraryPath,
};
