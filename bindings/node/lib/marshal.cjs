'use strict';
// marshal.cjs: what crosses into capstan and back: formats, calls, options and results as the C
// functions take and give them.

const native = require('./native.cjs');
const { koffi } = native;
const { EXEC_SEQUENTIAL, EXEC_STRICT_NULLS, FORMATS, OUTCOMES } = require('./constants.cjs');

// --- inputs ---------------------------------------------------------------

function formatOf(format) {
  const f = FORMATS[format];
  if (f === undefined) {
    // A TypeError carrying the status every binding gives (tests/fixtures/binding_behaviour.json).
    const e = new TypeError(`unknown format ${JSON.stringify(format)}; expected one of: ${Object.keys(FORMATS).join(', ')}`);
    e.status = 'CAPSTAN_ERR_INVALID_ARGUMENT';
    e.statusCode = 2;
    throw e;
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
  // No name: the core reads the call as sent and throws, naming the shape it
  // looks like (a provider's call: "pass it to run_turn"), as in every binding.
  if (call.name === undefined) require('./formats.cjs').parseCalls('describe', [call]);
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
  const runId = opts.runId ?? null;
  if (runId !== null && (typeof runId !== 'string' || runId.length === 0 || runId.includes('\0'))) {
    throw new TypeError('runId must be a non-empty string without NUL (the run the calls belong to, for the journal)');
  }
  return {
    struct_size: native.sizes.ExecOptions,
    flags,
    limit: Math.min(limit, 0xffffffff),
    timeout_ms: milliseconds(opts.timeoutMs, 'timeoutMs'),
    approved_ids: approved.length ? approved : null,
    approved_count: approved.length,
    deadline_ms: milliseconds(opts.deadlineMs, 'deadlineMs'),
    run_id: runId,
    run_id_len: runId === null ? 0 : Buffer.byteLength(runId, 'utf8'),
  };
}

// capstan_exec_options as a host batch takes them (lib/host.cjs), checked
// as execOptions checks them: null for the defaults, else the struct
// encoded once per (flags, limit) into a Buffer kept for every later batch
// (koffi passes a Buffer as the pointer; encoding the struct on every call
// costs more than the rest of a lone call's crossing). Options holding
// pointers (approved ids, a run id) are passed as the struct itself. The
// host path takes no timeout or deadline: they are checked, and are 0 here.
const encoded = new Map();
function hostOptions(opts) {
  if ((opts.approvedIds != null && opts.approvedIds.length !== 0) || opts.runId != null) return execOptions(opts);
  let flags = 0;
  if (opts.parallel === false) flags |= EXEC_SEQUENTIAL;
  if (opts.strictNulls) flags |= EXEC_STRICT_NULLS;
  const limit = opts.limit ?? 0;
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError('limit must be an integer >= 0');
  milliseconds(opts.timeoutMs, 'timeoutMs');
  milliseconds(opts.deadlineMs, 'deadlineMs');
  if (opts.approvedIds != null) execOptions(opts); // [] passes; anything else throws as execOptions says
  if (flags === 0 && limit === 0) return null;
  const capped = Math.min(limit, 0xffffffff);
  const key = capped * 8 + flags;
  let buf = encoded.get(key);
  if (buf === undefined) {
    if (encoded.size >= 64) encoded.clear();
    buf = Buffer.alloc(native.sizes.ExecOptions);
    koffi.encode(buf, native.ExecOptions, {
      struct_size: native.sizes.ExecOptions,
      flags,
      limit: capped,
      timeout_ms: 0,
      approved_ids: null,
      approved_count: 0,
      deadline_ms: 0,
      run_id: null,
      run_id_len: 0,
    });
    encoded.set(key, buf);
  }
  return buf;
}

// --- results --------------------------------------------------------------

function toResult(r) {
  const s = (p, n) => (n > 0 ? koffi.decode.string(p, Number(n)) : '');
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


function asyncCall(fn, ...args) {
  return new Promise((resolve, reject) => fn.async(...args, (err, value) => (err ? reject(err) : resolve(value))));
}

module.exports = { formatOf, jsonBytes, normalizedCall, milliseconds, execOptions, hostOptions, toResult, normalizedResult, asyncCall };
