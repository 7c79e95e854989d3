'use strict';
// constants.cjs: flags, formats and statuses: capstan.h's constants as this binding uses them.


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
const TOOL_HOST_RUN = 1 << 5;
const TOOL_IDEMPOTENT = 1 << 7;
const JOURNAL_REPLAY = 1;
const JOURNAL_FULL_SYNC = 1;
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

module.exports = { FORMATS, OUTCOMES, TOOL_REQUIRES_APPROVAL, TOOL_SERIAL, TOOL_MAIN_THREAD, TOOL_WAIT_FOR_RESPONSE, TOOL_DEFERRED, TOOL_HOST_RUN, TOOL_IDEMPOTENT, JOURNAL_REPLAY, JOURNAL_FULL_SYNC, EXEC_SEQUENTIAL, EXEC_DELIVER_POLL, EXEC_STRICT_NULLS, EXEC_START_INLINE, EXEC_EARLY_DISPATCH, EXEC_WHOLE_TURN, REGISTRY_COERCE, REGISTRY_STRICT_DEFAULTS, REGISTRY_STRICT_KEYWORDS, EXPORT_STRICT, EXPORT_GEMINI_LOWER, CONTENT_TEXT, CONTENT_JSON, CONTENT_PARTS, HISTORY_REPAIR, HISTORY_GEMINI_SIGNATURES, SEARCH_REGEX, OK, ERR_PROVIDER_ERROR, ERR_INVALID_SCHEMA, STREAM_FORMATS };
