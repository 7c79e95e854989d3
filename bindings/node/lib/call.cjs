'use strict';
// call.cjs: a tool call: running a JS tool on the JS thread and completing its call (result, input,
// progress, log).

const { koffi, api } = require('./native.cjs');
const { CONTENT_JSON, CONTENT_PARTS, CONTENT_TEXT, OK } = require('./constants.cjs');
const { CapstanError, InputRequired, check, failure } = require('./errors.cjs');
const { callText, parts, tools } = require('./keys.cjs');
const { partsOf } = require('./content.cjs');

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
      value = tool.call(JSON.parse(argsText), ctx);
    } catch (e) {
      completeCall(call, e, true);
      return;
    }
    if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
      tool.sync = false;
      const registry = tool.registry;
      registry._inflight++;
      Promise.resolve(value)
        .then(done, (e) => completeCall(call, e, true))
        .finally(() => {
          registry._inflight--;
          registry._scheduleDrive();
        });
    } else {
      if (tool.sync === undefined) tool.sync = true;
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


const toolCallback = koffi.register(toolTrampoline, koffi.pointer(koffi.proto('void capstan_node_tool_fn(uintptr_t user_data, void *call)')));

module.exports = { completeCall, askForInput, callInput, ERR_INVALID_ARGUMENT, ERR_ALREADY_COMPLETED, ERR_STALE_HANDLE, reportProgress, LOG_LEVELS, sendLog, toolTrampoline, toolCallback };
