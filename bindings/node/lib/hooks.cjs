'use strict';
// hooks.cjs: the registry's hooks: the approver and the event hook, as capstan calls them.

const native = require('./native.cjs');
const { koffi, api } = native;
const { OUTCOMES } = require('./constants.cjs');
const { approvers, eventHooks } = require('./keys.cjs');
const { LOG_LEVELS } = require('./call.cjs');

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
      return p === null ? null : Number(len[0]) > 0 ? koffi.decode.string(p, Number(len[0])) : '';
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

const EVENT_KINDS = ['started', 'finished', 'timed_out', 'cancelled', 'progress', 'log', 'replayed'];

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
    const s = (p, n) => (p !== null && Number(n) > 0 ? koffi.decode.string(p, Number(n)) : '');
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

const approverCallback = koffi.register(approverTrampoline, koffi.pointer(native.ApproverFn));
const eventCallback = koffi.register(eventTrampoline, koffi.pointer(native.EventFn));

module.exports = { approverTrampoline, EVENT_KINDS, eventTrampoline, approverCallback, eventCallback };
