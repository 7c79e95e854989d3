// make node-bench: the time to run one tool call and a batch of 100 through
// capstan's Node binding, next to the Vercel AI SDK (`ai`) and the OpenAI
// Agents SDK (`@openai/agents-core`, both pinned in package-lock.json)
// running the same tool on the same calls. Prints figures; asserts nothing
// about time.
//
// The tool: get_weather({ city: string, unit?: "c" | "f" }), async, no I/O.
// What each side does per operation:
// - capstan execute: validate the normalized calls against the JSON Schema,
//   run them concurrently on the event loop, collect the results.
// - capstan runTurn: the same, from an OpenAI Chat completion (calls parsed)
//   to the tool messages for the next request (results formatted).
// - ai generateText: one step of a mock model (MockLanguageModelV4 from
//   `ai/test`, no network) answering with the calls; the SDK parses them,
//   validates with zod, runs `execute` concurrently and builds the step's
//   results. The same step with a text answer (no call) is measured too, as
//   the SDK's own per-step overhead, and shown subtracted.
// - openai-agents FunctionTool.invoke: what the Agents SDK's runner does per
//   function call (the tool made by `tool()` with a zod schema, strict as the
//   SDK requires): parse the arguments' JSON, validate with zod, run
//   `execute`; the batch is `Promise.all` over the calls, as the runner
//   runs a turn's calls. Its runner (model, items, tracing) is not included,
//   so this is the SDK's tool execution alone.
//
// Then the rows of `make bench-bindings` (issue #46), one `BENCH-ROW {json}`
// line each: capstan execute beside openai-agents' invoke (Promise.all for a
// batch), a lone call, 100 calls and 10,000 calls, for the trivial tool and
// for one that waits 2 ms (a timer standing for I/O), measured in this run.
// Then what one koffi crossing costs, the floor of any koffi binding.
//
//   CAPSTAN_LIB=target/release/libcapstan.so node bindings/node/bench/bench.mjs [--quick]
import { generateText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { tool as agentsTool, RunContext } from '@openai/agents-core';
import { createRequire } from 'node:module';
import os from 'node:os';
import { Registry, libraryPath } from '../index.mjs';

const { api } = createRequire(import.meta.url)('../lib/native.cjs');

const quick = process.argv.includes('--quick');
const BATCHES = [1, 100];

const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'], default: 'c' } },
  required: ['city'],
  additionalProperties: false,
};
async function getWeather({ city, unit }) {
  return { city, unit: unit ?? 'c', temperature: 21 };
}

function calls(n) {
  return Array.from({ length: n }, (_, i) => ({ id: `call_${i}`, name: 'get_weather', arguments: { city: `city ${i}` } }));
}

function chatCompletion(n) {
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 0,
    model: 'bench',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: calls(n).map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
        },
        finish_reason: 'tool_calls',
      },
    ],
  };
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};
function mockModel(n) {
  const content =
    n === 0
      ? [{ type: 'text', text: 'No tool needed.' }]
      : calls(n).map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.arguments) }));
  return new MockLanguageModelV4({
    doGenerate: async () => ({
      content,
      finishReason: { unified: n === 0 ? 'stop' : 'tool-calls', raw: undefined },
      usage,
      warnings: [],
    }),
  });
}
const aiTools = {
  get_weather: tool({
    description: 'Weather for a city',
    inputSchema: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c') }).strict(),
    execute: getWeather,
  }),
};

const agentsWeather = agentsTool({
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c') }).strict(),
  execute: getWeather,
});
const runContext = new RunContext();
function agentsInvoke(list) {
  return Promise.all(
    list.map((c) => {
      const args = JSON.stringify(c.arguments);
      return agentsWeather.invoke(runContext, args, { toolCall: { type: 'function_call', callId: c.id, name: c.name, arguments: args } });
    }),
  );
}

// Median wall and CPU microseconds per operation over `rounds` timed runs
// of `reps` operations each, after a warm-up. CPU is the process's user +
// system time (every thread: capstan's, libuv's), which says more than the
// wall clock on a shared machine.
async function measure(op, n, repsGiven = 0) {
  const reps = repsGiven || (n === 1 ? (quick ? 200 : 1000) : quick ? 10 : 50);
  const rounds = quick ? 3 : 5;
  for (let i = 0; i < reps; i++) await op();
  const wall = [];
  const cpu = [];
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) await op();
    wall.push(Number(process.hrtime.bigint() - t0) / 1000 / reps);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / reps);
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { median: median(wall), cpu: median(cpu) };
}

const registry = new Registry();
registry.tool({ name: 'get_weather', description: 'Weather for a city', parameters: schema }, getWeather);

