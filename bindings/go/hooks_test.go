package capstan_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

func guarded() capstan.Tool {
	return capstan.Tool{Name: "rm", RequiresApproval: true,
		Func: func(context.Context, json.RawMessage) (any, error) { return "removed", nil }}
}

func TestApproverDecidesGuardedCalls(t *testing.T) {
	reg := newRegistry(t, guarded())
	// No approver: denied.
	if r := execOne(t, reg, call("1", "rm", `{"path":"/tmp/x"}`)); r.Outcome != capstan.OutcomeDenied {
		t.Fatalf("no approver: %+v", r)
	}
	var mu sync.Mutex
	var asked []capstan.Approval
	err := reg.SetApprover(func(ctx context.Context, a capstan.Approval) capstan.Decision {
		mu.Lock()
		asked = append(asked, a)
		mu.Unlock()
		if a.ID == "yes" {
			return capstan.Approve()
		}
		if a.ID == "panic" {
			panic("approver bug")
		}
		return capstan.Deny("not that path")
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := reg.Execute(context.Background(), []capstan.Call{
		call("yes", "rm", `{"path":"a"}`), call("no", "rm", `{"path":"b"}`),
		call("panic", "rm", `{}`), call("pre", "rm", `{}`),
	}, capstan.WithApproved("pre"))
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Content != "removed" || res[1].Outcome != capstan.OutcomeDenied || !strings.Contains(res[1].Content, "not that path") ||
		res[2].Outcome != capstan.OutcomeDenied || res[3].Content != "removed" {
		t.Fatalf("%+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 {
		t.Fatalf("approver asked %d times: %+v", len(asked), asked)
	}
	for _, a := range asked {
		if a.ID == "yes" && (a.Tool != "rm" || string(a.Arguments) != `{"path":"a"}`) {
			t.Fatalf("%+v", a)
		}
	}
	// Removing it: denied again.
	if err := reg.SetApprover(nil); err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, reg, call("yes", "rm", `{}`)); r.Outcome != capstan.OutcomeDenied {
		t.Fatalf("removed approver: %+v", r)
	}
}

func TestEventHookSeesCallsStartAndFinish(t *testing.T) {
	reg := newRegistry(t, addTool())
	var mu sync.Mutex
	var events []capstan.Event
	if err := reg.SetEventHook(func(e capstan.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
		panic("a panicking hook is ignored")
	}); err != nil {
		t.Fatal(err)
	}
	execOne(t, reg, call("e1", "add", `{"a":1,"b":2}`))
	mu.Lock()
	got := append([]capstan.Event(nil), events...)
	mu.Unlock()
	if len(got) != 2 || got[0].Kind != capstan.EventStarted || got[1].Kind != capstan.EventFinished ||
		got[1].ID != "e1" || got[1].Tool != "add" || got[1].Outcome != capstan.OutcomeOK {
		t.Fatalf("%+v", got)
	}
	if err := reg.SetEventHook(nil); err != nil {
		t.Fatal(err)
	}
	execOne(t, reg, call("e2", "add", `{"a":1,"b":2}`))
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 {
		t.Fatalf("hook still called after removal: %+v", events)
	}
}

func TestMainThreadToolsRunInsidePumpOnThePumpingThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	reg := newRegistry(t, capstan.Tool{Name: "ui", MainThread: true,
		Func: func(context.Context, json.RawMessage) (any, error) { return syscall.Gettid(), nil }})
	woken := make(chan struct{}, 1)
	if err := reg.SetNotify(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	b, err := reg.Submit(context.Background(), []capstan.Call{call("1", "ui", `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	case <-time.After(soon):
		t.Fatal("notify was not called for a waiting main-thread call")
	}
	select {
	case r := <-b.Results():
		t.Fatalf("ran without Pump: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	ran := 0
	deadline := time.Now().Add(soon)
	for ran == 0 && time.Now().Before(deadline) {
		ran += reg.Pump(10 * time.Millisecond)
	}
	res, err := b.Wait(context.Background())
	if err != nil || ran != 1 || res[0].Content != strconvItoa(syscall.Gettid()) {
		t.Fatalf("ran %d, %v %+v, want tid %d", ran, err, res, syscall.Gettid())
	}
	if err := reg.SetNotify(nil); err != nil {
		t.Fatal(err)
	}
}

func TestStatsCountCallsPerOutcome(t *testing.T) {
	reg := newRegistry(t, addTool())
	for i := 0; i < 3; i++ {
		execOne(t, reg, call("1", "add", `{"a":1,"b":2}`))
	}
	execOne(t, reg, call("1", "add", `{"a":"x"}`))
	s, err := reg.Stats()
	if err != nil {
		t.Fatal(err)
	}
	add := s.Tools["add"]
	if add.Outcomes["ok"] != 3 || add.Outcomes["invalid_arguments"] != 1 || add.InFlight != 0 || add.P50 <= 0 || add.P99 < add.P50 {
		t.Fatalf("%+v", s)
	}
}

func TestCoerceOptionTurnsStringsIntoNumbers(t *testing.T) {
	reg, err := capstan.New(capstan.Options{Coerce: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if err := reg.Register(addTool()); err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, reg, call("1", "add", `{"a":"2","b":3}`)); r.Content != "5" {
		t.Fatalf("%+v", r)
	}
}
