// Types of the capstan Node.js binding (hand-written; lib/ is the code, lib/index.cjs its exports).

/** Provider wire formats; `describe` is capstan's own normalized form. */
export type Format = 'describe' | 'openai' | 'openai_chat' | 'openai_responses' | 'anthropic' | 'gemini' | 'mcp';

export const FORMATS: Readonly<Record<Format, number>>;

/** The library's version, e.g. "0.4.0". */
export const version: string;
/** The path libcapstan was loaded from (CAPSTAN_LIB, the repository's target/, or the loader's search). */
export const libraryPath: string;

/** A JSON Schema (an object schema at the root for tool parameters). */
export type JsonSchema = Record<string, unknown> | boolean;

/** A tool call in capstan's normalized form. `arguments` may be an object or JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments?: Record<string, unknown> | string;
}

export type Outcome = 'ok' | 'tool_error' | 'invalid_arguments' | 'unknown_tool' | 'timeout' | 'cancelled' | 'denied';

/** One call's result. `content` is the text the model reads. */
export interface ToolResult {
  /** Position of the call in its batch. */
  index: number;
  id: string;
  name: string;
  content: string;
  isError: boolean;
  outcome: Outcome;
  durationUs: number;
  /**
   * The content blocks (MCP content) the tool returned with Image/File
   * values, as capstan checked them; absent for text and JSON results.
   * runTurn and formatResults send them to the provider.
   */
  parts?: ContentBlock[];
  /** Structured content given with the parts. */
  structuredContent?: Record<string, unknown>;
}

/** An MCP content block (`{"type":"text"|"image"|"audio"|"resource"|"resource_link", ...}`). */
export type ContentBlock = { type: string } & Record<string, unknown>;

/** An image a tool returns (alone or in an array with text): PNG, JPEG, GIF, WebP reach every provider. */
export class Image {
  constructor(data: Uint8Array | ArrayBuffer, mime?: string);
  readonly mime: string;
  part(): ContentBlock;
}

/** A file a tool returns: audio/... as an audio part, anything else as an embedded resource (PDF: a document). */
export class File {
  constructor(data: Uint8Array | ArrayBuffer, mime: string, name?: string);
  readonly mime: string;
  readonly name: string;
  part(): ContentBlock;
}

/** What a tool function gets besides its arguments. */
export interface ToolContext {
  /** The call's id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** True once the call should stop (timeout, batch cancelled, registry closed). */
  cancelled(): boolean;
  /**
   * Reports progress (capstan_call_progress): `progress` so far out of
   * `total` (0 or absent: unknown), with an optional message. It reaches the
   * event hook (kind 'progress') and an MCP client that asked for progress.
   * `progress` must grow with every report. Returns false once the call has
   * its result; throws CapstanError CAPSTAN_ERR_INVALID_ARGUMENT for a value
   * that is not finite, negative or not above the previous one.
   */
  progress(progress: number, total?: number, message?: string): boolean;
  /**
   * Sends a log message (capstan_call_log) at `level`, one of MCP's names.
   * It reaches the event hook (kind 'log') and an MCP client that asked for
   * logs at or below `level` (notifications/message). Returns false once the
   * call has its result; throws CapstanError CAPSTAN_ERR_INVALID_ARGUMENT for
   * a level that is not one of LogLevel (before anything is sent) or a
   * message over 64 KiB.
   */
  log(level: LogLevel, message: string): boolean;
  /**
   * What the caller gave besides the arguments (capstan_call_input): `canAsk`,
   * the methods the tool may ask it for by throwing InputRequired (empty
   * unless an MCP client calls a served tool), and in a later round
   * `inputResponses` (the client's answers by the keys the tool asked with,
   * as sent: check them) and `requestState` (the tool's own state from the
   * round before, checked intact). Read it while the call is open.
   */
  readonly input: CallInput;
}

/** A log message's severity (capstan_log_level): MCP's names, least severe first. */
export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** A method a tool may ask its MCP client for (InputRequired). */
export type InputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/** ToolContext.input. */
export interface CallInput {
  canAsk: InputMethod[];
  inputResponses?: Record<string, any>;
  requestState?: string;
}

