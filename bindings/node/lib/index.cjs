'use strict';
// capstan for Node.js: the registry, its tools as JS functions, batches
// delivered on the event loop, and the provider formats.
//
// Threads: every JS function here runs on the JS thread. Tools are
// registered as CAPSTAN_TOOL_MAIN_THREAD tools and the JS thread is a main
// thread of each registry, so capstan never calls them from a pool thread:
// every call waits for capstan_registry_pump, which only this module calls,
// from the event loop. Batch results are delivered by
// CAPSTAN_EXEC_DELIVER_POLL (capstan_batch_poll, also on the JS thread). What
// tells the loop that there is work is the registry's wake fd, watched by a
// poll(2) running on libuv's thread pool (koffi's async call) while work is
// pending; nothing is armed when nothing is pending, so an idle registry
// costs no wake-up and does not keep the process alive. The approver, the
// stream sinks and a custom journal store (lib/journal.cjs) are the only
// callbacks capstan may run on its own threads: koffi then holds that thread
// until the JS thread ran them, and the JS thread never blocks on capstan
// while one may be pending (see Stream.finish, Registry.close).
//
// The module is cut by area (the files below, in capstan.h's order); this one
// gathers what `require('capstan')` exports.

const native = require('./native.cjs');
const { api } = native;
const { FORMATS } = require('./constants.cjs');
const { CapstanError, InputRequired, ProviderError, SchemaError } = require('./errors.cjs');
const { File, Image } = require('./content.cjs');
const { Batch } = require('./batch.cjs');
const { Stream } = require('./stream.cjs');
const { McpMount, McpServer } = require('./mcp.cjs');
const { Registry } = require('./registry.cjs');
const { Journal } = require('./journal.cjs');
const { checkHistory, formatResults, parseCalls } = require('./formats.cjs');
const { runtime } = require('./runtime.cjs');

const version = api.version_string();

module.exports = {
  Registry,
  Journal,
  Batch,
  Stream,
  McpServer,
  McpMount,
  CapstanError,
  ProviderError,
  SchemaError,
  InputRequired,
  parseCalls,
  formatResults,
  checkHistory,
  Image,
  File,
  runtime,
  FORMATS,
  version,
  libraryPath: native.libraryPath,
};
