'use strict';
// runtime.cjs: capstan's own threads, process-wide: configure and shut down the runtime.

const native = require('./native.cjs');
const { api } = native;
const { OK } = require('./constants.cjs');
const { check, failureFromJson } = require('./errors.cjs');
const { asyncCall, milliseconds } = require('./marshal.cjs');

/**
 * capstan's own threads, process-wide. The binding's tools never run on
 * them (they run on the JS thread); the approver's and the stream sinks'
 * invocations, timeouts and MCP connections do.
 */
const runtime = Object.freeze({
  /**
   * Caps capstan's pool threads (`threads`, 0: 256) and how long an idle one
   * waits before it ends (`keepAliveMs`, 0: 10 s). No argument: the defaults.
   */
  configure(options = {}) {
    const threads = options.threads ?? 0;
    if (!Number.isInteger(threads) || threads < 0) throw new RangeError('runtime.configure: threads must be an integer >= 0');
    check(
      api.runtime_configure({
        struct_size: native.sizes.RuntimeOptions,
        threads: Math.min(threads, 0xffffffff),
        keep_alive_ms: milliseconds(options.keepAliveMs, 'keepAliveMs'),
      }),
    );
  },
  /**
   * Stops and joins every thread capstan started (pool, timer, MCP
   * connections) on libuv's pool, waiting up to `timeoutMs` (default: no
   * limit) for what still runs; cancels nothing. Resolves true when no
   * capstan thread is left, false on timeout. capstan starts its threads
   * again when next needed.
   */
  shutdown(timeoutMs) {
    const ms = timeoutMs === undefined ? 0xffffffff : timeoutMs === 0 ? 0 : milliseconds(timeoutMs, 'timeoutMs');
    return asyncCall(api.runtime_shutdown, ms).then((status) => {
      if (status === 13) return false; // CAPSTAN_ERR_TIMEOUT
      if (status !== OK) throw failureFromJson(status, null);
      return true;
    });
  },
});

module.exports = { runtime };