// Same answers on both sides first.
{
  const ours = await registry.execute(calls(3), { limit: 3 });
  const theirs = await generateText({ model: mockModel(3), tools: aiTools, prompt: 'weather?' });
  const a = ours.map((r) => JSON.parse(r.content));
  const b = theirs.toolResults.map((r) => r.output);
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`results differ: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  const c = await agentsInvoke(calls(3));
  if (JSON.stringify(a) !== JSON.stringify(c)) throw new Error(`results differ: ${JSON.stringify(a)} vs ${JSON.stringify(c)}`);
}

const rows = [];
const baseline = await measure(() => generateText({ model: mockModel(0), tools: aiTools, prompt: 'weather?' }), 1);
for (const n of BATCHES) {
  const list = calls(n);
  const body = chatCompletion(n);
  const models = mockModel(n);
  const exec = await measure(() => registry.execute(list, { limit: n }), n);
  const turn = await measure(() => registry.runTurn('openai_chat', body, { limit: n }), n);
  const ai = await measure(() => generateText({ model: models, tools: aiTools, prompt: 'weather?' }), n);
  const agents = await measure(() => agentsInvoke(list), n);
  rows.push(['capstan execute', n, exec]);
  rows.push(['capstan runTurn (openai_chat)', n, turn]);
  rows.push(['ai generateText step', n, ai]);
  rows.push(['ai generateText step - no-call step', n, { median: ai.median - baseline.median, cpu: ai.cpu - baseline.cpu }]);
  rows.push(['openai-agents FunctionTool.invoke', n, agents]);
}

// --- the rows of make bench-bindings ------------------------------------------
async function waitTwoMs({ city, unit }) {
  await new Promise((r) => setTimeout(r, 2));
  return { city, unit: unit ?? 'c', temperature: 21 };
}
registry.tool({ name: 'get_weather_io', description: 'Weather for a city (2 ms of I/O)', parameters: schema }, waitTwoMs);
const agentsWeatherIo = agentsTool({
  name: 'get_weather_io',
  description: 'Weather for a city (2 ms of I/O)',
  parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c') }).strict(),
  execute: waitTwoMs,
});
function agentsInvokeWith(t, list) {
  return Promise.all(
    list.map((c) => {
      const args = JSON.stringify(c.arguments);
      return t.invoke(runContext, args, { toolCall: { type: 'function_call', callId: c.id, name: c.name, arguments: args } });
    }),
  );
}
// Both sides' rounds alternate (ours, theirs, ours, ...), so that a machine
// whose load changes during the run weighs on both alike.
async function measurePair(ours, theirs, n, reps) {
  const a = [];
  const b = [];
  const rounds = quick ? 3 : 7;
  for (let r = 0; r < rounds; r++) {
    a.push(await measureOnce(ours, n, reps, r === 0));
    b.push(await measureOnce(theirs, n, reps, r === 0));
  }
  const median = (xs, k) => xs.map((x) => x[k]).sort((p, q) => p - q)[Math.floor(xs.length / 2)];
  return [
    { median: median(a, 'median'), cpu: median(a, 'cpu') },
    { median: median(b, 'median'), cpu: median(b, 'cpu') },
  ];
}
async function measureOnce(op, n, repsGiven, warm) {
  const reps = repsGiven || (n === 1 ? (quick ? 500 : 2000) : quick ? 20 : 100);
  if (warm) for (let i = 0; i < reps; i++) await op();
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) await op();
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / reps;
  const c = process.cpuUsage(c0);
  return { median: wall, cpu: (c.user + c.system) / reps };
}
const PEER = 'openai-agents-js invoke';
const benchRows = [];
const row = (cas, tool, metric, capstan, peerValue, goal = null, met = null) =>
  benchRows.push({ binding: 'node', case: cas, tool, metric, capstan: +capstan.toFixed(2), peer: PEER, peer_value: +peerValue.toFixed(2), goal, met });
for (const [tool, name, peerTool] of [['trivial', 'get_weather', agentsWeather], ['2 ms I/O', 'get_weather_io', agentsWeatherIo]]) {
  const io = tool !== 'trivial';
  for (const n of [1, 100, 10000]) {
    const list = calls(n).map((c) => ({ ...c, name }));
    const reps = n === 10000 ? (quick ? 2 : 5) : io ? (n === 1 ? (quick ? 50 : 200) : quick ? 5 : 20) : 0;
    const [ours, peer] = await measurePair(() => registry.execute(list, { limit: n }), () => agentsInvokeWith(peerTool, list), n, reps);
    const cas = n === 1 ? 'lone call' : `${n === 100 ? '100' : '10000'} calls`;
    if (n === 1) {
      row(cas, tool, 'wall us/call', ours.median, peer.median, io ? null : '<= peer', io ? null : ours.median <= peer.median);
      row(cas, tool, 'cpu us/call', ours.cpu, peer.cpu, io ? null : '<= peer', io ? null : ours.cpu <= peer.cpu);
    } else if (io) {
      row(cas, tool, 'ms total', ours.median / 1000, peer.median / 1000);
      row(cas, tool, 'cpu us/call', ours.cpu / n, peer.cpu / n);
    } else {
      const goal = n === 100 ? '<= 0.5x peer' : null;
      row(cas, tool, 'cpu us/call', ours.cpu / n, peer.cpu / n, goal, goal ? ours.cpu <= 0.5 * peer.cpu : null);
      row(cas, tool, 'calls/s', (n * 1e6) / ours.median, (n * 1e6) / peer.median);
    }
  }
}

// --- what a koffi crossing costs ------------------------------------------------
// capstan_version_number (no work) and capstan_registry_pump with nothing
// queued: the per-crossing floor of any koffi binding, against which the
// host batch's three crossings per batch are counted.
function perCall(fn, n) {
  for (let i = 0; i < n; i++) fn();
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  const c = process.cpuUsage(c0);
  return { wall: Number(process.hrtime.bigint() - t0) / 1000 / n, cpu: (c.user + c.system) / n };
}
const crossings = [
  ['koffi call, no work (capstan_version_number)', perCall(() => api.version_number(), quick ? 100000 : 500000)],
  ['koffi call, a registry (capstan_registry_pump, nothing queued)', perCall(() => api.registry_pump(registry._ptr, 0), quick ? 100000 : 500000)],
];

// --- where a quick batch's time goes -------------------------------------------
// The host batch's three crossings with its JSON made beforehand (capstan's
// work plus koffi's, the lent texts decoded), the JSON the binding writes
// and reads as execute does (lib/host.cjs, lib/host_wire.cjs: the calls
// written, the handed-out calls read, the answers written, the results
// read), and the whole execute: CPU us per call, for 1 and 100 calls of the
// trivial tool.
const requireLib = createRequire(import.meta.url);
const { NTS, hostCalls, answerOf, toResults } = requireLib('../lib/host.cjs');
const { scanHanded, scanResults } = requireLib('../lib/host_wire.cjs');
const { koffi } = requireLib('../lib/native.cjs');
const wide = new BigUint64Array(3);
const [o0, o1, o2] = [wide.subarray(0, 1), wide.subarray(1, 2), wide.subarray(2, 3)];
const lent = () => koffi.decode.string(wide[1], Number(wide[2]));
const answersOf = (handed) =>
  '[' + handed.map((c) => answerOf(c.index, { city: c.arguments.city, unit: c.arguments.unit, temperature: 21 }, false)).join(',') + ']';
const split = [];
for (const n of [1, 100]) {
  const list = calls(n);
  const options = { limit: n };
  const text = hostCalls(registry, list, options);
  api.host_batch_begin(registry._ptr, text, NTS, null, o0, o1, o2);
  const handedText = lent();
  const handed = scanHanded(handedText) ?? JSON.parse(handedText);
  const answers = answersOf(handed);
  api.host_batch_finish(wide[0], answers, NTS, 0, o1, o2);
  const resultsText = lent();
  api.host_batch_free(wide[0]);
  const reps = Math.max(200, (quick ? 20000 : 100000) / n);
  const core = perCall(() => {
    api.host_batch_begin(registry._ptr, text, NTS, null, o0, o1, o2);
    lent();
    api.host_batch_finish(wide[0], answers, NTS, 0, o1, o2);
    lent();
    api.host_batch_free(wide[0]);
  }, reps);
  const json = perCall(() => {
    hostCalls(registry, list, options);
    const h = scanHanded(handedText) ?? JSON.parse(handedText);
    answersOf(h);
    if (scanResults(resultsText, h) === null) toResults(resultsText);
  }, reps);
  const [whole] = await measurePair(() => registry.execute(list, options), () => agentsInvoke(list), n, Math.max(20, (quick ? 20000 : 100000) / n / 5));
  split.push([n, core.cpu / n, json.cpu / n, whole.cpu / n]);
}
registry.close();

console.log(`node ${process.version}, capstan ${libraryPath}${quick ? ' (--quick)' : ''}`);
console.log(`ai generateText step with a text answer (no call): ${baseline.median.toFixed(1)} us wall, ${baseline.cpu.toFixed(1)} us CPU`);
console.log('| what | calls | wall us/op | CPU us/op | CPU us/call |');
console.log('|---|---:|---:|---:|---:|');
for (const [what, n, m] of rows) {
  console.log(`| ${what} | ${n} | ${m.median.toFixed(1)} | ${m.cpu.toFixed(1)} | ${(m.cpu / n).toFixed(2)} |`);
}
console.log('');
console.log('| crossing | wall us | CPU us |');
console.log('|---|---:|---:|');
for (const [what, m] of crossings) console.log(`| ${what} | ${m.wall.toFixed(3)} | ${m.cpu.toFixed(3)} |`);
console.log('');
console.log('| where a quick batch goes, CPU us per call | calls | host batch crossings (JSON given) | JSON written and read | the rest (JS) | execute |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [n, core, json, whole] of split) {
  console.log(`| get_weather, async | ${n} | ${core.toFixed(2)} | ${json.toFixed(2)} | ${(whole - core - json).toFixed(2)} | ${whole.toFixed(2)} |`);
}
console.log('');
console.log(`rows for make bench-bindings (capstan execute beside ${PEER}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}):`);
for (const r of benchRows) console.log(`BENCH-ROW ${JSON.stringify(r)}`);