/** One request of InputRequired: the MCP request's method and params. */
export interface InputRequest {
  method: InputMethod;
  params?: Record<string, unknown>;
}

/** What the event hook (Registry.setEventHook) sees. */
export interface CallEvent {
  /** replayed: answered from the journal without running the tool (a finished follows). */
  kind: 'started' | 'finished' | 'timed_out' | 'cancelled' | 'progress' | 'log' | 'replayed';
  tool: string;
  id: string;
  /** Position of the call in its batch. */
  index: number;
  /** finished, timed_out: since the tool started; progress, log: the same. */
  durationUs: number;
  /** finished only. */
  outcome?: Outcome;
  /** progress only. */
  progress?: number;
  total?: number;
  /** progress (null: none) and log. */
  message?: string | null;
  /** log only. */
  level?: LogLevel;
}

/** MCP `ToolAnnotations`: hints for clients and approvers; capstan enforces none. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** An MCP `Icon`. */
export interface ToolIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/**
 * A tool: gets the validated arguments (schema defaults filled in) and
 * returns the result or a Promise of it. A string is sent as text, anything
 * else as JSON; a throw or rejection is a tool error whose message the model reads.
 */
export type ToolFunction<A = any> = (args: A, ctx: ToolContext) => unknown | Promise<unknown>;

/**
 * A zod 4 schema (classic or mini), structurally: its `_zod.output` is what
 * the tool gets (zod's `z.output`). zod is an optional peer dependency, so
 * these types do not import it.
 */
export interface ZodSchemaLike<Output = unknown> {
  _zod: { output: Output; def: unknown };
}

/** What a tool declared with zod schema `S` gets: zod's output type. */
export type ZodOutput<S> = S extends { _zod: { output: infer O } } ? O : never;

export interface ToolDefinition {
  /** `^[A-Za-z0-9_-]{1,64}$`. */
  name: string;
  description?: string;
  /**
   * JSON Schema of the arguments (object or JSON text), or a zod 4 schema
   * (converted by zod's own toJSONSchema; the tool gets zod's parse of the
   * checked arguments); default `{"type":"object"}`.
   */
  parameters?: JsonSchema | string | ZodSchemaLike;
  /**
   * Runs on the quick path (capstan's host batches): execute and runTurn
   * hand its checked calls out in one crossing and take its answers back in
   * one, and it runs here with no call handle (`ctx.progress`, `ctx.log`
   * and `ctx.input` are not there; `ctx.cancelled()` is true once the
   * registry closed). Default: true for a function of one parameter
   * (`fn.length < 2`) without a `timeoutMs`; a tool that takes `ctx` gets a
   * call handle.
   */
  quick?: boolean;
  /**
   * Safe to run twice with the same arguments: with a journal
   * (Registry.setJournal), a call of it that started and never completed (a
   * crash) runs again; without it such a call fails "Outcome unknown: ...".
   */
  idempotent?: boolean;
  /** Per-call timeout; 0 or absent: none. */
  timeoutMs?: number;
  /** Cap on the result text, in characters. */
  maxOutputChars?: number;
  /** Never runs concurrently with itself. */
  serial?: boolean;
  /** Never runs without approval (Registry.setApprover; without an approver such calls end `denied`). */
  requiresApproval?: boolean;
  /** Streams: never start before the whole response arrived. */
  waitForResponse?: boolean;
  /** Left out of the provider exports until the search tool (Registry.addSearchTool) found it; callable any time. */
  deferred?: boolean;
  /** Replace a tool of the same name; without it registering a name twice throws (CAPSTAN_ERR_INVALID_ARGUMENT). */
  replace?: boolean;
  /** MCP metadata (capstan_tool_def.mcp_meta), in the `mcp` export and the served tools/list. */
  title?: string;
  annotations?: ToolAnnotations;
  /**
   * MCP `outputSchema` (`"type": "object"`): a result that is a JSON object
   * failing it becomes a tool error naming the failing places.
   */
  outputSchema?: JsonSchema | string;
  /** Up to 16. */
  icons?: ToolIcon[];
}

export interface SearchHit {
  name: string;
  description: string;
  score: number;
}

