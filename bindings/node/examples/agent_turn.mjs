// One agent turn with capstan from Node.js: declare tools, send their
// definitions to the model, run the tool calls of its response concurrently
// on the event loop, and append the results to the conversation.
//
//   node examples/agent_turn.mjs                 # a recorded Anthropic response
//   node examples/agent_turn.mjs response.json   # any Messages API response body
//
// With a real model, `response` is the body of
//   await fetch('https://api.anthropic.com/v1/messages', { method: 'POST', headers, body: JSON.stringify(request) })
import { readFileSync } from 'node:fs';
import { Registry, ProviderError } from '../index.mjs';

const registry = new Registry();

registry.tool(
  {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: {
        location: { type: 'string' },
        options: {
          type: 'object',
          properties: { unit: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' } },
        },
      },
      required: ['location'],
    },
    timeoutMs: 5000,
  },
  async ({ location, options }) => {
    await new Promise((r) => setTimeout(r, 20)); // an HTTP call in a real tool
    return { location, temperature: 24, unit: options?.unit ?? 'celsius' };
  },
);
registry.tool({ name: 'get_time', description: 'The current UTC time' }, () => '2026-12-01T20:00:00Z');

const messages = [{ role: 'user', content: 'Weather in São Paulo, and the time?' }];
const request = { model: 'claude-sonnet-4-5', max_tokens: 1024, tools: registry.tools('anthropic'), messages };

// The model's answer: a Messages API response asking for two tools at once.
const response = process.argv[2]
  ? JSON.parse(readFileSync(process.argv[2], 'utf8'))
  : {
      id: 'msg_01Example',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'text', text: "I'll look up both." },
        { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { location: 'São Paulo, BR', options: { unit: 'celsius' } } },
        { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 512, output_tokens: 96 },
    };

try {
  const turn = await registry.runTurn('anthropic', response, { timeoutMs: 10000 });
  messages.push({ role: 'assistant', content: response.content }, turn.messages);
  for (const r of turn.results) console.log(`${r.name} (${r.id}): ${r.outcome} ${r.content}`);
  console.log(JSON.stringify({ ...request, messages }, null, 2));
} catch (e) {
  if (e instanceof ProviderError) console.error(`provider error ${e.provider.kind}: ${e.provider.message}`);
  throw e;
} finally {
  registry.close();
}
