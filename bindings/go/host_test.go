package capstan_test

// Quick tools (Tool.Quick): Execute hands their checked calls to the binding
// in one host batch (host.go). These tests hold the rules a user relies on:
// the same results as the callback path, no call handle, cancellation by
// ctx and Close, and the cases that keep the callback path.

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

func quick(t capstan.Tool) capstan.Tool {
	t.Quick = true
	return t
}

// hasHandle is a tool that says whether its call has a capstan call handle
// (ReportProgress works only with one).
func hasHandle(name string) capstan.Tool {
	return capstan.Tool{Name: name, Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		err := capstan.ReportProgress(ctx, 1, 2, "")
		info, _ := capstan.CallInfoFrom(ctx)
		return map[string]any{"handle": err == nil, "id": info.ID, "tool": info.Tool}, nil
	}}
}

func TestQuickToolRunsWithoutACallHandleInAHostBatch(t *testing.T) {
	reg := newRegistry(t, quick(hasHandle("fast")), hasHandle("slow"))
	res, err := reg.Execute(context.Background(), []capstan.Call{
		call("a", "fast", `{}`), call("b", "slow", `{}`), call("c", "fast", `{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"handle":false,"id":"a","tool":"fast"}`,
		`{"handle":true,"id":"b","tool":"slow"}`,
		`{"handle":false,"id":"c","tool":"fast"}`,
	}
	for i, r := range res {
		if r.IsError() || r.Content != want[i] || r.Index != i || r.ID != string(rune('a'+i)) {
			t.Errorf("result %d: %+v, want content %s", i, r, want[i])
		}
	}
}

// Every kind of result and failure reads the same from a Quick tool as
// from the same tool on the callback path.
func TestQuickToolResultsMatchTheCallbackPath(t *testing.T) {
	kinds := capstan.Tool{Name: "kinds", Schema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}`),
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			var in struct{ K string }
			_ = json.Unmarshal(args, &in)
			switch in.K {
			case "text":
				return "héllo \"quoted\"\n\tline", nil
			case "json":
				return json.RawMessage(` {"b": [1, 2.50, true], "a": null} `), nil
			case "badjson":
				return json.RawMessage(`{"a":`), nil
			case "bytes":
				return []byte("raw bytes"), nil
			case "struct":
				return struct {
					N int    `json:"n"`
					S string `json:"s"`
				}{3, "<x>"}, nil
			case "parts":
				return capstan.Parts{capstan.Text("one"), capstan.Text("two")}, nil
			case "error":
				return nil, errors.New("it failed: \u2603")
			case "panic":
				panic("boom")
			case "input":
				return nil, &capstan.InputRequired{Requests: map[string]capstan.InputRequest{}}
			}
			return nil, nil
		}}
	var calls []capstan.Call
	for _, k := range []string{"text", "json", "badjson", "bytes", "struct", "parts", "error", "panic", "input", "nil"} {
		calls = append(calls, call("id_"+k, "kinds", `{"k":"`+k+`"}`))
	}
	calls = append(calls, call("bad", "kinds", `{"k":7}`), call("none", "missing", `{}`), capstan.Call{Name: "kinds", Arguments: json.RawMessage(`{"k":"text"}`)})
	run := func(tool capstan.Tool) []capstan.Result {
		res, err := newRegistry(t, tool).Execute(context.Background(), calls, capstan.WithLimit(len(calls)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range res {
			res[i].Duration = 0
		}
		return res
	}
	slow, fast := run(kinds), run(quick(kinds))
	for i := range calls {
		s, f := slow[i], fast[i]
		if calls[i].ID == "id_input" {
			// The one difference: a Quick call cannot ask for input.
			if f.Outcome != capstan.OutcomeToolError || f.Content != `Tool "kinds" asked for input, which a Quick tool cannot do (it has no call handle)` {
				t.Errorf("input request of a Quick tool: %+v", f)
			}
			continue
		}
		if calls[i].ID == "id_badjson" {
			if f.Outcome != capstan.OutcomeToolError || s.Outcome != capstan.OutcomeToolError {
				t.Errorf("malformed JSON: callback %+v, quick %+v", s, f)
			}
			continue
		}
		if !reflect.DeepEqual(s, f) {
			t.Errorf("call %d:\ncallback %+v\nquick    %+v", i, s, f)
		}
	}
	if fast[0].Content != "héllo \"quoted\"\n\tline" || fast[1].Content != `{"b":[1,2.5,true],"a":null}` {
		t.Errorf("text and JSON results: %q %q", fast[0].Content, fast[1].Content)
	}
	if fast[5].Parts == nil || fast[10].Outcome != capstan.OutcomeInvalidArguments || fast[11].Outcome != capstan.OutcomeUnknownTool || fast[12].ID != "call_12" {
		t.Errorf("parts, invalid, unknown, generated id: %+v %+v %+v %+v", fast[5], fast[10], fast[11], fast[12])
	}
}

func TestQuickToolContextEndsWithExecutesContext(t *testing.T) {
	started := make(chan struct{}, 2)
	var sawCancel atomic.Int32
	block := quick(capstan.Tool{Name: "block", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			sawCancel.Add(1)
			return nil, ctx.Err()
		case <-time.After(eternal):
			return "never", nil
		}
	}})
	reg := newRegistry(t, block)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		<-started
		cancel()
	}()
	done := make(chan struct{})
	var res []capstan.Result
	var err error
	go func() {
		defer close(done)
		res, err = reg.Execute(ctx, []capstan.Call{call("a", "block", `{}`), call("b", "block", `{}`)})
	}()
	select {
	case <-done:
	case <-time.After(soon):
		t.Fatal("Execute did not return after its ctx ended")
	}
	if !errors.Is(err, context.Canceled) || len(res) != 2 {
		t.Fatalf("err %v, %d results", err, len(res))
	}
	for _, r := range res {
		if r.Outcome != capstan.OutcomeCancelled {
			t.Errorf("result %+v, want cancelled", r)
		}
	}
	if sawCancel.Load() != 2 {
		t.Errorf("%d tools saw their ctx end, want 2", sawCancel.Load())
	}
}

func TestCloseEndsRunningQuickTools(t *testing.T) {
	started := make(chan struct{})
	block := quick(capstan.Tool{Name: "block", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(block); err != nil {
		t.Fatal(err)
	}
	done := make(chan []capstan.Result)
	go func() {
		res, _ := reg.Execute(context.Background(), []capstan.Call{call("a", "block", `{}`), call("b", "missing", `{}`)})
		done <- res
	}()
	<-started
	closed := make(chan error)
	go func() { closed <- reg.Close() }()
	select {
	case res := <-done:
		if len(res) != 2 || res[0].Outcome == capstan.OutcomeOK || res[1].Outcome != capstan.OutcomeUnknownTool {
			t.Errorf("results after Close: %+v", res)
		}
	case <-time.After(soon):
		t.Fatal("Execute did not return after Close")
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(soon):
		t.Fatal("Close did not return")
	}
}

// A Quick tool with a Timeout, or a batch with a timeout, a deadline or more
// calls than its limit, keeps the callback path: capstan's clock acts on
// the call through its handle.
func TestQuickToolKeepsTheHandleWhereCapstansClockActs(t *testing.T) {
	timed := quick(hasHandle("timed"))
	timed.Timeout = time.Minute
	reg := newRegistry(t, timed, quick(hasHandle("fast")))
	handle := func(name string, n int, opts ...capstan.ExecOption) bool {
		calls := make([]capstan.Call, n)
		for i := range calls {
			calls[i] = call("c"+strconvItoa(i), name, `{}`)
		}
		res, err := reg.Execute(context.Background(), calls, opts...)
		if err != nil || res[n-1].IsError() {
			t.Fatal(err, res)
		}
		return res[n-1].Content[:14] == `{"handle":true`
	}
	if !handle("timed", 2) {
		t.Error("a Quick tool with a Timeout ran without its handle")
	}
	if handle("fast", 2) {
		t.Error("a Quick tool ran with a handle")
	}
	for name, opt := range map[string]capstan.ExecOption{
		"timeout": capstan.WithTimeout(time.Minute), "deadline": capstan.WithDeadline(time.Minute),
		"sequential": capstan.Sequential(),
	} {
		if !handle("fast", 2, opt) {
			t.Errorf("with a %s, a Quick tool ran without its handle", name)
		}
	}
	if !handle("fast", 3, capstan.WithLimit(2)) {
		t.Error("a batch over its limit ran a Quick tool without its handle")
	}
	// A Quick tool that needs the approver keeps its handle, and so does a
	// Quick tool in a batch with such a tool.
	asked := quick(hasHandle("asked"))
	asked.RequiresApproval = true
	if err := reg.Register(asked); err != nil {
		t.Fatal(err)
	}
	if err := reg.SetApprover(func(context.Context, capstan.Approval) capstan.Decision { return capstan.Approve() }); err != nil {
		t.Fatal(err)
	}
	if !handle("asked", 2) {
		t.Error("a Quick tool that requires approval ran without its handle")
	}
	res, err := reg.Execute(context.Background(), []capstan.Call{call("a", "asked", `{}`), call("b", "fast", `{}`)})
	if err != nil || res[1].Content[:14] != `{"handle":true` {
		t.Errorf("a Quick tool beside one that requires approval: %+v %v", res, err)
	}
}

func TestManyQuickCallsEachRunOnceInCallOrder(t *testing.T) {
	var ran atomic.Int32
	tool := quick(capstan.Tool{Name: "count", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		ran.Add(1)
		info, _ := capstan.CallInfoFrom(ctx)
		return info.ID, nil
	}})
	reg := newRegistry(t, tool)
	calls := make([]capstan.Call, 500)
	for i := range calls {
		calls[i] = call("c"+strconvItoa(i), "count", `{}`)
	}
	res, err := reg.Execute(context.Background(), calls, capstan.WithLimit(500))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.IsError() || r.Index != i || r.ID != calls[i].ID || r.Content != calls[i].ID {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if ran.Load() != 500 {
		t.Errorf("ran %d calls, want 500", ran.Load())
	}
}

func TestQuickCallsThatAllFailTheirChecksHaveTheirResults(t *testing.T) {
	reg := newRegistry(t, quick(addTool()))
	res, err := reg.Execute(context.Background(), []capstan.Call{call("a", "add", `{"a":"x"}`), call("b", "nope", `{}`)})
	if err != nil || len(res) != 2 || res[0].Outcome != capstan.OutcomeInvalidArguments || res[1].Outcome != capstan.OutcomeUnknownTool {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestUnregisteredQuickToolIsUnknown(t *testing.T) {
	reg := newRegistry(t, quick(hasHandle("fast")))
	if err := reg.Unregister("fast"); err != nil {
		t.Fatal(err)
	}
	res, err := reg.Execute(context.Background(), []capstan.Call{call("a", "fast", `{}`), call("b", "fast", `{}`)})
	if err != nil || res[0].Outcome != capstan.OutcomeUnknownTool {
		t.Fatal(err, res)
	}
	// Replaced by a tool that is not Quick: its calls get a handle again.
	if err := reg.Register(hasHandle("fast")); err != nil {
		t.Fatal(err)
	}
	res, err = reg.Execute(context.Background(), []capstan.Call{call("a", "fast", `{}`), call("b", "fast", `{}`)})
	if err != nil || res[1].Content[:14] != `{"handle":true` {
		t.Fatal(err, res)
	}
}
