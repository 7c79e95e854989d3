'use strict';
// Loads libcapstan with koffi and declares the C functions the binding uses
// (include/capstan.h, ABI 0.4). Text out (char **out) is declared as
// `void **`: koffi hands back the address, which is decoded with its byte
// length and then freed with capstan_string_free.

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');

const ABI_MAJOR = 0;
const ABI_MINOR = 4;

function libraryFileName() {
  if (process.platform === 'win32') return 'capstan.dll';
  if (process.platform === 'darwin') return 'libcapstan.dylib';
  return 'libcapstan.so';
}

// Where the library is looked for, in order (README "Finding the library"):
//   1. CAPSTAN_LIB: a path to the library file (nothing else is tried);
//   1b. the installed package of this platform (@capstan-rt/linux-x64...: lib/platform.cjs);
//   2. the repository's own build, target/release then target/debug, when
//      this package sits in a capstan checkout (bindings/node);
//   3. the system loader's search (LD_LIBRARY_PATH, ldconfig cache, /usr/lib,
//      /usr/local/lib after `make install`; DYLD paths on macOS, PATH on
//      Windows) by its bare file name.
function candidates() {
  const env = process.env.CAPSTAN_LIB;
  if (env) return [env];
  const name = libraryFileName();
  const bundled = require('./platform.cjs').platformLibrary(name).file; // a release's @capstan-rt/<platform>
  const repo = path.resolve(__dirname, '..', '..', '..');
  const found = bundled ? [bundled] : [];
  if (fs.existsSync(path.join(repo, 'include', 'capstan.h'))) {
    for (const profile of ['release', 'debug']) {
      const p = path.join(repo, 'target', profile, name);
      if (fs.existsSync(p)) found.push(p);
    }
  }
  if (process.platform !== 'win32') {
    for (const dir of ['/usr/local/lib', '/usr/lib']) {
      const p = path.join(dir, name);
      if (fs.existsSync(p)) found.push(p);
    }
  }
  found.push(name);
  return found;
}

function load() {
  const tried = [];
  for (const p of candidates()) {
    try {
      return { lib: koffi.load(p), path: p };
    } catch (e) {
      tried.push(`${p}: ${e.message}`);
    }
  }
  throw new Error(
    'capstan: cannot load libcapstan (set CAPSTAN_LIB to its path, or build it with `make lib`); tried:\n  ' +
      tried.join('\n  ') + '\n' + require('./platform.cjs').missingHint(require('./platform.cjs').platformLibrary(libraryFileName())),
  );
}

const { lib, path: libraryPath } = load();

const f = (sig) => lib.func(sig);

// Opaque handles are plain pointers for koffi.
const api = {
  status_name: f('const char *capstan_status_name(int32_t status)'),
  error_json: f('int32_t capstan_error_json(_Out_ void **out, _Out_ size_t *out_len)'),
  error_message: f('size_t capstan_error_message(_Out_ uint8_t *buf, size_t cap)'),
  string_free: f('void capstan_string_free(void *ptr)'),
  version_string: f('const char *capstan_version_string(void)'),
  version_number: f('uint32_t capstan_version_number(void)'),
  features_mask: f('uint32_t capstan_features_mask(void)'),

  format_parse_calls: f(
    'int32_t capstan_format_parse_calls(uint32_t fmt, const uint8_t *r, size_t len, _Out_ void **out, _Out_ size_t *out_len)',
  ),
  format_write_results: f(
    'int32_t capstan_format_write_results(uint32_t fmt, const uint8_t *r, size_t len, _Out_ void **out, _Out_ size_t *out_len)',
  ),

  registry_free: f('void capstan_registry_free(void *reg)'),
  registry_close: f('int32_t capstan_registry_close(void *reg, uint32_t timeout_ms)'),
  registry_remove_tool: f('int32_t capstan_registry_remove_tool(void *reg, const char *name, size_t len)'),
  registry_names_json: f('int32_t capstan_registry_names_json(void *reg, _Out_ void **out, _Out_ size_t *out_len)'),
  registry_stats_json: f('int32_t capstan_registry_stats_json(void *reg, _Out_ void **out, _Out_ size_t *out_len)'),
  registry_check_call: f(
    'int32_t capstan_registry_check_call(void *reg, const uint8_t *name, size_t name_len, const uint8_t *args, size_t args_len, uint32_t flags, _Out_ uint32_t *outcome, _Out_ void **out, _Out_ size_t *out_len)',
  ),
  registry_pump: f('size_t capstan_registry_pump(void *reg, uint32_t budget_ms)'),
  registry_wake_fd: f('int32_t capstan_registry_wake_fd(void *reg, _Out_ int32_t *out)'),

  call_arguments: f('void *capstan_call_arguments(void *call, _Out_ size_t *len)'),
  call_id: f('void *capstan_call_id(void *call, _Out_ size_t *len)'),
  call_tool: f('void *capstan_call_tool(void *call, _Out_ size_t *len)'),
  call_cancelled: f('bool capstan_call_cancelled(void *call)'),
  call_return: f('int32_t capstan_call_return(void *call, uint32_t kind, const uint8_t *content, size_t len)'),
  call_fail: f('int32_t capstan_call_fail(void *call, const uint8_t *message, size_t len)'),
  call_progress: f('int32_t capstan_call_progress(void *call, double progress, double total, const uint8_t *message, size_t len)'),
  call_log: f('int32_t capstan_call_log(void *call, uint32_t level, const uint8_t *message, size_t len)'),
  call_input: f('void *capstan_call_input(void *call, _Out_ size_t *len)'),
  call_require_input: f(
    'int32_t capstan_call_require_input(void *call, const uint8_t *requests, size_t len, const uint8_t *state, size_t state_len)',
  ),

  batch_cancel: f('void capstan_batch_cancel(void *batch)'),
  batch_free: f('void capstan_batch_free(void *batch)'),
};

