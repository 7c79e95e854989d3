package capstan_test

// Progress, MCP tool metadata, Gemini lowering and the process-wide runtime
// (issue #34's parity rows).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

func TestReportProgressReachesTheEventHookAndBadReportsAreRefused(t *testing.T) {
	var mu sync.Mutex
	var seen []capstan.Event
	var toolCtx context.Context
	refused := make([]error, 4)
	seenAfterFirst := -1
	reg := newRegistry(t, capstan.Tool{Name: "steps", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		toolCtx = ctx
		if err := capstan.ReportProgress(ctx, 1, 4, "one"); err != nil {
			return nil, err
		}
		mu.Lock()
		seenAfterFirst = len(seen) // the hook ran before ReportProgress returned
		mu.Unlock()
		refused[0] = capstan.ReportProgress(ctx, 1, 4, "same value again")
		refused[1] = capstan.ReportProgress(ctx, math.NaN(), 0, "")
		refused[2] = capstan.ReportProgress(ctx, 5, -1, "")
		refused[3] = capstan.ReportProgress(ctx, 5, 0, "\xff")
		if err := capstan.ReportProgress(ctx, 2.5, 0, ""); err != nil {
			return nil, err
		}
		return "done", nil
	}})
	if err := reg.SetEventHook(func(e capstan.Event) {
		if e.Kind == capstan.EventProgress {
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, reg, call("c1", "steps", `{}`)); r.Content != "done" || r.IsError() {
		t.Fatalf("%+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if seenAfterFirst != 1 || len(seen) != 2 {
		t.Fatalf("progress events: %d after the first report, %d in all: %+v", seenAfterFirst, len(seen), seen)
	}
	if e := seen[0]; e.Progress != 1 || e.Total != 4 || e.Message != "one" || e.Tool != "steps" || e.ID != "c1" {
		t.Fatalf("first: %+v", e)
	}
	if e := seen[1]; e.Progress != 2.5 || e.Total != 0 || e.Message != "" {
		t.Fatalf("second: %+v", e)
	}
	for i, want := range []capstan.Status{capstan.ErrInvalidArgument, capstan.ErrInvalidArgument, capstan.ErrInvalidArgument, capstan.ErrInvalidUTF8} {
		if !errors.Is(refused[i], want) {
			t.Errorf("report %d: %v, want %v", i, refused[i], want)
		}
	}
	// After the tool returned, its call handle is stale.
	if err := capstan.ReportProgress(toolCtx, 3, 4, "late"); !errors.Is(err, capstan.ErrStaleHandle) {
		t.Fatalf("late report: %v", err)
	}
	if err := capstan.ReportProgress(context.Background(), 1, 0, ""); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("not a tool's ctx: %v", err)
	}
}

func TestReportProgressFromAToolOnAPoolThreadAndAGoroutine(t *testing.T) {
	var reports atomic.Int32
	reg := newRegistry(t, capstan.Tool{Name: "p", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		return nil, capstan.ReportProgress(ctx, 1, 1, "half")
	}})
	if err := reg.SetEventHook(func(e capstan.Event) {
		if e.Kind == capstan.EventProgress && e.Message == "half" {
			reports.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	// 3 calls with limit 2 run on pool threads; Sequential too; 2 on goroutines.
	calls := []capstan.Call{call("1", "p", `{}`), call("2", "p", `{}`), call("3", "p", `{}`)}
	for _, opts := range [][]capstan.ExecOption{{capstan.WithLimit(2)}, {capstan.Sequential()}, {}} {
		res, err := reg.Execute(context.Background(), calls, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.IsError() {
				t.Fatalf("%+v", r)
			}
		}
	}
	if n := reports.Load(); n != 9 {
		t.Fatalf("%d progress events, want 9", n)
	}
}

type weatherOut struct {
	Temp float64 `json:"temp"`
}

func metaTool() capstan.Tool {
	tool := capstan.Func("weather", "Current weather.", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (any, error) {
		if in.City == "bad" {
			return map[string]string{"temp": "hot"}, nil // fails the output schema
		}
		return weatherOut{Temp: 21.5}, nil
	})
	tool.MCP = &capstan.MCPMeta{
		Title: "Weather now",
		Annotations: &capstan.ToolAnnotations{Title: "Weather", ReadOnlyHint: capstan.Hint(true),
			DestructiveHint: capstan.Hint(false), OpenWorldHint: capstan.Hint(true)},
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`),
		Icons:        []capstan.Icon{{Src: "https://example.com/w.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "light"}},
	}
	return tool
}

// checkMeta checks an MCP Tool object (tools/list, FormatMCP) for metaTool's metadata.
func checkMeta(t *testing.T, where string, tool map[string]any) {
	t.Helper()
	ann, _ := tool["annotations"].(map[string]any)
	out, _ := tool["outputSchema"].(map[string]any)
	icons, _ := tool["icons"].([]any)
	if tool["title"] != "Weather now" || ann == nil || ann["readOnlyHint"] != true || ann["destructiveHint"] != false ||
		ann["title"] != "Weather" || out == nil || out["type"] != "object" || len(icons) != 1 {
		t.Fatalf("%s: %v", where, tool)
	}
	if icon := icons[0].(map[string]any); icon["src"] != "https://example.com/w.png" || icon["mimeType"] != "image/png" || icon["theme"] != "light" {
		t.Fatalf("%s icon: %v", where, icon)
	}
}

func TestMCPMetaReachesTheExportsAndTheOutputSchemaIsChecked(t *testing.T) {
	reg := newRegistry(t, metaTool())
	raw, err := reg.Tools(capstan.FormatMCP)
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(raw, &tools); err != nil || len(tools) != 1 {
		t.Fatalf("%s %v", raw, err)
	}
	checkMeta(t, "FormatMCP", tools[0])
	raw, err = reg.Tools(capstan.FormatDescribe)
	if err != nil {
		t.Fatal(err)
	}
	var described []map[string]any
	if err := json.Unmarshal(raw, &described); err != nil || len(described) != 1 {
		t.Fatalf("%s %v", raw, err)
	}
	mcp, _ := described[0]["mcp"].(map[string]any)
	if mcp == nil || mcp["title"] != "Weather now" {
		t.Fatalf("describe: %s", raw)
	}
	// Provider formats do not carry MCP metadata.
	if raw, _ := reg.Tools(capstan.FormatOpenAIChat); bytes.Contains(raw, []byte("Weather now")) {
		t.Fatalf("openai: %s", raw)
	}
	if r := execOne(t, reg, call("1", "weather", `{"city":"Lyon"}`)); r.IsError() || r.Content != `{"temp":21.5}` {
		t.Fatalf("%+v", r)
	}
	r := execOne(t, reg, call("2", "weather", `{"city":"bad"}`))
	if r.Outcome != capstan.OutcomeToolError || !strings.Contains(r.Content, "/temp") {
		t.Fatalf("a result failing the output schema: %+v", r)
	}
	// Metadata capstan refuses names the field; no tool is registered.
	bad := addTool()
	bad.Name = "bad_icon"
	bad.MCP = &capstan.MCPMeta{Icons: []capstan.Icon{{Src: "https://example.com/i.png", Theme: "blue"}}}
	if err := reg.Register(bad); !errors.Is(err, capstan.ErrInvalidArgument) || !strings.Contains(err.Error(), "theme") {
		t.Fatalf("bad theme: %v", err)
	}
	bad.MCP = &capstan.MCPMeta{OutputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":12}}}`)}
	if err := reg.Register(bad); !errors.Is(err, capstan.ErrInvalidSchema) {
		t.Fatalf("bad output schema: %v", err)
	}
	if raw, _ := reg.Tools(capstan.FormatDescribe); bytes.Contains(raw, []byte("bad_icon")) {
		t.Fatalf("a refused tool was registered: %s", raw)
	}
}

// mcpPost sends one JSON-RPC message to a streamable HTTP MCP server and
// returns the JSON-RPC response (a JSON body or the first SSE data line)
// and the session id.
func mcpPost(t *testing.T, url, session, body string) (map[string]any, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: HTTP %d %s", body, resp.StatusCode, text)
	}
	if session == "" {
		session = resp.Header.Get("Mcp-Session-Id")
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, session
	}
	payload := text
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(text), "\n") {
			if data := strings.TrimSpace(strings.TrimPrefix(line, "data:")); strings.HasPrefix(line, "data:") && data != "" {
				payload = []byte(data)
				break
			}
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(payload, &msg); err != nil {
		t.Fatalf("%s: %s (%v)", body, text, err)
	}
	return msg, session
}

func TestMCPMetaIsInTheServedToolsList(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPHTTP)
	reg := newRegistry(t, metaTool())
	checkMeta(t, "tools/list", servedOnlyTool(t, reg, capstan.MCPServerOptions{}))
}

