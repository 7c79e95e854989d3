package capstan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

func guardedTool(name string, ran *atomic.Int32) capstan.Tool {
	return capstan.Tool{Name: name, RequiresApproval: true,
		Func: func(context.Context, json.RawMessage) (any, error) { ran.Add(1); return "paid", nil }}
}

func TestNeedsApprovalListsGuardedCallsNotApprovedAndRunsNothing(t *testing.T) {
	var ran atomic.Int32
	reg := newRegistry(t, addTool(), guardedTool("pay", &ran))
	calls := []capstan.Call{call("a", "add", `{"a":1,"b":2}`), call("p1", "pay", `{}`), call("p2", "pay", `{}`)}
	pending, err := reg.NeedsApproval(calls, capstan.WithApproved("p2"))
	if err != nil {
		t.Fatal(err)
	}
	want := []capstan.PendingCall{{Index: 1, ID: "p1", Name: "pay"}}
	if len(pending) != 1 || pending[0] != want[0] {
		t.Fatalf("pending %+v, want %+v", pending, want)
	}
	if pending, err = reg.NeedsApproval(calls, capstan.WithApproved("p1", "p2")); err != nil || len(pending) != 0 {
		t.Fatalf("all approved: %+v %v", pending, err)
	}
	if ran.Load() != 0 {
		t.Fatal("NeedsApproval ran a tool")
	}
	// Arguments that are not JSON are that call's problem when it runs
	// (invalid_arguments); its tool still needs approval.
	if pending, err := reg.NeedsApproval([]capstan.Call{call("x", "pay", `{`)}); err != nil || len(pending) != 1 || pending[0].ID != "x" {
		t.Fatalf("calls that are not JSON: %+v %v", pending, err)
	}
}

func TestDeadlineEndsCallsThatWaitOrRun(t *testing.T) {
	sawCancel := make(chan struct{})
	var ran atomic.Int32
	reg := newRegistry(t, guardedTool("pay", &ran), capstan.Tool{Name: "wait",
		Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
			select {
			case <-ctx.Done():
				close(sawCancel)
				return nil, ctx.Err()
			case <-time.After(soon): // fails the test without hanging it
				return "never", nil
			}
		}})
	// An approver that does not decide in time: only the deadline ends the wait.
	if err := reg.SetApprover(func(ctx context.Context, _ capstan.Approval) capstan.Decision {
		select {
		case <-ctx.Done():
		case <-time.After(soon):
		}
		return capstan.Approve()
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2} { // a lone call, and a batch
		calls := []capstan.Call{call("w", "wait", `{}`), call("p", "pay", `{}`)}[:n]
		res, err := reg.Execute(context.Background(), calls, capstan.WithDeadline(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Outcome != capstan.OutcomeTimeout || !strings.Contains(r.Content, "deadline") && !strings.Contains(r.Content, "approval") {
				t.Fatalf("%d calls: %+v", n, r)
			}
		}
		if n == 2 && !strings.Contains(res[1].Content, "approval") {
			t.Fatalf("the guarded call's result does not say it waited for approval: %q", res[1].Content)
		}
		select {
		case <-sawCancel:
		case <-time.After(soon):
			t.Fatal("the running tool never saw its ctx end at the deadline")
		}
		sawCancel = make(chan struct{})
	}
	if ran.Load() != 0 {
		t.Fatal("a call that was never approved ran")
	}
	if _, err := reg.Execute(context.Background(), nil, capstan.WithDeadline(-time.Second)); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("negative deadline: %v", err)
	}
}

func searchTools() []capstan.Tool {
	noop := func(context.Context, json.RawMessage) (any, error) { return "sunny", nil }
	return []capstan.Tool{
		{Name: "get_weather", Description: "Current weather for a city.", Func: noop, Deferred: true},
		{Name: "send_email", Description: "Send an email to someone.", Func: noop},
		addTool(),
	}
}

