package capstan_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

var askName = map[string]capstan.InputRequest{
	"name": {Method: capstan.AskElicitation, Params: map[string]any{
		"message": "What is your name?",
		"requestedSchema": map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
	}},
}

// rounds is what greetTool saw: each run's input.
type rounds struct {
	sync.Mutex
	seen []capstan.Input
}

func (r *rounds) runs() int { r.Lock(); defer r.Unlock(); return len(r.seen) }

func (r *rounds) last() capstan.Input { r.Lock(); defer r.Unlock(); return r.seen[len(r.seen)-1] }

// greetTool asks for a name (elicitation) with state "round-1", then greets
// with the name and the state it got back. wrap: it returns the
// InputRequired wrapped in another error.
func greetTool(r *rounds, wrap bool) capstan.Tool {
	return capstan.Tool{Name: "greet", Description: "Greets the user by name, asking for it first.",
		Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
			in := capstan.InputFrom(ctx)
			r.Lock()
			r.seen = append(r.seen, in)
			r.Unlock()
			var answer struct {
				Action  string `json:"action"`
				Content struct {
					Name string `json:"name"`
				} `json:"content"`
			}
			_ = json.Unmarshal(in.Responses["name"], &answer)
			if answer.Action != "accept" {
				var err error = &capstan.InputRequired{Requests: askName, State: "round-1"}
				if wrap {
					err = fmt.Errorf("greet needs a name: %w", err)
				}
				return nil, err
			}
			return fmt.Sprintf("Hello, %s! (state %s)", answer.Content.Name, in.State), nil
		}}
}

func TestACallerThatCannotAnswerGetsAToolErrorSayingWhy(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		r := &rounds{}
		reg := newRegistry(t, greetTool(r, wrap))
		// A lone Execute (the tool on the caller's thread), a batch (one
		// goroutine per call) and a Sequential one (capstan's pool threads).
		var results []capstan.Result
		results = append(results, execOne(t, reg, call("1", "greet", `{}`)))
		for _, opts := range [][]capstan.ExecOption{nil, {capstan.Sequential()}} {
			res, err := reg.Execute(context.Background(), []capstan.Call{call("a", "greet", `{}`), call("b", "greet", `{}`)}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, res...)
		}
		for _, res := range results {
			// capstan's reason, not the error's own text: the binding asked.
			if res.Outcome != capstan.OutcomeToolError || !strings.Contains(res.Content, `tool "greet" asked for input (elicitation/create), but its caller cannot be asked`) {
				t.Fatalf("wrap %v: %+v", wrap, res)
			}
		}
		if r.runs() != 5 {
			t.Fatalf("runs %d", r.runs())
		}
		for _, in := range r.seen {
			if len(in.CanAsk) != 0 || in.CanAsk == nil || in.Responses != nil || in.State != "" {
				t.Fatalf("a local caller's input: %+v", in)
			}
		}
	}
	if in := capstan.InputFrom(context.Background()); in.CanAsk == nil || len(in.CanAsk) != 0 {
		t.Fatalf("a ctx that is not a tool's: %+v", in)
	}
}

