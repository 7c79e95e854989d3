'use strict';
// stream.cjs: streams: a provider's streamed response read as it arrives, its calls run as they
// complete.

const native = require('./native.cjs');
const { koffi, api } = native;
const { EXEC_EARLY_DISPATCH, OK, STREAM_FORMATS } = require('./constants.cjs');
const { CapstanError, failure, takeText } = require('./errors.cjs');
const { execOptions, toResult } = require('./marshal.cjs');
const { keys, streams } = require('./keys.cjs');

// Stream sink callbacks: on the JS thread inside capstan_stream_feed, or on
// a capstan thread (a call's timeout, capstan_stream_finish running on
// libuv's pool), which koffi blocks until the JS thread runs them: the JS
// thread never waits on such a thread while a stream is live (finish runs
// asynchronously, close waits for the streams' finishes).
function textTrampoline(key, text, len) {
  const stream = streams.get(Number(key));
  if (!stream) return;
  try {
    stream._text(Number(len) > 0 ? koffi.decode.string(text, Number(len)) : '');
  } catch (e) {
    stream._callbackError ??= e;
  }
}

function streamResultTrampoline(key, resultPtr) {
  const stream = streams.get(Number(key));
  if (!stream) return;
  if (resultPtr === null) {
    stream._resultsEnded = true;
    return;
  }
  try {
    stream._deliver(toResult(koffi.decode(resultPtr, native.Result)));
  } catch (e) {
    stream._callbackError ??= e;
  }
}

const textCallback = koffi.register(textTrampoline, koffi.pointer(native.TextFn));
const streamResultCallback = koffi.register(streamResultTrampoline, koffi.pointer(native.SinkResultFn));

// --- streams --------------------------------------------------------------

function chunkBytes(chunk) {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return Buffer.from(chunk);
  throw new TypeError('stream chunks must be strings, Buffers, Uint8Arrays or ArrayBuffers');
}

function streamTurn(done) {
  return {
    calls: done.calls,
    results: done.results.map((r, index) => ({
      index,
      id: r.id,
      name: r.name,
      content: r.content,
      isError: Boolean(r.is_error),
      outcome: r.outcome,
      durationUs: r.duration_us ?? 0,
      ...(r.parts ? { parts: r.parts } : {}),
      ...(r.structured_content ? { structuredContent: r.structured_content } : {}),
    })),
    messages: done.messages,
    text: done.text ?? '',
    stopReason: done.stop_reason ?? null,
    cancelled: Boolean(done.cancelled),
    cutCalls: done.cut_calls ?? [],
  };
}

/**
 * A streamed model response being read (registry.stream): feed() the body's
 * bytes as they arrive, iterate results as calls end, then finish().
 */
class Stream {
  constructor(registry, format, options) {
    const fmt = STREAM_FORMATS[format];
    if (fmt === undefined) {
      throw new TypeError(`unknown stream format ${JSON.stringify(format)}; expected one of: ${Object.keys(STREAM_FORMATS).join(', ')}`);
    }
    if (options.onText !== undefined && typeof options.onText !== 'function') throw new TypeError('onText must be a function');
    this._registry = registry;
    this._onText = options.onText;
    this._key = keys.next();
    this._queue = [];
    this._waiters = [];
    this._resultsEnded = false;
    this._callbackError = null;
    this._feedError = null;
    this._finish = null;
    const opts = execOptions(options, options.earlyDispatch ? EXEC_EARLY_DISPATCH : 0);
    const out = [null];
    streams.set(this._key, this);
    const status = api.stream_new(
      registry._live(),
      fmt,
      opts,
      { struct_size: native.sizes.StreamSink, on_text: textCallback, on_result: streamResultCallback, user_data: this._key },
      out,
    );
    if (status !== OK) {
      streams.delete(this._key);
      throw failure(status);
    }
    this._ptr = out[0];
    registry._streams.add(this);
  }

  _text(text) {
    if (this._onText) this._onText(text);
  }

  _deliver(result) {
    const w = this._waiters.shift();
    if (w) w.resolve({ value: result, done: false });
    else this._queue.push(result);
    this._registry._scheduleDrive();
  }

