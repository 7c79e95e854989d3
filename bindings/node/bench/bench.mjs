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
//   CAPSTAN_LIB=target/release/libcapstan.so node bindings/node/bench/bench.mjs [--quick]
import { generateText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { tool as agentsTool, RunContext } from '@openai/agents-core';
import { Registry, libraryPath } from '../index.mjs';

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
async function measure(op, n) {
  const reps = n === 1 ? (quick ? 200 : 1000) : quick ? 10 : 50;
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
registry.close();

console.log(`node ${process.version}, capstan ${libraryPath}${quick ? ' (--quick)' : ''}`);
console.log(`ai generateText step with a text answer (no call): ${baseline.median.toFixed(1)} us wall, ${baseline.cpu.toFixed(1)} us CPU`);
console.log('| what | calls | wall us/op | CPU us/op | CPU us/call |');
console.log('|---|---:|---:|---:|---:|');
for (const [what, n, m] of rows) {
  console.log(`| ${what} | ${n} | ${m.median.toFixed(1)} | ${m.cpu.toFixed(1)} | ${(m.cpu / n).toFixed(2)} |`);
}
