'use strict';
// formats.cjs: provider formats without a registry: parse calls, format results, check a history.

const { api } = require('./native.cjs');
const { HISTORY_GEMINI_SIGNATURES, HISTORY_REPAIR } = require('./constants.cjs');
const { check, takeText, textOut } = require('./errors.cjs');
const { formatOf, jsonBytes, normalizedResult } = require('./marshal.cjs');

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

module.exports = { parseCalls, formatResults, checkHistory };