export interface SearchOptions {
  /** 1 to 100; default 5. */
  limit?: number;
  /** The query is a regular expression (Rust syntax) instead of words. */
  regex?: boolean;
}

export interface SearchToolOptions extends SearchOptions {
  /** Default "tool_search". */
  name?: string;
  description?: string;
}

export interface HistoryFinding {
  kind:
    | 'missing_result'
    | 'orphan_result'
    | 'duplicate_result'
    | 'duplicate_call_id'
    | 'illegal_id'
    | 'out_of_order'
    | 'missing_signature';
  /** Index of the message, item or content. */
  entry: number;
  call_id: string;
  message: string;
  /** With repair: what the repair did. */
  repair?: string;
}

export interface HistoryCheck {
  ok: boolean;
  findings: HistoryFinding[];
  /** With repair: the history, repaired, in the shape it came in; else null. */
  repaired: unknown;
}

export interface ExecOptions {
  /** Default true; false runs the calls one by one, in order. */
  parallel?: boolean;
  /** At most this many calls at once; 0 or absent: 8. */
  limit?: number;
  /** Overrides every tool's timeout. */
  timeoutMs?: number;
  /** Bounds every call from submission, waits included. */
  deadlineMs?: number;
  /** Drop `null` optional arguments (OpenAI strict mode) before validation. */
  strictNulls?: boolean;
  /** Ids of calls the user already approved: they run without asking the approver. */
  approvedIds?: string[];
  /**
   * The run (a conversation, a workflow) the calls belong to: with a journal
   * (Registry.setJournal) each call is recorded and answered under this id
   * plus its call id. Absent: the journal is not used.
   */
  runId?: string;
}

/**
 * The host's own journal store, for Journal.custom: its database or durable
 * engine. Both methods are synchronous (an async store is not supported: a
 * returned Promise fails the call), run on the JS thread and must not call
 * into a registry using the journal. A throw fails the call; a failed
 * `started` record keeps the tool from running.
 */
export interface JournalStore {
  /**
   * Stores one record (a JSON object's text: `started`, `completed` or
   * `tools`, with `run` and `call`) durably before returning; a later
   * `completed` record of a (run, call) key replaces its `started`.
   */
  record(recordJson: string): void;
  /** The key's record text as record() got it (`completed` if any, else `started`), or null/undefined if none. */
  lookup(runId: string, callId: string): string | null | undefined;
}

/** Which store method failed, for which call (`kind`: the record's, for record). */
export interface JournalStoreFailure {
  op: 'record' | 'lookup';
  runId: string;
  callId: string;
  kind?: 'started' | 'completed' | 'tools';
}

export interface JournalCustomOptions {
  /** A store method threw or returned a Promise (default: a process warning); the call has failed already. */
  onError?: (error: unknown, failure: JournalStoreFailure) => void;
  /** Once, when capstan is done with the store: the journal closed and no registry using it any more. */
  onRelease?: () => void;
}

/**
 * A journal of calls (docs/durable-calls.md): a JSON Lines file, an SQLite
 * database or the host's own store. Registry.setJournal attaches it; the
 * registry keeps what it needs, so it may be closed first.
 */
export class Journal {
  private constructor();
  /**
   * A journal kept by the host's own store (capstan_journal_new). The store
   * stays alive while the journal or a registry using it does.
   */
  static custom(store: JournalStore, options?: JournalCustomOptions): Journal;
  /** Opens (creating it if absent) a JSON Lines journal; a line that is not a record throws naming it. */
  static openJsonl(path: string): Journal;
  /** Opens (creating it if absent) an SQLite journal; CAPSTAN_ERR_UNSUPPORTED without the journal-sqlite feature. */
  static openSqlite(path: string, options?: { fullSync?: boolean }): Journal;
  close(): void;
  [Symbol.dispose](): void;
}

/** Streamed-response formats (server-sent-events bodies; Gemini: `alt=sse`). */
export type StreamFormat = 'openai' | 'openai_chat' | 'openai_responses' | 'anthropic' | 'gemini';

export interface StreamOptions extends ExecOptions {
  /** Start each call once its arguments are complete, before the body ends (runStream: default true). */
  earlyDispatch?: boolean;
  /** Text deltas of the response, as they arrive. */
  onText?: (text: string) => void;
}