// Structs, laid out as include/capstan.h declares them.
const ToolDef = koffi.struct('capstan_tool_def', {
  struct_size: 'uint32_t',
  name: 'const char *',
  description: 'const char *',
  parameters: 'const char *',
  callback: 'void *',
  user_data: 'void *',
  destroy: 'void *',
  timeout_ms: 'uint32_t',
  max_output_chars: 'uint32_t',
  flags: 'uint32_t',
  mcp_meta: 'const char *',
});
const ExecOptions = koffi.struct('capstan_exec_options', {
  struct_size: 'uint32_t',
  flags: 'uint32_t',
  limit: 'uint32_t',
  timeout_ms: 'uint32_t',
  approved_ids: 'const char **',
  approved_count: 'size_t',
  deadline_ms: 'uint32_t',
  // The journal's run id (issue #47); NULL: no journal.
  run_id: 'const char *',
  run_id_len: 'size_t',
});
const RegistryOptions = koffi.struct('capstan_registry_options', { struct_size: 'uint32_t', flags: 'uint32_t' });
const ExportOptions = koffi.struct('capstan_export_options', { struct_size: 'uint32_t', flags: 'uint32_t' });
const Result = koffi.struct('capstan_result', {
  index: 'size_t',
  id: 'void *',
  id_len: 'size_t',
  name: 'void *',
  name_len: 'size_t',
  content: 'void *',
  content_len: 'size_t',
  outcome: 'uint32_t',
  is_error: 'bool',
  duration_us: 'uint64_t',
  parts_json: 'void *',
  parts_json_len: 'size_t',
  structured_json: 'void *',
  structured_json_len: 'size_t',
});

const ToolFn = koffi.proto('void capstan_tool_fn(void *user_data, void *call)');
const ResultFn = koffi.proto('void capstan_result_fn(void *user_data, capstan_result *result)');

api.registry_add_tool = f('int32_t capstan_registry_add_tool(void *reg, const capstan_tool_def *def)');
api.registry_new = f('int32_t capstan_registry_new(const capstan_registry_options *opts, _Out_ void **out)');
api.registry_tools_json = f(
  'int32_t capstan_registry_tools_json(void *reg, uint32_t fmt, const capstan_export_options *opts, _Out_ void **out, _Out_ size_t *out_len, _Out_ void **report, _Out_ size_t *report_len)',
);
api.registry_needs_approval = f(
  'int32_t capstan_registry_needs_approval(void *reg, const uint8_t *calls, size_t len, const capstan_exec_options *opts, _Out_ void **out, _Out_ size_t *out_len)',
);
api.batch_submit = f(
  'int32_t capstan_batch_submit(void *reg, const uint8_t *calls, size_t len, const capstan_exec_options *opts, capstan_result_fn *on_result, void *user_data, _Out_ void **out)',
);
api.batch_poll = f('size_t capstan_batch_poll(void *batch, capstan_result_fn *on_result, void *user_data, size_t max)');

