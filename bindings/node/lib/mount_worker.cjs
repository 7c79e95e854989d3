'use strict';
// Runs capstan_mcp_mount_new on a worker thread: it blocks while it starts
// or reaches the server (up to twice the connect timeout), which the event
// loop must not, and its error message is per OS thread, so it is read here,
// on the thread that failed, and posted back with the status.
const { parentPort, workerData } = require('node:worker_threads');
const { api, koffi } = require('./native.cjs');

const out = [null];
const status = api.mcp_mount_new(workerData.registry, workerData.options, out);
let error = null;
if (status !== 0) {
  const text = [null];
  const len = [0];
  if (api.error_json(text, len) === 0 && text[0] !== null) {
    error = Number(len[0]) > 0 ? koffi.decode.string(text[0], Number(len[0])) : null;
    api.string_free(text[0]);
  }
}
parentPort.postMessage({ status, mount: status === 0 ? out[0] : null, error });