func TestSearchFindsToolsByWordsAndByRegex(t *testing.T) {
	reg := newRegistry(t, searchTools()...)
	found, err := reg.Search("what is the weather", capstan.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 || found[0].Name != "get_weather" || found[0].Description != "Current weather for a city." || found[0].Score <= 0 {
		t.Fatalf("words: %+v", found)
	}
	found, err = reg.Search("^send_", capstan.SearchOptions{Regex: true, Limit: 1})
	if err != nil || len(found) != 1 || found[0].Name != "send_email" {
		t.Fatalf("regex: %+v %v", found, err)
	}
	for _, bad := range []struct {
		query string
		opts  capstan.SearchOptions
	}{{"", capstan.SearchOptions{}}, {"x", capstan.SearchOptions{Limit: 101}}, {"(", capstan.SearchOptions{Regex: true}}} {
		if _, err := reg.Search(bad.query, bad.opts); !errors.Is(err, capstan.ErrInvalidArgument) {
			t.Errorf("Search(%q, %+v): %v, want ErrInvalidArgument", bad.query, bad.opts, err)
		}
	}
}

func exported(t *testing.T, reg *capstan.Registry, name string) bool {
	t.Helper()
	tools, err := reg.Tools(capstan.FormatOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(tools, []byte(`"`+name+`"`))
}

func TestSearchToolLoadsDeferredToolsUntilUnloaded(t *testing.T) {
	reg := newRegistry(t, searchTools()...)
	if err := reg.AddSearchTool(capstan.SearchToolOptions{Name: "find_tools", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if exported(t, reg, "get_weather") || !exported(t, reg, "send_email") || !exported(t, reg, "find_tools") {
		t.Fatal("a deferred tool was exported before any search, or a plain one was not")
	}
	if describe, _ := reg.Tools(capstan.FormatDescribe); !bytes.Contains(describe, []byte(`"get_weather"`)) {
		t.Fatal("the describe format leaves a deferred tool out")
	}
	// Callable before it was found.
	if r := execOne(t, reg, call("1", "get_weather", `{}`)); r.Outcome != capstan.OutcomeOK || r.Content != "sunny" {
		t.Fatalf("%+v", r)
	}
	r := execOne(t, reg, call("2", "find_tools", `{"query":"weather in a city"}`))
	var found struct {
		Tools []struct{ Name, Description string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.Content), &found); err != nil || len(found.Tools) == 0 || found.Tools[0].Name != "get_weather" {
		t.Fatalf("search tool result %q (%v)", r.Content, err)
	}
	if !exported(t, reg, "get_weather") {
		t.Fatal("a deferred tool the search found is not exported")
	}
	if err := reg.UnloadTools(); err != nil {
		t.Fatal(err)
	}
	if exported(t, reg, "get_weather") {
		t.Fatal("UnloadTools kept the deferred tool in the export")
	}
	if err := reg.AddSearchTool(capstan.SearchToolOptions{Name: "bad name"}); !errors.Is(err, capstan.ErrInvalidName) {
		t.Fatalf("bad name: %v", err)
	}
	if err := reg.AddSearchTool(capstan.SearchToolOptions{Limit: -1}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("bad limit: %v", err)
	}
}

func TestCheckHistoryFindsAndRepairsAMissingResult(t *testing.T) {
	history := []byte(`{"model":"gpt-4.1","messages":[
		{"role":"user","content":"add 1 and 2"},
		{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{}"}}]},
		{"role":"user","content":"well?"}]}`)
	report, err := capstan.CheckHistory(capstan.FormatOpenAIChat, history, capstan.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || len(report.Findings) != 1 || report.Findings[0].Kind != "missing_result" ||
		report.Findings[0].Entry != 1 || report.Findings[0].CallID != "c1" || report.Repaired != nil {
		t.Fatalf("check: %+v", report)
	}
	report, err = capstan.CheckHistory(capstan.FormatOpenAIChat, history, capstan.HistoryOptions{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || report.Findings[0].Repair == "" {
		t.Fatalf("repair: %+v", report)
	}
	var body struct {
		Model    string
		Messages []map[string]any
	}
	if err := json.Unmarshal(report.Repaired, &body); err != nil || body.Model != "gpt-4.1" || len(body.Messages) != 4 ||
		body.Messages[2]["role"] != "tool" || body.Messages[2]["tool_call_id"] != "c1" {
		t.Fatalf("repaired %s (%v)", report.Repaired, err)
	}
	again, err := capstan.CheckHistory(capstan.FormatOpenAIChat, report.Repaired, capstan.HistoryOptions{})
	if err != nil || !again.OK || len(again.Findings) != 0 {
		t.Fatalf("the repaired history: %+v %v", again, err)
	}
	if _, err := capstan.CheckHistory(capstan.FormatDescribe, history, capstan.HistoryOptions{}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("describe: %v", err)
	}
	if _, err := capstan.CheckHistory(capstan.FormatAnthropic, []byte(`{"messages":`), capstan.HistoryOptions{}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("not JSON: %v", err)
	}
}

func TestCheckHistoryRequiresGeminiSignaturesWhenAsked(t *testing.T) {
	history := []byte(`[{"role":"model","parts":[{"functionCall":{"name":"add","args":{}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"add","response":{"output":3}}}]}]`)
	plain, err := capstan.CheckHistory(capstan.FormatGemini, history, capstan.HistoryOptions{})
	if err != nil || !plain.OK {
		t.Fatalf("without the flag: %+v %v", plain, err)
	}
	signed, err := capstan.CheckHistory(capstan.FormatGemini, history, capstan.HistoryOptions{GeminiSignatures: true, Repair: true})
	if err != nil || signed.OK || signed.Findings[0].Kind != "missing_signature" ||
		!bytes.Contains(signed.Repaired, []byte(`"thoughtSignature":"skip_thought_signature_validator"`)) {
		t.Fatalf("with the flag: %+v %s %v", signed, signed.Repaired, err)
	}
}