// Host batches (section 11): the quick tools' path (lib/host.cjs). Text in
// is a JS string (koffi passes it NUL-terminated, len CAPSTAN_NTS). The
// handle and the lent text come back through a typed array of pointer-sized
// integers (uintptr_t: the handle, the text's address and length), not
// koffi's _Out_ arrays, which cost more than the crossing (BENCHMARKS.md).
api.host_batch_begin = f(
  'int32_t capstan_host_batch_begin(void *reg, const char *calls, size_t len, const capstan_exec_options *opts, uintptr_t *out, uintptr_t *calls_out, uintptr_t *calls_len)',
);
api.host_batch_finish = f(
  'int32_t capstan_host_batch_finish(uintptr_t batch, const char *answers, size_t len, uint32_t timeout_ms, uintptr_t *results, uintptr_t *results_len)',
);
api.host_batch_cancel = f('void capstan_host_batch_cancel(uintptr_t batch)');
api.host_batch_free = f('void capstan_host_batch_free(uintptr_t batch)');

// Journals (section 15).
api.journal_open_jsonl = f('int32_t capstan_journal_open_jsonl(const uint8_t *path, size_t len, _Out_ void **out)');
api.journal_open_sqlite = f('int32_t capstan_journal_open_sqlite(const uint8_t *path, size_t len, uint32_t flags, _Out_ void **out)');
api.journal_free = f('void capstan_journal_free(void *journal)');
api.registry_set_journal = f('int32_t capstan_registry_set_journal(void *reg, void *journal, uint32_t flags)');
// A host's own store (Journal.custom): the callbacks take the binding's key
// as uintptr_t user data; the strings they get are not NUL-terminated.
const JournalRecordFn = koffi.proto('int32_t capstan_node_journal_record_fn(uintptr_t user_data, void *json, size_t len)');
const JournalLookupFn = koffi.proto(
  'int32_t capstan_node_journal_lookup_fn(uintptr_t user_data, void *run, size_t run_len, void *call, size_t call_len, void *answer)',
);
const DestroyFn = koffi.proto('void capstan_node_destroy_fn(uintptr_t user_data)');
const JournalCallbacks = koffi.struct('capstan_journal_callbacks', {
  struct_size: 'uint32_t',
  record: koffi.pointer(JournalRecordFn),
  lookup: koffi.pointer(JournalLookupFn),
  user_data: 'uintptr_t',
  destroy: koffi.pointer(DestroyFn),
});
api.journal_new = f('int32_t capstan_journal_new(const capstan_journal_callbacks *cbs, _Out_ void **out)');
api.journal_answer_set = f('int32_t capstan_journal_answer_set(void *answer, const uint8_t *json, size_t len)');

// Streams (section 14). The sink's callbacks are declared with uintptr_t
// user data (a key of the binding's, the same size as a pointer).
const TextFn = koffi.proto('void capstan_node_text_fn(uintptr_t user_data, void *text, size_t len)');
const SinkResultFn = koffi.proto('void capstan_node_sink_result_fn(uintptr_t user_data, void *result)');
const StreamSink = koffi.struct('capstan_stream_sink', {
  struct_size: 'uint32_t',
  on_text: koffi.pointer(TextFn),
  on_result: koffi.pointer(SinkResultFn),
  user_data: 'uintptr_t',
});
// Approvals (section 12).
const ApproverFn = koffi.proto('void capstan_node_approver_fn(uintptr_t user_data, void *approval)');
api.registry_set_approver = f('int32_t capstan_registry_set_approver(void *reg, capstan_node_approver_fn *approver, uintptr_t user_data, void *destroy)');
api.approval_tool = f('void *capstan_approval_tool(void *approval, _Out_ size_t *len)');
api.approval_id = f('void *capstan_approval_id(void *approval, _Out_ size_t *len)');
api.approval_arguments = f('void *capstan_approval_arguments(void *approval, _Out_ size_t *len)');
api.approval_decide = f('int32_t capstan_approval_decide(void *approval, bool approve, const uint8_t *reason, size_t len)');

