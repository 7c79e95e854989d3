package capstan_test

// Log messages of a running tool (capstan_call_log).

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

func TestLogReachesTheEventHookInOrderAndBadMessagesAreRefused(t *testing.T) {
	var mu sync.Mutex
	var seen []capstan.Event
	var toolCtx context.Context
	refused := make([]error, 3)
	seenAfterFirst := -1
	reg := newRegistry(t, capstan.Tool{Name: "chatty", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		toolCtx = ctx
		if err := capstan.Log(ctx, capstan.LogInfo, "starting"); err != nil {
			return nil, err
		}
		mu.Lock()
		seenAfterFirst = len(seen) // the hook ran before Log returned
		mu.Unlock()
		refused[0] = capstan.Log(ctx, capstan.LogLevel(8), "no such level")
		refused[1] = capstan.Log(ctx, capstan.LogInfo, strings.Repeat("x", 64*1024+1))
		refused[2] = capstan.Log(ctx, capstan.LogInfo, "\xff")
		if err := capstan.Log(ctx, capstan.LogWarning, "disk almost full"); err != nil {
			return nil, err
		}
		return "done", nil
	}})
	if err := reg.SetEventHook(func(e capstan.Event) {
		if e.Kind == capstan.EventLog {
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, reg, call("c1", "chatty", `{}`)); r.Content != "done" || r.IsError() {
		t.Fatalf("%+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if seenAfterFirst != 1 || len(seen) != 2 {
		t.Fatalf("log events: %d after the first message, %d in all: %+v", seenAfterFirst, len(seen), seen)
	}
	if e := seen[0]; e.Level != capstan.LogInfo || e.Message != "starting" || e.Tool != "chatty" || e.ID != "c1" {
		t.Fatalf("first: %+v", e)
	}
	if e := seen[1]; e.Level != capstan.LogWarning || e.Message != "disk almost full" || e.Progress != 0 {
		t.Fatalf("second: %+v", e)
	}
	for i, want := range []capstan.Status{capstan.ErrInvalidArgument, capstan.ErrInvalidArgument, capstan.ErrInvalidUTF8} {
		if !errors.Is(refused[i], want) {
			t.Errorf("message %d: %v, want %v", i, refused[i], want)
		}
	}
	// After the tool returned, its call handle is stale.
	if err := capstan.Log(toolCtx, capstan.LogError, "late"); !errors.Is(err, capstan.ErrStaleHandle) {
		t.Fatalf("late message: %v", err)
	}
	if len(seen) != 2 {
		t.Fatalf("the late message reached the hook: %+v", seen)
	}
	if err := capstan.Log(context.Background(), capstan.LogInfo, "x"); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("not a tool's ctx: %v", err)
	}
}

func TestLogLevelsHaveMCPNames(t *testing.T) {
	names := []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
	levels := []capstan.LogLevel{capstan.LogDebug, capstan.LogInfo, capstan.LogNotice, capstan.LogWarning,
		capstan.LogError, capstan.LogCritical, capstan.LogAlert, capstan.LogEmergency}
	for i, name := range names {
		if levels[i] != capstan.LogLevel(i) || levels[i].String() != name {
			t.Errorf("level %d: %d %q, want %q", i, levels[i], levels[i], name)
		}
		if l, ok := capstan.ParseLogLevel(name); !ok || l != levels[i] {
			t.Errorf("ParseLogLevel(%q) = %v, %v", name, l, ok)
		}
	}
	if _, ok := capstan.ParseLogLevel("warn"); ok {
		t.Error(`ParseLogLevel("warn") accepted`)
	}
	if s := capstan.LogLevel(9).String(); s != "LogLevel(9)" {
		t.Errorf("LogLevel(9): %q", s)
	}
}

func TestLogFromAToolOnAPoolThreadAndAGoroutine(t *testing.T) {
	var logs atomic.Int32
	reg := newRegistry(t, capstan.Tool{Name: "l", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		if err := capstan.Log(ctx, capstan.LogNotice, "here"); err != nil {
			return nil, err
		}
		// From a goroutine the tool starts and waits for.
		errc := make(chan error, 1)
		go func() { errc <- capstan.Log(ctx, capstan.LogDebug, "from a goroutine") }()
		return nil, <-errc
	}})
	if err := reg.SetEventHook(func(e capstan.Event) {
		if e.Kind == capstan.EventLog && (e.Level == capstan.LogNotice && e.Message == "here" ||
			e.Level == capstan.LogDebug && e.Message == "from a goroutine") {
			logs.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	// 3 calls with limit 2 run on pool threads; Sequential too; 2 on goroutines.
	calls := []capstan.Call{call("1", "l", `{}`), call("2", "l", `{}`), call("3", "l", `{}`)}
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
	if n := logs.Load(); n != 18 {
		t.Fatalf("%d log events, want 18", n)
	}
}
