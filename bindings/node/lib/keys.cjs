'use strict';
// keys.cjs: the keys capstan hands back as user_data, and what each stands for on the JS side.

const { koffi } = require('./native.cjs');


// Tool and batch-part keys (the user_data capstan hands back) -> their JS side.
const tools = new Map();
const parts = new Map();
const streams = new Map();
const approvers = new Map();
const eventHooks = new Map();

// The next key, and how many capstan_stream_finish calls run on libuv's pool:
// while any runs, the waker uses a timer rather than another pool thread (the
// pool may be full).
const keys = {
  last: 0,
  finishing: 0,
  next() {
    return ++this.last;
  },
};

function callText(getter, call) {
  const len = [0];
  const p = getter(call, len);
  if (p === null) return null;
  return len[0] > 0 ? koffi.decode.string(p, Number(len[0])) : '';
}

module.exports = { tools, parts, streams, approvers, eventHooks, keys, callText };
