// Type-checked by test/types.test.cjs (tsc --noEmit): the ESM view of index.d.ts.
import capstan, {
  Registry,
  ProviderError,
  CapstanError,
  parseCalls,
  formatResults,
  checkHistory,
  Image,
  File,
  type ToolResult,
  type StreamTurn,
  type SearchHit,
  type LogLevel,
  InputRequired,
  runtime,
} from 'capstan';
runtime.configure({ threads: 4 });
const joined: boolean = await runtime.shutdown(1000);
void joined;

const reg = new Registry({ coerce: true });
reg
  .tool<{ city: string }>({ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, async ({ city }, ctx) => {
    const cancelled: boolean = ctx.cancelled();
    const reported: boolean = ctx.progress(1, 2, 'half');
    // @ts-expect-error: progress is a number
    ctx.progress('1');
    const level: LogLevel = 'warning';
    const logged: boolean = ctx.log(level, 'half way');
    ctx.log('emergency', 'down');
    // @ts-expect-error: a level is one of MCP's names
    ctx.log('verbose', 'x');
    // @ts-expect-error: the message is a string
    ctx.log('info', 1);
    void reported;
    void logged;
    return { city, cancelled, id: ctx.id };
  })
  .tool('get_time', () => '12:00')
  .tool('greet', (_args, ctx) => {
    const canAsk: string[] = ctx.input.canAsk;
    const answer = ctx.input.inputResponses?.name;
    if (answer?.action !== 'accept' || !canAsk.length) {
      throw new InputRequired({ name: { method: 'elicitation/create', params: { message: 'Name?' } } }, ctx.input.requestState ?? 'asked');
    }
    // @ts-expect-error: not a method a tool can ask for
    new InputRequired({ k: { method: 'ping' } });
    return `Hello, ${answer.content.name}`;
  })
  .tool(
    {
      name: 'sum',
      title: 'Sum',
      annotations: { readOnlyHint: true },
      outputSchema: { type: 'object', properties: { sum: { type: 'integer' } } },
      icons: [{ src: 'https://example.com/s.png', theme: 'dark' }],
    },
    () => ({ sum: 1 }),
  )
  .tool({ name: 'chart', deferred: true }, () => ['a chart', new Image(new Uint8Array(8), 'image/png'), new File(new ArrayBuffer(2), 'application/pdf', 'r.pdf')])
  .addSearchTool({ name: 'find', limit: 3, regex: false });
const hits: SearchHit[] = reg.search('time', { limit: 2 });
hits[0].score.toFixed();
reg.unloadTools();
const check = checkHistory('openai_chat', [], { repair: true });
check.findings.map((f) => f.kind === 'missing_result' && f.entry);
// @ts-expect-error: MCP has no conversations
checkHistory('mcp', []);
reg.setEventHook((e) => (e.kind === 'progress' ? e.progress?.toFixed() : e.outcome?.length));
reg.setEventHook((e) => {
  const level: LogLevel | undefined = e.kind === 'log' ? e.level : undefined;
  // @ts-expect-error: a level is one of MCP's names
  const wrong: 'verbose' | undefined = e.level;
  void level;
  void wrong;
});
// @ts-expect-error: events have these kinds only
reg.setEventHook((e) => e.kind === 'begun');
reg.setEventHook(null);
reg.setApprover(async (req) => (req.tool === 'get_time' ? true : { approve: false, reason: 'no' }));

const results: ToolResult[] = await reg.execute([{ id: '1', name: 'get_time', arguments: {} }], { limit: 4, approvedIds: ['1'] });
const outcome: 'ok' | 'tool_error' | 'invalid_arguments' | 'unknown_tool' | 'timeout' | 'cancelled' | 'denied' = results[0].outcome;
results[0].parts?.map((p) => p.type);
for await (const r of reg.submit({ id: '2', name: 'get_time' })) r.durationUs.toFixed();
const turn = await reg.runTurn('anthropic', { content: [] });
turn.calls.map((c) => c.name);
formatResults('gemini', turn.results);
parseCalls('mcp', '[]');
const streamed: StreamTurn = await reg.runStream('openai_chat', new Uint8Array(), { onText: (t) => t.length });
streamed.cutCalls.at(0);
// A fetch() Response, structurally (no DOM typings here).
declare const response: { ok: boolean; status: number; body: { getReader(): { read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>; releaseLock(): void } } | null };
await reg.runStream('anthropic', response);
const s = reg.stream('gemini', { earlyDispatch: true });
s.feed('data: {}\n\n');
await s.finish();
try {
  parseCalls('openai_chat', {});
} catch (e) {
  if (e instanceof ProviderError) e.provider.retryAfterMs?.toFixed();
  if (e instanceof CapstanError) e.status.toLowerCase();
}
capstan.version.length;
const server = reg.serve({ allowedHosts: ['example.com'], toolsMeta: { get_time: { title: 'Time' } } });
const mount = await new Registry().mount({ url: server.url, headers: { Authorization: 'Bearer x' } });
const connected: boolean = mount.info().connected;
void connected;
await mount.close();
await server.stop();
// @ts-expect-error: command is an array
void new Registry().mount({ command: 'node server.js' });
void new Registry().mount({
  url: 'https://mcp.example.com/mcp',
  oauth: {
    authorize: async (url: string) => `http://127.0.0.1:8976/callback?from=${encodeURIComponent(url)}`,
    redirectUri: 'http://127.0.0.1:8976/callback',
    scopes: ['tools'],
    tokens: { load: () => null, save: (json: string | null) => void json },
  },
});
void new Registry().mount({
  url: 'https://mcp.example.com/mcp',
  oauth: { clientId: 'svc-1', clientKey: '-----BEGIN PRIVATE KEY-----\n...' },
});
void new Registry().mount({
  url: 'https://mcp.example.com/mcp',
  oauth: {
    clientId: 'host-1',
    assertion: async (audience: string) => `id-token-for-${audience}`,
    identityProvider: { issuer: 'https://idp.example.com', tokenEndpoint: 'https://idp.example.com/token', clientId: 'host-1' },
  },
});
// @ts-expect-error: the identity provider needs its token endpoint and client id
void new Registry().mount({ url: 'https://mcp.example.com/mcp', oauth: { assertion: () => null, identityProvider: { issuer: 'https://idp.example.com' } } });
// @ts-expect-error: assertion returns the JWT
void new Registry().mount({ url: 'https://mcp.example.com/mcp', oauth: { assertion: () => 42 } });
// @ts-expect-error: authorize returns the redirect URL
void new Registry().mount({ url: 'https://mcp.example.com/mcp', oauth: { authorize: async () => 42 } });
void new Registry().mount({
  url: 'https://mcp.example.com/mcp',
  input: async (tool: string | null, method, params) => (method === 'roots/list' ? { roots: [] } : { action: 'accept', content: { tool, params } }),
  inputMethods: ['elicitation/create', 'roots/list'],
});
// @ts-expect-error: not a method a server may ask
void new Registry().mount({ url: 'https://mcp.example.com/mcp', input: () => null, inputMethods: ['ping'] });
void outcome;
// @ts-expect-error: not a format
parseCalls('openai_chatt', {});
// @ts-expect-error: streams take no MCP
reg.stream('mcp');
// @ts-expect-error: a tool needs a function
reg.tool('x', 'not a function');
reg.close();