func TestGeminiLoweringWritesTheOpenAPISubset(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "t", Func: func(context.Context, json.RawMessage) (any, error) { return "", nil },
		Schema: json.RawMessage(`{"type":"object","$defs":{"p":{"type":"string","pattern":"^x","const":"xy"}},
			"properties":{"v":{"$ref":"#/$defs/p"}},"required":["v"]}`)})
	decl := func(raw json.RawMessage) map[string]any {
		t.Helper()
		var doc []struct {
			FunctionDeclarations []map[string]any `json:"functionDeclarations"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 1 || len(doc[0].FunctionDeclarations) != 1 {
			t.Fatalf("%s %v", raw, err)
		}
		return doc[0].FunctionDeclarations[0]
	}
	plain, err := reg.Tools(capstan.FormatGemini)
	if err != nil {
		t.Fatal(err)
	}
	if fn := decl(plain); fn["parametersJsonSchema"] == nil || fn["parameters"] != nil {
		t.Fatalf("without lowering: %v", fn)
	}
	low, report, err := reg.ExportTools(capstan.FormatGemini, capstan.ExportOptions{GeminiLower: true})
	if err != nil {
		t.Fatal(err)
	}
	fn := decl(low)
	params, _ := fn["parameters"].(map[string]any)
	if fn["parametersJsonSchema"] != nil || params == nil || bytes.Contains(low, []byte("$ref")) || bytes.Contains(low, []byte("$defs")) {
		t.Fatalf("lowered: %s", low)
	}
	v, _ := params["properties"].(map[string]any)["v"].(map[string]any)
	enum, _ := v["enum"].([]any)
	if typ, _ := v["type"].(string); strings.ToLower(typ) != "string" || v["pattern"] != "^x" || len(enum) != 1 || enum[0] != "xy" {
		t.Fatalf("the $ref is not inlined, or const not written as enum: %s", low)
	}
	var rep []struct{ Tool, Pointer, Message string }
	if err := json.Unmarshal(report, &rep); err != nil {
		t.Fatalf("report %s: %v", report, err)
	}
	dropped := false
	for _, r := range rep {
		dropped = dropped || r.Tool == "t" && r.Pointer == "/$defs" && strings.Contains(r.Message, "dropped")
	}
	if !dropped {
		t.Fatalf("the dropped keyword is not reported: %s (lowered %s)", report, low)
	}
}

func TestConfigureRuntimeCapsThePoolThreads(t *testing.T) {
	var running, most atomic.Int32
	reg := newRegistry(t, capstan.Tool{Name: "slow", Func: func(context.Context, json.RawMessage) (any, error) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return "ok", nil
	}})
	if err := capstan.ConfigureRuntime(capstan.RuntimeOptions{Threads: 2, KeepAlive: time.Second}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := capstan.ConfigureRuntime(capstan.RuntimeOptions{}); err != nil {
			t.Error(err)
		}
	}()
	calls := make([]capstan.Call, 12)
	for i := range calls {
		calls[i] = call(strconvItoa(i), "slow", `{}`)
	}
	// 12 calls over the limit of 8 run on the pool, which has 2 threads.
	res, err := reg.Execute(context.Background(), calls, capstan.WithLimit(8))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.IsError() {
			t.Fatalf("%+v", r)
		}
	}
	if m := most.Load(); m > 2 || m < 1 {
		t.Fatalf("%d tools ran at once on a pool of 2 threads", m)
	}
	if err := capstan.ConfigureRuntime(capstan.RuntimeOptions{Threads: -1}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("negative threads: %v", err)
	}
}

func TestShutdownRuntimeJoinsThePoolAndCapstanGoesOnAfterIt(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	reg := newRegistry(t, addTool(), capstan.Tool{Name: "held", Func: func(context.Context, json.RawMessage) (any, error) {
		started <- struct{}{}
		<-release
		return "released", nil
	}})
	// Sequential: the call runs on a pool thread, which the tool holds.
	batch, err := reg.Submit(context.Background(), []capstan.Call{call("h", "held", `{}`)}, capstan.Sequential())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(soon):
		t.Fatal("the held tool never started")
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err = capstan.ShutdownRuntime(short)
	cancel()
	if !errors.Is(err, capstan.ErrTimeout) {
		t.Fatalf("shutdown with a tool running on a pool thread: %v", err)
	}
	close(release)
	res, err := batch.Wait(context.Background())
	if err != nil || res[0].Content != "released" {
		t.Fatalf("%+v %v", res, err)
	}
	long, cancel := context.WithTimeout(context.Background(), soon)
	defer cancel()
	if err := capstan.ShutdownRuntime(long); err != nil {
		t.Fatalf("a capstan thread was left running: %v", err)
	}
	// The next call starts the threads it needs again.
	res, err = reg.Execute(context.Background(), []capstan.Call{call("1", "add", `{"a":1,"b":2}`)}, capstan.Sequential())
	if err != nil || res[0].Content != "3" {
		t.Fatalf("after shutdown: %+v %v", res, err)
	}
}

func TestServerToolsMetaIsInTheServedToolsListAndBadMetaIsRefused(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPHTTP)
	reg := newRegistry(t, capstan.Tool{Name: "plain", Func: func(context.Context, json.RawMessage) (any, error) { return "ok", nil },
		Schema: json.RawMessage(`{"type":"object"}`)})
	if _, err := reg.ServeMCP(capstan.MCPServerOptions{ToolsMeta: json.RawMessage(`{"plain":`)}); err == nil {
		t.Fatal("ToolsMeta that is not JSON was accepted")
	}
	tool := servedOnlyTool(t, reg, capstan.MCPServerOptions{
		ToolsMeta: json.RawMessage(`{"plain":{"title":"Plain, from the server","annotations":{"readOnlyHint":true}}}`)})
	annotations, _ := tool["annotations"].(map[string]any)
	if tool["title"] != "Plain, from the server" || annotations["readOnlyHint"] != true {
		t.Fatalf("the server's ToolsMeta is not in tools/list: %v", tool)
	}
}

// servedOnlyTool serves reg over HTTP with opts (stopped when the test
// ends), opens a session (initialize, initialized) and returns the one tool
// of its tools/list; it fails the test if serving fails or the list does not
// hold exactly one tool.
func servedOnlyTool(t *testing.T, reg *capstan.Registry, opts capstan.MCPServerOptions) map[string]any {
	t.Helper()
	srv, err := reg.ServeMCP(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	init, session := mcpPost(t, srv.URL(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`)
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	mcpPost(t, srv.URL(), session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list, _ := mcpPost(t, srv.URL(), session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	result, _ := list["result"].(map[string]any)
	tools, _ := result["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools/list: %v", tools)
	}
	tool, _ := tools[0].(map[string]any)
	return tool
}