// Events (section 13). Borrowed for the hook's invocation; strings are not
// NUL-terminated (pointer and length).
const Event = koffi.struct('capstan_event', {
  kind: 'uint32_t',
  tool: 'void *',
  tool_len: 'size_t',
  id: 'void *',
  id_len: 'size_t',
  index: 'size_t',
  outcome: 'uint32_t',
  duration_us: 'uint64_t',
  progress: 'double',
  total: 'double',
  message: 'void *',
  message_len: 'size_t',
  level: 'uint32_t', // appended with CAPSTAN_EVENT_LOG
});
const EventFn = koffi.proto('void capstan_node_event_fn(uintptr_t user_data, void *event)');
api.registry_set_event_hook = f('int32_t capstan_registry_set_event_hook(void *reg, capstan_node_event_fn *hook, uintptr_t user_data, void *destroy)');

// MCP (sections 15 and 16).
const McpServerOptions = koffi.struct('capstan_mcp_server_options', {
  struct_size: 'uint32_t',
  flags: 'uint32_t',
  address: 'const char *',
  bearer_token: 'const char *',
  allowed_origins: 'const char *',
  allowed_hosts: 'const char *',
  tools_meta: 'const char *',
  name: 'const char *',
  max_body_bytes: 'uint32_t',
  call_timeout_ms: 'uint32_t',
  stop_timeout_ms: 'uint32_t',
});
const McpMountOptions = koffi.struct('capstan_mcp_mount_options', {
  struct_size: 'uint32_t',
  argv: 'const char **',
  argc: 'size_t',
  env: 'const char **',
  env_count: 'size_t',
  cwd: 'const char *',
  url: 'const char *',
  headers: 'const char **',
  header_count: 'size_t',
  prefix: 'const char *',
  connect_timeout_ms: 'uint32_t',
  call_timeout_ms: 'uint32_t',
  max_reconnects: 'uint32_t',
  reconnect_backoff_ms: 'uint32_t',
  protocol_version: 'const char *',
  // OAuth: the callbacks are registered on a worker (lib/oauth_relay.cjs),
  // their addresses passed as pointers.
  oauth_authorize: 'void *',
  oauth_redirect_uri: 'const char *',
  oauth_client_id: 'const char *',
  oauth_client_secret: 'const char *',
  oauth_client_metadata_url: 'const char *',
  oauth_scopes: 'const char *',
  oauth_tokens_load: 'void *',
  oauth_tokens_save: 'void *',
  oauth_user_data: 'void *',
  oauth_destroy: 'void *',
  // The host's answers to a server's input requests: the callbacks are
  // registered on a worker (lib/input_relay.cjs), as OAuth's are.
  input_answer: 'void *',
  input_methods: 'uint32_t',
  input_user_data: 'void *',
  input_destroy: 'void *',
  // Grants without a user: the assertion callback is registered on the OAuth
  // relay's worker, as authorize is.
  oauth_client_key: 'const char *',
  oauth_assertion: 'void *',
  oauth_idp_issuer: 'const char *',
  oauth_idp_token_endpoint: 'const char *',
  oauth_idp_client_id: 'const char *',
  oauth_idp_client_secret: 'const char *',
  // The issuer the client's secret or key are pinned to.
  oauth_client_issuer: 'const char *',
});
api.mcp_server_serve_stdio = f('int32_t capstan_mcp_server_serve_stdio(void *reg, const capstan_mcp_server_options *opts)');
api.mcp_server_start = f('int32_t capstan_mcp_server_start(void *reg, const capstan_mcp_server_options *opts, _Out_ void **out)');
api.mcp_server_url = f('int32_t capstan_mcp_server_url(void *server, _Out_ void **out, _Out_ size_t *out_len)');
api.mcp_server_stop = f('int32_t capstan_mcp_server_stop(void *server)');
api.mcp_server_free = f('void capstan_mcp_server_free(void *server)');
api.mcp_mount_new = f('int32_t capstan_mcp_mount_new(void *reg, const capstan_mcp_mount_options *opts, _Out_ void **out)');
api.mcp_mount_free = f('int32_t capstan_mcp_mount_free(void *mount)');
api.mcp_mount_info_json = f('int32_t capstan_mcp_mount_info_json(void *mount, _Out_ void **out, _Out_ size_t *out_len)');