func TestInputRequestsCapstanRefusesEndTheCallWithItsReason(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "bad", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		return nil, &capstan.InputRequired{Requests: map[string]capstan.InputRequest{"k": {Method: "ping"}}}
	}}, capstan.Tool{Name: "nothing", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		return nil, &capstan.InputRequired{}
	}}, capstan.Tool{Name: "unencodable", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		return nil, &capstan.InputRequired{Requests: map[string]capstan.InputRequest{"k": {Method: capstan.AskRoots, Params: func() {}}}}
	}})
	for name, want := range map[string]string{
		"bad":         `"method" must be one of elicitation/create`,
		"nothing":     "none, and no state either",
		"unencodable": "the tool's input requests are not JSON",
	} {
		if r := execOne(t, reg, call("1", name, `{}`)); r.Outcome != capstan.OutcomeToolError || !strings.Contains(r.Content, want) {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	e := &capstan.InputRequired{Requests: askName}
	if e.Error() != "the tool asked for input: name (elicitation/create)" {
		t.Fatal(e.Error())
	}
}

// callModern is one stateless MCP 2026-07-28 tools/call of name declaring
// capabilities, with extra params: the JSON-RPC answer.
func callModern(t *testing.T, url, name string, capabilities []string, extra map[string]any) map[string]any {
	t.Helper()
	declared := map[string]any{}
	for _, c := range capabilities {
		declared[c] = map[string]any{}
	}
	params := map[string]any{"name": name, "arguments": map[string]any{},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": declared,
		}}
	for k, v := range extra {
		params[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	client := http.Client{Timeout: soon}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	// 400 carries the JSON-RPC errors the spec gives that status
	// (MissingRequiredClientCapability, -32021): the caller checks which.
	if err != nil || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest) {
		t.Fatalf("%d %s %v", resp.StatusCode, raw, err)
	}
	// Plain JSON, or the first server-sent event carrying a message.
	text := raw
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.HasPrefix(data, "{") {
			text = []byte(data)
			break
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(text, &msg); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return msg
}

func TestAnMCPClientAnswersWhatAGoToolAsksAndATamperedStateIsRefused(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPHTTP)
	r := &rounds{}
	reg := newRegistry(t, greetTool(r, false))
	srv, err := reg.ServeMCP(capstan.MCPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	all := []string{"elicitation", "sampling", "roots"}

	first := callModern(t, srv.URL(), "greet", all, nil)
	result, _ := first["result"].(map[string]any)
	if result["resultType"] != "input_required" || result["content"] != nil {
		t.Fatalf("first round: %v", first)
	}
	asked, _ := result["inputRequests"].(map[string]any)["name"].(map[string]any)
	if asked["method"] != capstan.AskElicitation || asked["params"].(map[string]any)["message"] != "What is your name?" {
		t.Fatalf("inputRequests: %v", first)
	}
	sealed, _ := result["requestState"].(string)
	if sealed == "" || strings.Contains(sealed, "round-1") {
		t.Fatalf("the state travels sealed, not as the tool gave it: %q", sealed)
	}
	if in := r.last(); !reflect.DeepEqual(in, capstan.Input{CanAsk: []string{capstan.AskElicitation, capstan.AskSampling, capstan.AskRoots}}) {
		t.Fatalf("the first round has no answers and no state: %+v", in)
	}

	answers := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	second := callModern(t, srv.URL(), "greet", all, map[string]any{"inputResponses": answers, "requestState": sealed})
	result, _ = second["result"].(map[string]any)
	content, _ := result["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["text"] != "Hello, Ada! (state round-1)" || result["isError"] == true {
		t.Fatalf("second round: %v", second)
	}
	in := r.last()
	want, _ := json.Marshal(answers["name"])
	if in.State != "round-1" || len(in.Responses) != 1 || !jsonEqual(in.Responses["name"], want) {
		t.Fatalf("the tool's second round: %+v", in)
	}

	// A changed state, or the tool's own unsealed, is refused before the tool runs.
	runs := r.runs()
	tampered := []byte(sealed)
	if tampered[len(tampered)-1] == 'A' {
		tampered[len(tampered)-1] = 'B'
	} else {
		tampered[len(tampered)-1] = 'A'
	}
	for _, state := range []string{string(tampered), "round-1"} {
		answer := callModern(t, srv.URL(), "greet", all, map[string]any{"inputResponses": answers, "requestState": state})
		e, _ := answer["error"].(map[string]any)
		if e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), "requestState failed its integrity check") {
			t.Fatalf("state %q: %v", state, answer)
		}
	}
	if r.runs() != runs {
		t.Fatalf("the tool ran on a refused round: %d runs, want %d", r.runs(), runs)
	}

	// A client that did not declare elicitation cannot be asked for it: the
	// tool's ask is refused, it fails, and the 2026-07-28 client gets
	// MissingRequiredClientCapability (-32021) naming elicitation.
	answer := callModern(t, srv.URL(), "greet", []string{"sampling"}, nil)
	e, _ := answer["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if e["code"] != float64(-32021) || fmt.Sprint(data["requiredCapabilities"]) != "map[elicitation:map[]]" {
		t.Fatalf("undeclared capability: %v", answer)
	}
	if in := r.last(); !reflect.DeepEqual(in.CanAsk, []string{capstan.AskSampling}) {
		t.Fatalf("canAsk %v", in.CanAsk)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
