'use strict';
// errors.cjs: errors: CapstanError and its kinds, and reading the last error after a failing call.

const { koffi, api } = require('./native.cjs');
const { ERR_INVALID_SCHEMA, ERR_PROVIDER_ERROR, OK } = require('./constants.cjs');

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

// The methods a tool may ask an MCP client for (capstan_call_require_input).
const INPUT_METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'];

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
    // Checked here, not only when capstan sends them: a quick tool has no call
    // to send them through, and its author learns of a typo either way.
    for (const [key, r] of Object.entries(requests)) {
      const method = r !== null && typeof r === 'object' ? r.method : undefined;
      if (!INPUT_METHODS.includes(method)) {
        throw new TypeError(`InputRequired: requests.${key}: method ${JSON.stringify(method) ?? String(method)} must be one of ${INPUT_METHODS.join(', ')}`);
      }
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
    return len > 0 ? koffi.decode.string(ptr, Number(len)) : '';
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

module.exports = { CapstanError, ProviderError, SchemaError, InputRequired, takeText, failure, failureFromJson, check, textOut };