/** A chunk of a response body. */
export type Chunk = string | Uint8Array | ArrayBuffer;

/** A web ReadableStream of bytes (structural, so no DOM or Node typings are needed). */
export interface ReadableStreamLike {
  getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; releaseLock(): void };
}

/** A fetch() Response (structural): its body is read; `ok` false rejects. */
export interface ResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText?: string;
  readonly body: ReadableStreamLike | null;
}

/** What a streamed turn gives. */
export interface StreamTurn extends Turn {
  /** The response's text. */
  text: string;
  /** The provider's stop or finish reason. */
  stopReason: string | null;
  cancelled: boolean;
  /** Positions of calls the response cut (max tokens): never run, `invalid_arguments`. */
  cutCalls: number[];
}

/** A call waiting for approval. */
export interface ApprovalRequest {
  tool: string;
  id: string;
  arguments: Record<string, unknown>;
}

/** true runs the call; false or { approve: false, reason } denies it (the model reads `reason`). */
export type ApprovalDecision = boolean | { approve: boolean; reason?: string };

export type Approver = (request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>;

export interface RegistryOptions {
  /** Coerce strings to number/integer/boolean where the schema asks for those. */
  coerce?: boolean;
  /** Refuse schemas whose `default` fails its own subschema. */
  strictDefaults?: boolean;
  /** Refuse schemas with a misspelled keyword (`requried`); without it, `describe` warns. */
  strictKeywords?: boolean;
}

export interface ExportOptions {
  /** OpenAI strict mode. */
  strict?: boolean;
  /** Gemini: lower to the OpenAPI-subset `parameters`. */
  geminiLower?: boolean;
}

export interface ExportReportItem {
  tool: string;
  pointer: string;
  message: string;
}

export type CheckResult =
  | { outcome: 'ok'; arguments: Record<string, unknown> }
  | { outcome: Exclude<Outcome, 'ok'>; content: string };

/** What `runTurn(..., { wholeTurn: true })` resolves with. */
export interface WholeTurn {
  /** The calls read out of the response. */
  calls: ToolCall[];
  /** The model's turn, then the results: append it to the history as is. */
  messages: unknown[];
}

export interface Turn {
  /** The calls read out of the response. */
  calls: ToolCall[];
  /** One result per call, in call order. */
  results: ToolResult[];
  /** What to append to the conversation, in the turn's format. */
  messages: unknown;
}

/** Calls running in the background; iterate for results as they finish. */
export class Batch implements AsyncIterable<ToolResult> {
  /** Number of calls. */
  readonly size: number;
  /** Every result, in call order, once the batch is done. */
  results(): Promise<ToolResult[]>;
  /** Calls not yet started end `cancelled`; running ones see ctx.cancelled(). */
  cancel(): void;
  [Symbol.asyncIterator](): AsyncIterator<ToolResult>;
}

/** A streamed response being read: feed() its bytes, iterate results as calls end, then finish(). */
export class Stream implements AsyncIterable<ToolResult> {
  /** Throws the stream's (sticky) error: ProviderError, INVALID_RESPONSE, STREAM_TOO_LARGE. */
  feed(chunk: Chunk): void;
  /** No call starts any more; finish() still collects the results. */
  cancel(): void;
  /** Starts the calls not started yet and resolves once each has its result; frees the stream. */
  finish(): Promise<StreamTurn>;
  [Symbol.asyncIterator](): AsyncIterator<ToolResult>;
}

export interface McpServerOptions {
  /** `IP:PORT`; default "127.0.0.1:0" (loopback, a port the OS picks). Set bearerToken and allowedHosts off loopback. */
  address?: string;
  bearerToken?: string;
  /** Browser origins accepted besides loopback ones. */
  allowedOrigins?: string | string[];
  /** Host values accepted besides localhost, 127.0.0.1 and ::1. */
  allowedHosts?: string | string[];
  /** Per tool name: { title, annotations, outputSchema }. */
  toolsMeta?: Record<string, unknown> | string;
  /** serverInfo.name; default "capstan". */
  name?: string;
  maxBodyBytes?: number;
  callTimeoutMs?: number;
  stopTimeoutMs?: number;
}

export interface McpMountOptions {
  /** Program and arguments of a server on stdio (exactly one of command and url). */
  command?: string[];
  /** Added to the child's environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** A streamable-HTTP endpoint (exactly one of command and url). */
  url?: string;
  /** Sent with every HTTP request, e.g. { Authorization: 'Bearer ...' }. */
  headers?: Record<string, string>;
  /** Put before every remote tool name. */
  prefix?: string;
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  /** Reconnect attempts in a row after the connection died: 5 when absent, 0 = never. */
  maxReconnects?: number;
  reconnectBackoffMs?: number;
  protocolVersion?: string;
  /** OAuth 2.1 for a `url` whose server asks for authorization (the MCP authorization spec). */
  oauth?: McpOAuthOptions;
  /**
   * Answers what the server asks while running a tool, for the methods in
   * `inputMethods`: `tool` is the mounted tool's local name (null for an
   * older server's request made mid-call), `params` the request's params.
   * Returns or resolves to the method's result, e.g. `{ action: 'accept',
   * content: { name: 'Ada' } }`; undefined/null, a throw or a rejection gives
   * no answer (the call fails as a tool error saying so). Runs on the JS
   * thread; capstan's MCP thread waits for it (up to `callTimeoutMs`, else
   * an hour).
   */
  input?: (tool: string | null, method: McpInputMethod, params: any) => unknown | Promise<unknown>;
  /** The methods `input` answers, declared to the server; default ['elicitation/create']. */
  inputMethods?: McpInputMethod[];
}

/** What a mounted server may ask its client while running a tool. */
export type McpInputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/**
 * The host's part of an OAuth mount (capstan runs the flow: discovery,
 * registration, PKCE, code exchange, refresh). Every function runs on the JS
 * thread; capstan's MCP thread waits for it, each authorization bounded by
 * the mount's `connectTimeoutMs`.
 */
export interface McpOAuthOptions {
  /**
   * Shows the authorization URL to the user (opens a browser, prints it),
   * waits for the redirect to `redirectUri` and returns that whole URL (with
   * its `code` and `state`). A throw, a rejection or null refuses: while
   * mounting, the mount fails with CAPSTAN_ERR_MCP_CONNECT saying so.
   */
  authorize?: (authorizationUrl: string) => string | null | Promise<string | null>;
  /** Where the authorization server sends the user back; required with `authorize`. */
  redirectUri?: string;
  /** A client registered beforehand (else a client-id metadata document or dynamic registration). */
  clientId?: string;
  /** The secret of `clientId` for a confidential client. */
  clientSecret?: string;
  /** HTTPS URL of the host's client-id metadata document. */
  clientMetadataUrl?: string;
  /** Scopes to ask for (absent: the server's choice). */
  scopes?: string | string[];
  /**
   * Where the tokens are kept between mounts (JSON text holding secrets):
   * `load()` returns what `save` kept (null: nothing); `save(null)` forgets.
   * Absent: in memory for the mount's life.
   */
  tokens?: { load(): string | null; save(json: string | null): void };
  /**
   * PEM text of `clientId`'s private key (PKCS#8, EC P-256): the client
   * authenticates with a signed assertion (private_key_jwt, ES256) instead
   * of a secret; without `authorize`, tokens come from the
   * client-credentials grant. A key that is not such PEM text, or one
   * without `clientId`, fails the mount with CAPSTAN_ERR_INVALID_ARGUMENT.
   */
  clientKey?: string;
  /**
   * The issuer identifier of the authorization server `clientSecret` or
   * `clientKey` belong to: they are sent there only. Without it, only to an
   * authorization server of the MCP server's own origin (another one fails
   * the mount, and nothing is sent).
   */
  clientIssuer?: string;
  /**
   * A grant without a user (used when there is no `authorize`): returns or
   * resolves to a JWT the host got elsewhere for `audience`. Alone, the
   * workload's identity token, sent in the JWT-bearer grant to the server's
   * authorization server (`audience` is its issuer); with
   * `identityProvider`, the user's ID token there (`audience` is its
   * issuer). A throw, a rejection or null refuses: the mount fails with
   * CAPSTAN_ERR_MCP_CONNECT.
   */
  assertion?: (audience: string) => string | null | Promise<string | null>;
  /** The enterprise identity provider (enterprise-managed authorization, SEP-990); needs `assertion`. */
  identityProvider?: McpIdentityProvider;
}

/** An enterprise identity provider, where capstan exchanges the user's ID token for an ID-JAG. */
export interface McpIdentityProvider {
  /** Its issuer identifier. */
  issuer: string;
  /** Its token endpoint. */
  tokenEndpoint: string;
  /** The host's client id there. */
  clientId: string;
  /** That client's secret; absent: a public client. */
  clientSecret?: string;
}

export interface McpMountInfo {
  connected: boolean;
  /** Local name -> remote name. */
  tools: Record<string, string>;
  problems: Array<{ remote: string; local: string; problem: string }>;
  reconnects: number;
  gave_up: boolean;
  last_error: string;
}

/** The registry's tools served over MCP (streamable HTTP). */
export class McpServer {
  /** The endpoint, e.g. "http://127.0.0.1:41234/mcp". */
  readonly url: string;
  /** Stops and frees the server (calls in flight are cancelled). */
  stop(): Promise<void>;
}

/** An MCP server's tools mounted in a registry. */
export class McpMount {
  info(): McpMountInfo;
  /** Unmounts: the tools are unregistered, a command it started is stopped. */
  close(): Promise<void>;
}

export class Registry {
  constructor(options?: RegistryOptions);
  /** Registers a tool. Throws SchemaError / CapstanError on a bad name or schema, or a name already registered without `replace: true`. */
  tool<S extends ZodSchemaLike>(def: ToolDefinition & { parameters: S }, fn: ToolFunction<ZodOutput<S>>): this;
  tool<A = any>(def: (ToolDefinition & { parameters?: JsonSchema | string }) | string, fn: ToolFunction<A>): this;
  /**
   * Records the calls of batches run with a `runId` in `journal` (null:
   * none), from the next batch on; `replay: true` runs no tool at all (a
   * call missing from the journal fails naming it).
   */
  setJournal(journal: Journal | null, options?: { replay?: boolean }): void;
  removeTool(name: string): void;
  /** The tools as `format`'s API takes them. */
  tools(format?: Format, options?: ExportOptions): unknown;
  exportTools(format?: Format, options?: ExportOptions): { tools: unknown; report: ExportReportItem[] };
  stats(): Record<string, unknown>;
  /** The tools that best match `query`, best first. */
  search(query: string, options?: SearchOptions): SearchHit[];
  /** Registers the search tool the model calls to find (and load) deferred tools. */
  addSearchTool(options?: SearchToolOptions): this;
  /** Deferred tools the search tool loaded leave the exports again. */
  unloadTools(): void;
  checkCall(name: string, args?: Record<string, unknown> | string, options?: { strictNulls?: boolean }): CheckResult;
  submit(calls: ToolCall | ToolCall[], options?: ExecOptions): Batch;
  execute(calls: ToolCall | ToolCall[], options?: ExecOptions): Promise<ToolResult[]>;
  /** Parses `response`, runs its calls and formats the results (rejects with ProviderError on an error body). */
  runTurn(format: Format, response: unknown, options?: ExecOptions): Promise<Turn>;
  /**
   * The whole turn (CAPSTAN_EXEC_WHOLE_TURN): `messages` is one array, the
   * model's own turn first (thinking blocks and signatures, reasoning
   * items, thought signatures, unchanged), then the results.
   */
  runTurn(format: Format, response: unknown, options: ExecOptions & { wholeTurn: true }): Promise<WholeTurn>;
  /** Sets (null: removes) the event hook; it runs on the JS thread, as a microtask soon after each event. */
  setEventHook(hook: ((event: CallEvent) => void) | null): void;
  /** Sets (null: removes) the approver of requiresApproval tools; it runs on the JS thread. */
  setApprover(approver: Approver | null): void;
  /** Which calls would wait for approval. Runs nothing. */
  needsApproval(calls: ToolCall | ToolCall[], options?: ExecOptions): Array<{ index: number; id: string; name: string }>;
  stream(format: StreamFormat, options?: StreamOptions): Stream;
  /** Feeds a fetch() Response, a ReadableStream, an (async) iterable of chunks, text or bytes to a stream. */
  runStream(
    format: StreamFormat,
    body: ResponseLike | ReadableStreamLike | AsyncIterable<Chunk> | Iterable<Chunk> | Chunk,
    options?: StreamOptions,
  ): Promise<StreamTurn>;
  /** Serves the tools over MCP (streamable HTTP) until stop(). */
  serve(options?: McpServerOptions): McpServer;
  /** Serves the tools over MCP on stdin/stdout; resolves when stdin ends. */
  serveStdio(options?: McpServerOptions): Promise<void>;
  /** Mounts an MCP server's tools (rejects with CapstanError CAPSTAN_ERR_MCP_CONNECT). */
  mount(options: McpMountOptions): Promise<McpMount>;
  /** Calls not started end `cancelled`; live streams are cancelled and finished, servers stopped, mounts closed; frees the registry. Idempotent. */
  close(): void;
  [Symbol.dispose](): void;
}

/** A capstan function failed. */
export class CapstanError extends Error {
  /** The CAPSTAN_ERR_* name. */
  readonly status: string;
  readonly statusCode: number;
  readonly provider: ProviderErrorInfo | null;
  /** INVALID_SCHEMA: JSON Pointer of the offending place in the schema. */
  readonly pointer: string | null;
}

export interface ProviderErrorInfo {
  kind: string | null;
  message: string | null;
  type: string | null;
  code: string | null;
  httpStatus: number | null;
  retryAfterMs: number | null;
}

/** The response body was the provider's report of an error. */
export class ProviderError extends CapstanError {
  readonly provider: ProviderErrorInfo;
}

/** A tool's parameters schema was refused. */
export class SchemaError extends CapstanError {}

/**
 * Thrown (or rejected with) by a tool to ask its caller for input instead of
 * answering (MCP 2026-07-28 multi round-trip requests): `requests` by key
 * (at most 32), `state` the tool's own text (at most 64 KiB), back sealed in
 * the next round's `ctx.input.requestState`. Only an MCP client calling a
 * served tool can be asked, and only what it declared (`ctx.input.canAsk`);
 * for any other caller the call ends as a tool error saying why.
 */
export class InputRequired extends Error {
  constructor(requests: Record<string, InputRequest>, state?: string | null);
  readonly requests: Record<string, InputRequest>;
  readonly state: string | null;
}

/** The tool calls in a provider response (object, JSON text or bytes). */
export function parseCalls(format: Format, response: unknown): ToolCall[];

/** Results as the messages/items `format` expects next. */
export function formatResults(format: Format, results: ReadonlyArray<ToolResult>): unknown;

/** Checks (and with repair, repairs) a conversation's tool calls and results against `format`'s rules. */
export function checkHistory(
  format: Exclude<Format, 'describe' | 'mcp'>,
  history: unknown,
  options?: { repair?: boolean; geminiSignatures?: boolean },
): HistoryCheck;

/** capstan's own threads, process-wide. */
export const runtime: {
  /** Caps the pool (threads, 0: 256) and the idle keep-alive (0: 10 s); no argument: the defaults. */
  configure(options?: { threads?: number; keepAliveMs?: number }): void;
  /** Joins capstan's threads: true when none is left, false on timeout (default: no limit). */
  shutdown(timeoutMs?: number): Promise<boolean>;
};

declare const capstan: {
  Registry: typeof Registry;
  Batch: typeof Batch;
  Stream: typeof Stream;
  McpServer: typeof McpServer;
  McpMount: typeof McpMount;
  CapstanError: typeof CapstanError;
  ProviderError: typeof ProviderError;
  SchemaError: typeof SchemaError;
  parseCalls: typeof parseCalls;
  formatResults: typeof formatResults;
  checkHistory: typeof checkHistory;
  Image: typeof Image;
  File: typeof File;
  runtime: typeof runtime;
  FORMATS: typeof FORMATS;
  version: string;
  libraryPath: string;
};
export default capstan;