  /**
   * Reads the next bytes of the body (split anywhere). Throws the stream's
   * error (ProviderError for the provider's error event, CapstanError
   * INVALID_RESPONSE, STREAM_TOO_LARGE), then again on every later feed.
   */
  feed(chunk) {
    if (this._finish) {
      throw new CapstanError({ status: 'CAPSTAN_ERR_WRONG_CONTEXT', status_code: 16, message: 'the stream is finished' });
    }
    if (this._feedError) throw this._feedError;
    const bytes = chunkBytes(chunk);
    const status = api.stream_feed(this._ptr, bytes, bytes.length);
    this._registry._scheduleDrive();
    if (status !== OK) {
      this._feedError = failure(status);
      throw this._feedError;
    }
    if (this._callbackError) {
      const e = this._callbackError;
      this._callbackError = null;
      throw e;
    }
  }

  /** No call starts any more; running ones see ctx.cancelled(). finish() still collects the results. */
  cancel() {
    if (this._ptr !== null) api.stream_cancel(this._ptr);
  }

  /**
   * The body ended: starts the calls not started yet and resolves, once
   * each has its result, with { calls, results, messages, text, stopReason,
   * cancelled, cutCalls } (messages: what to append to the conversation).
   * capstan_stream_finish waits for the calls, so it runs on libuv's pool
   * while the tools run here on the event loop. Then the stream is freed.
   */
  finish() {
    if (this._finish) return this._finish;
    const registry = this._registry;
    this._finish = new Promise((resolve, reject) => {
      const out = [null];
      const len = [0];
      keys.finishing++;
      registry._scheduleDrive();
      api.stream_finish.async(this._ptr, out, len, (err, status) => {
        keys.finishing--;
        let text = null;
        if (!err && status === OK) text = takeText(out[0], len[0]);
        api.stream_free(this._ptr);
        this._ptr = null;
        streams.delete(this._key);
        registry._streams.delete(this);
        this._resultsEnded = true;
        for (const w of this._waiters.splice(0)) w.resolve({ value: undefined, done: true });
        registry._streamEnded();
        if (err) return reject(err);
        if (status !== OK) {
          // The finish ran on another thread: its message is that thread's.
          // A failed feed's error is the same (sticky) status, with its message.
          if (this._feedError && this._feedError.statusCode === status) return reject(this._feedError);
          const name = api.status_name(status);
          const message =
            name === 'CAPSTAN_ERR_STREAM_TRUNCATED'
              ? "stream truncated: the body ended before the response's closing event (calls not started were not run)"
              : name;
          return reject(new CapstanError({ status: name, status_code: status, message }));
        }
        try {
          resolve(streamTurn(JSON.parse(text)));
        } catch (e) {
          reject(e);
        }
      });
    });
    return this._finish;
  }

  /** Results as each call ends, in the order they end; done after the last. */
  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this._queue.length) return Promise.resolve({ value: this._queue.shift(), done: false });
        if (this._resultsEnded) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this._waiters.push({ resolve, reject }));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}

function bodyChunks(body) {
  if (body === null || body === undefined) throw new TypeError('runStream: no body');
  if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) return [body];
  if (typeof body.getReader === 'function' || typeof body[Symbol.asyncIterator] === 'function') return body;
  if (body.body !== undefined && body.body !== null && typeof body.ok === 'boolean') {
    if (!body.ok) throw new Error(`runStream: HTTP ${body.status} ${body.statusText || ''}`.trim());
    return bodyChunks(body.body); // a fetch() Response
  }
  if (typeof body[Symbol.iterator] === 'function') return body;
  throw new TypeError('runStream: body must be a fetch() Response, a ReadableStream, an (async) iterable of chunks, a string or bytes');
}

async function* readChunks(source) {
  if (typeof source.getReader === 'function' && typeof source[Symbol.asyncIterator] !== 'function') {
    const reader = source.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    yield* source;
  }
}

module.exports = { textTrampoline, streamResultTrampoline, textCallback, streamResultCallback, chunkBytes, streamTurn, Stream, bodyChunks, readChunks };
