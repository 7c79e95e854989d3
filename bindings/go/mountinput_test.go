package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// inputReleased waits (bounded) for capstan to release every mount's input
// hooks: it may do so on one of its threads soon after the mount let go.
func inputReleased(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(soon)
	for {
		live, doubles := capstan.InputHandles()
		if doubles != 0 {
			t.Fatalf("input hooks released %d times too many", doubles)
		}
		if live == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mounts' input hooks still held", live)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// asked is what a host's Answer was called with.
type asked struct {
	mu    sync.Mutex
	tools []string
	bad   []string // what was wrong with a request, if anything
}

func (a *asked) record(tool, method string, params json.RawMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tools = append(a.tools, tool)
	var p struct {
		Message string `json:"message"`
	}
	if method != capstan.AskElicitation || json.Unmarshal(params, &p) != nil || p.Message != "What is your name?" {
		a.bad = append(a.bad, method+" "+string(params))
	}
}

// servedGreet serves greetTool over MCP and returns its URL.
func servedGreet(t *testing.T) string {
	t.Helper()
	served := newRegistry(t, greetTool(&rounds{}, false))
	srv, err := served.ServeMCP(capstan.MCPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

func mountAnswering(url, version string, in *capstan.MountInput) capstan.MountOptions {
	return capstan.MountOptions{URL: url, Prefix: "in_", ProtocolVersion: version, ConnectTimeout: 60 * time.Second,
		CallTimeout: time.Minute, MaxReconnects: capstan.NeverReconnect, Input: in}
}

func TestAMountsHostAnswersWhatTheServerAsksInBothEras(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	url := servedGreet(t)
	reg := newRegistry(t)
	// "": 2026-07-28 (an InputRequiredResult, answered, the call sent
	// again); 2025-11-25: elicitation/create mid-call, answered in place.
	for version, wantTool := range map[string]string{"": "in_greet", "2025-11-25": ""} {
		a := &asked{}
		mount, err := reg.MountMCP(mountAnswering(url, version, &capstan.MountInput{
			Methods: []string{capstan.AskElicitation},
			Answer: func(ctx context.Context, tool, method string, params json.RawMessage) (json.RawMessage, error) {
				a.record(tool, method, params)
				if _, ok := ctx.Deadline(); !ok {
					return nil, errors.New("Answer's ctx has no deadline (CallTimeout)")
				}
				return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
			},
		}))
		if err != nil {
			t.Fatal(version, err)
		}
		r := execOne(t, reg, call("1", "in_greet", `{}`))
		if r.Outcome != capstan.OutcomeOK || r.Content != "Hello, Ada! (state round-1)" {
			t.Fatalf("%q: %+v", version, r)
		}
		if err := mount.Close(); err != nil {
			t.Fatal(err)
		}
		inputReleased(t)
		a.mu.Lock()
		// A 2026-07-28 request belongs to the call; an older one names none.
		if len(a.tools) != 1 || a.tools[0] != wantTool || len(a.bad) != 0 {
			t.Fatalf("%q: Answer saw tools %q, bad requests %q", version, a.tools, a.bad)
		}
		a.mu.Unlock()
	}
}

func TestAHostThatGivesNoAnswerFailsTheCallWithoutACrash(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	url := servedGreet(t)
	reg := newRegistry(t)
	huge := json.RawMessage(`{"action":"accept","content":{"name":"` + strings.Repeat("a", 1<<20) + `"}}`)
	for name, answer := range map[string]func(context.Context, string, string, json.RawMessage) (json.RawMessage, error){
		"nothing": func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) { return nil, nil },
		"an error": func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("the user closed the form")
		},
		"a panic":    func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) { panic("no UI") },
		"over 1 MiB": func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) { return huge, nil },
		"not JSON": func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{`), nil
		},
	} {
		var calls int
		var mu sync.Mutex
		mount, err := reg.MountMCP(mountAnswering(url, "", &capstan.MountInput{
			Methods: []string{capstan.AskElicitation},
			Answer: func(ctx context.Context, tool, method string, params json.RawMessage) (json.RawMessage, error) {
				mu.Lock()
				calls++
				mu.Unlock()
				return answer(ctx, tool, method, params)
			},
		}))
		if err != nil {
			t.Fatal(name, err)
		}
		r := execOne(t, reg, call("1", "in_greet", `{}`))
		want := "the host gave no answer to elicitation/create"
		if name == "not JSON" {
			want = "elicitation/create" // capstan says what is wrong with the answer
		}
		if r.Outcome != capstan.OutcomeToolError || !strings.Contains(r.Content, want) {
			t.Fatalf("%s: %+v", name, r)
		}
		if err := mount.Close(); err != nil {
			t.Fatal(err)
		}
		inputReleased(t)
		mu.Lock()
		if calls != 1 {
			t.Fatalf("%s: Answer called %d times", name, calls)
		}
		mu.Unlock()
	}
}

func TestBadMountInputIsRefusedAndReleasesTheHooksOnce(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	url := servedGreet(t)
	reg := newRegistry(t)
	answer := func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) { return nil, nil }
	for name, tc := range map[string]struct {
		in   capstan.MountInput
		want string
	}{
		"methods without Answer": {capstan.MountInput{Methods: []string{capstan.AskRoots}}, "without opts.input_answer"},
		"Answer without methods": {capstan.MountInput{Answer: answer}, "opts.input_methods"},
		"an unknown method":      {capstan.MountInput{Methods: []string{"ping"}, Answer: answer}, `"ping" is none of elicitation/create`},
	} {
		in := tc.in
		_, err := reg.MountMCP(mountAnswering(url, "", &in))
		var e *capstan.Error
		if !errors.Is(err, capstan.ErrInvalidArgument) || !errors.As(err, &e) || !strings.Contains(e.Message, tc.want) {
			t.Fatalf("%s: %v", name, err)
		}
		inputReleased(t)
	}
	if r := execOne(t, reg, call("1", "in_greet", `{}`)); r.Outcome != capstan.OutcomeUnknownTool {
		t.Fatalf("a refused mount registered its tools: %+v", r)
	}
}