// Runtime (section 4).
const RuntimeOptions = koffi.struct('capstan_runtime_options', { struct_size: 'uint32_t', threads: 'uint32_t', keep_alive_ms: 'uint32_t' });
api.runtime_configure = f('int32_t capstan_runtime_configure(const capstan_runtime_options *opts)');
api.runtime_shutdown = f('int32_t capstan_runtime_shutdown(uint32_t timeout_ms)');

// History check (section 5) and tool search (section 7).
const SearchOptions = koffi.struct('capstan_search_options', { struct_size: 'uint32_t', flags: 'uint32_t', limit: 'uint32_t' });
const SearchToolOptions = koffi.struct('capstan_search_tool_options', {
  struct_size: 'uint32_t',
  flags: 'uint32_t',
  limit: 'uint32_t',
  name: 'const char *',
  description: 'const char *',
});
api.format_check_history = f(
  'int32_t capstan_format_check_history(uint32_t fmt, const uint8_t *h, size_t len, uint32_t flags, _Out_ void **report, _Out_ size_t *report_len, _Out_ void **repaired, _Out_ size_t *repaired_len)',
);
api.registry_search_json = f(
  'int32_t capstan_registry_search_json(void *reg, const uint8_t *q, size_t len, const capstan_search_options *opts, _Out_ void **out, _Out_ size_t *out_len)',
);
api.registry_add_search_tool = f('int32_t capstan_registry_add_search_tool(void *reg, const capstan_search_tool_options *opts)');
api.registry_unload_tools = f('int32_t capstan_registry_unload_tools(void *reg)');

api.registry_run_turn = f(
  'int32_t capstan_registry_run_turn(void *reg, uint32_t fmt, const uint8_t *response, size_t len, const capstan_exec_options *opts, _Out_ void **out, _Out_ size_t *out_len)',
);
api.stream_new = f('int32_t capstan_stream_new(void *reg, uint32_t fmt, const capstan_exec_options *opts, const capstan_stream_sink *sink, _Out_ void **out)');
api.stream_feed = f('int32_t capstan_stream_feed(void *stream, const uint8_t *bytes, size_t len)');
api.stream_finish = f('int32_t capstan_stream_finish(void *stream, _Out_ void **out, _Out_ size_t *out_len)');
api.stream_cancel = f('void capstan_stream_cancel(void *stream)');
api.stream_free = f('void capstan_stream_free(void *stream)');

const version = api.version_number();
// Before 1.0 a minor version may change the ABI: the minor must match.
if (Math.floor(version / 1000000) !== ABI_MAJOR || Math.floor(version / 1000) % 1000 !== ABI_MINOR) {
  throw new Error(
    `capstan: ${libraryPath} is version ${api.version_string()}, this binding needs ${ABI_MAJOR}.${ABI_MINOR}.x`,
  );
}

module.exports = {
  koffi,
  api,
  libraryPath,
  ToolDef,
  ExecOptions,
  RegistryOptions,
  ExportOptions,
  Result,
  ToolFn,
  ResultFn,
  TextFn,
  SinkResultFn,
  ApproverFn,
  Event,
  EventFn,
  StreamSink,
  McpServerOptions,
  McpMountOptions,
  SearchOptions,
  SearchToolOptions,
  RuntimeOptions,
  JournalRecordFn,
  JournalLookupFn,
  DestroyFn,
  sizes: {
    JournalCallbacks: koffi.sizeof(JournalCallbacks),
    RuntimeOptions: koffi.sizeof(RuntimeOptions),
    SearchOptions: koffi.sizeof(SearchOptions),
    SearchToolOptions: koffi.sizeof(SearchToolOptions),
    McpServerOptions: koffi.sizeof(McpServerOptions),
    McpMountOptions: koffi.sizeof(McpMountOptions),
    StreamSink: koffi.sizeof(StreamSink),
    ToolDef: koffi.sizeof(ToolDef),
    ExecOptions: koffi.sizeof(ExecOptions),
    RegistryOptions: koffi.sizeof(RegistryOptions),
    ExportOptions: koffi.sizeof(ExportOptions),
  },
};
