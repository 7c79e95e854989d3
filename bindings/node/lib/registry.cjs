'use strict';
// registry.cjs: the registry: tools, the calls that run them, hooks, exports, search, turns, streams
// and MCP.

const native = require('./native.cjs');
const { api } = native;
const {
  EXEC_STRICT_NULLS, EXEC_WHOLE_TURN, EXPORT_GEMINI_LOWER, EXPORT_STRICT, JOURNAL_REPLAY, OK, OUTCOMES,
  REGISTRY_COERCE, REGISTRY_STRICT_DEFAULTS, REGISTRY_STRICT_KEYWORDS, SEARCH_REGEX, TOOL_DEFERRED,
  TOOL_HOST_RUN, TOOL_IDEMPOTENT, TOOL_MAIN_THREAD, TOOL_REQUIRES_APPROVAL, TOOL_SERIAL, TOOL_WAIT_FOR_RESPONSE,
} = require('./constants.cjs');
// CAPSTAN_TOOL_REPLACE: how to register, so kept here rather than with the tool flags.
const TOOL_REPLACE = 1 << 8;
const { CapstanError, check, failure, failureFromJson, takeText, textOut } = require('./errors.cjs');
const { asyncCall, execOptions, formatOf, hostOptions, jsonBytes, milliseconds, normalizedCall } = require('./marshal.cjs');
const { arm, drive } = require('./waker.cjs');
const { approvers, eventHooks, keys, tools } = require('./keys.cjs');
const { toolCallback } = require('./call.cjs');
const { Batch } = require('./batch.cjs');
const { Stream, bodyChunks, readChunks } = require('./stream.cjs');
const { approverCallback, eventCallback } = require('./hooks.cjs');
const { McpServer, mountOn, serverOptions } = require('./mcp.cjs');
const { formatResults, parseCalls } = require('./formats.cjs');
const { HostRuns, hostCalls, runOnHost } = require('./host.cjs');
const { isZod, zodTool } = require('./zod.cjs');
const { journalOf } = require('./journal.cjs');

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
    this._toolsByName = new Map(); // name -> the tool (lib/host.cjs runs quick ones by name)
    this._quickTools = 0;
    this._hostRuns = new HostRuns(); // host batches not done (lib/host.cjs)
    this._journaled = false; // a journal is attached (setJournal)
    this._customStore = false; // a Journal.custom store was ever attached: close does not wait (_free)
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
   * Registers `fn` as tool `def.name`. A name already registered throws
   * (CAPSTAN_ERR_INVALID_ARGUMENT) unless `def.replace` is true.
   * `fn(args, ctx)` gets the validated arguments (defaults filled in) and
   * returns the result, or a Promise of it: a string is sent as text,
   * anything else as JSON; a throw or rejection is a tool error the model reads.
   * `def.parameters` is a JSON Schema (object or text) or a zod 4 schema.
   *
   * Quick tools (the default for a function of one parameter without a
   * timeoutMs; `quick` says otherwise) run through capstan's host batches
   * in execute and runTurn: handed out checked in one crossing, run here,
   * answered in one. A tool that takes `ctx` gets a call handle instead
   * (progress, log, input, its timeout's cancellation).
   */
  tool(def, fn) {
    if (typeof def === 'string') def = { name: def };
    if (typeof fn !== 'function') throw new TypeError('tool: fn must be a function');
    if (!def || typeof def.name !== 'string') throw new TypeError('tool: def.name must be a string');
    if (def.quick !== undefined && typeof def.quick !== 'boolean') throw new TypeError('tool: quick must be a boolean');
    const quick = def.quick ?? (fn.length < 2 && !def.timeoutMs);
    let flags = TOOL_MAIN_THREAD;
    if (quick) flags |= TOOL_HOST_RUN;
    if (def.requiresApproval) flags |= TOOL_REQUIRES_APPROVAL;
    if (def.serial) flags |= TOOL_SERIAL;
    if (def.waitForResponse) flags |= TOOL_WAIT_FOR_RESPONSE;
    if (def.deferred) flags |= TOOL_DEFERRED;
    if (def.idempotent) flags |= TOOL_IDEMPOTENT;
    if (def.replace) flags |= TOOL_REPLACE;
    let call = fn;
    let params;
    if (isZod(def.parameters)) {
      const z = zodTool(def.name, def.parameters);
      params = z.parameters;
      call = z.wrap(fn);
    } else {
      params = def.parameters === undefined ? null : typeof def.parameters === 'string' ? def.parameters : JSON.stringify(def.parameters);
    }
    const meta = {};
    for (const field of ['title', 'annotations', 'outputSchema', 'icons']) {
      if (def[field] !== undefined && def[field] !== null) meta[field] = typeof def[field] === 'string' && field === 'outputSchema' ? JSON.parse(def[field]) : def[field];
    }
    const mcpMeta = Object.keys(meta).length ? JSON.stringify(meta) : null;
    const key = keys.next();
    // sync: whether its calls returned at once (true), a promise (false), or none ran yet.
    // nameJson: the name as JSON text, written into every host batch's calls (lib/host.cjs).
    const entry = { fn, call, quick, sync: undefined, registry: this, name: def.name, nameJson: JSON.stringify(def.name), maxOutputChars: def.maxOutputChars ?? 0 };
    tools.set(key, entry);
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
    this._forget(def.name);
    this._toolsByName.set(def.name, entry);
    if (quick) this._quickTools++;
    return this;
  }

  _forget(name) {
    const was = this._toolsByName.get(name);
    if (was === undefined) return;
    this._toolsByName.delete(name);
    if (was.quick) this._quickTools--;
  }

  /** Removes a tool; its calls in flight finish. */
  removeTool(name) {
    const bytes = Buffer.from(name, 'utf8');
    check(api.registry_remove_tool(this._live(), bytes, bytes.length));
    const key = this._toolKeys.get(name);
    this._toolKeys.delete(name);
    if (key !== undefined) tools.delete(key);
    this._forget(name);
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

  /**
   * Runs `calls` and resolves with one result per call, in call order.
   * Quick tools run through a host batch (lib/host.cjs) when nothing needs
   * capstan's own clock or limit for them (see hostCalls); else as submit.
   */
  execute(calls, options = {}) {
    try {
      this._live();
      const list = Array.isArray(calls) ? calls : [calls];
      if (this._quickTools !== 0) {
        // The calls checked and written as capstan takes them, or null: not the host path.
        const text = hostCalls(this, list, options);
        if (text !== null) return runOnHost(this, list.length, text, hostOptions(options));
      }
      const normalized = list.map(normalizedCall);
      execOptions(options); // checks the options before anything starts
      return this.submit(normalized, options).results();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Makes the registry record its calls in `journal` (a Journal; null: none)
   * from the next batch on, for batches run with a `runId`. A call whose
   * (runId, call id) completed before is answered from the journal without
   * running its tool; one that started and never completed (a crash) runs
   * again if its tool is `idempotent`, else fails "Outcome unknown: ...".
   * `replay: true` runs no tool at all: a call missing from the journal
   * fails naming it (tests replaying a recorded session).
   */
  setJournal(journal, options = {}) {
    const reg = this._live();
    check(api.registry_set_journal(reg, journal === null ? null : journalOf(journal), options.replay ? JOURNAL_REPLAY : 0));
    this._journaled = journal !== null;
    // Batches keep the store they began with: this stays set.
    if (journal !== null && journal._custom) this._customStore = true;
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
    return mountOn(this, options);
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
      this._approverKey = keys.next();
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
      this._eventKey = keys.next();
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
      keys.finishing++;
      this._scheduleDrive();
      api.registry_run_turn.async(reg, fmt, bytes, bytes.length, opts, out, len, (err, status) => {
        keys.finishing--;
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
  // while anything is pending (lib/waker.cjs).
  _drive() {
    drive(this);
  }

  _arm() {
    arm(this);
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
    // thread waits for this thread; and so does a custom journal store's
    // record or lookup called on a pool or timer thread.
    if (this._approver !== null || this._eventHook !== null || this._customStore) {
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
    for (const run of [...this._hostRuns]) run.cancel();
    for (const key of this._toolKeys.values()) tools.delete(key);
    this._toolKeys.clear();
    this._toolsByName.clear();
    this._quickTools = 0;
    this._ptr = null;
    api.registry_free(ptr);
    this._drainAfterFree();
  }

  // Batches still waiting for results after the free (a close that did not
  // wait) are polled on a timer until their last result.
  _drainAfterFree() {
    if (this._batches.size === 0 && this._hostRuns.size === 0) {
      approvers.delete(this._approverKey);
      eventHooks.delete(this._eventKey);
      return;
    }
    setTimeout(() => {
      for (const batch of [...this._batches]) batch._poll();
      for (const run of [...this._hostRuns]) run.poll();
      this._drainAfterFree();
    }, 5);
  }

  [Symbol.dispose]() {
    this.close();
  }
}

module.exports = { Registry };
