'use strict';
// mcp.cjs: mCP: serving a registry's tools and mounting a server's tools (options, OAuth and input
// relays, McpServer, McpMount).

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const native = require('./native.cjs');
const { api } = native;
const { OK } = require('./constants.cjs');
const { CapstanError, failureFromJson, textOut } = require('./errors.cjs');
const { asyncCall, milliseconds } = require('./marshal.cjs');

// --- MCP ------------------------------------------------------------------

// Registry.mount: the relays (OAuth, input) first, then the connection on a
// worker thread.
function mountOn(registry, options) {
  let opts;
  let reg;
  try {
    opts = mountOptions(options);
    reg = registry._live();
  } catch (e) {
    return Promise.reject(e);
  }
  registry._holds++;
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
      registry._release();
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
        const mount = new McpMount(registry, m.mount);
        registry._mounts.add(mount);
        if (registry._closing) mount.close().catch(() => {});
        resolve(mount);
      }
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      registry._release();
      if (!settled) reject(new Error(`capstan: the mount worker exited with code ${code}`));
    });
  }));
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

module.exports = { mountOn, optionalText, serverOptions, reconnects, mountOptions, INPUT_METHODS, inputMethods, oauthFields, replyToRelay, oauthRelay, inputRelay, McpServer, McpMount };
