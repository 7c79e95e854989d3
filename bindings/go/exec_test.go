package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// A tool that completes only when told to: its result is given from a
// goroutine long after capstan's tool callback returned.
func TestDeferredCompletionFromGoroutinesAfterTheCallbackReturned(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int32
	reg := newRegistry(t, capstan.Tool{Name: "later", Func: func(ctx context.Context, args json.RawMessage) (any, error) {
		started.Add(1)
		<-release
		return string(args), nil
	}})
	calls := make([]capstan.Call, 20)
	for i := range calls {
		calls[i] = call(strconv.Itoa(i), "later", fmt.Sprintf(`{"i":%d}`, i))
	}
	b, err := reg.Submit(context.Background(), calls, capstan.WithLimit(20))
	if err != nil {
		t.Fatal(err)
	}
	// Submit has returned: every callback returned; none has completed.
	deadline := time.Now().Add(soon)
	for started.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	select {
	case r := <-b.Results():
		t.Fatalf("result before release: %+v", r)
	default:
	}
	close(release)
	res, err := b.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Index != i || r.Content != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("%d: %+v", i, r)
		}
	}
}

func TestSubmitDeliversEachResultAsItsCallFinishes(t *testing.T) {
	release := make(chan struct{})
	reg := newRegistry(t, capstan.Tool{Name: "slow", Func: func(context.Context, json.RawMessage) (any, error) {
		<-release
		return "slow", nil
	}}, addTool())
	b, err := reg.Submit(context.Background(), []capstan.Call{call("s", "slow", `{}`), call("f", "add", `{"a":1,"b":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	first := <-b.Results() // arrives while "slow" still runs
	if first.Index != 1 || first.Content != "3" {
		t.Fatalf("first: %+v", first)
	}
	close(release)
	second, ok := <-b.Results()
	if !ok || second.Index != 0 || second.Content != "slow" {
		t.Fatalf("second: %+v", second)
	}
	if _, ok := <-b.Results(); ok {
		t.Fatal("channel not closed after the last result")
	}
	<-b.Done()
}

func TestTimeoutCancelsTheToolContext(t *testing.T) {
	observed := make(chan error, 2)
	reg := newRegistry(t, capstan.Tool{Name: "stuck", Timeout: 50 * time.Millisecond,
		Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
			select {
			case <-ctx.Done():
				observed <- ctx.Err()
				return nil, ctx.Err()
			case <-time.After(eternal):
				return "never", nil
			}
		}})
	// The tool's own timeout, and a batch timeout.
	for _, opts := range [][]capstan.ExecOption{nil, {capstan.WithTimeout(30 * time.Millisecond)}} {
		r := execOne(t, reg, call("1", "stuck", `{}`), opts...)
		if r.Outcome != capstan.OutcomeTimeout {
			t.Fatalf("got %+v", r)
		}
		select {
		case err := <-observed:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("ctx err %v", err)
			}
		case <-time.After(soon):
			t.Fatal("the tool's ctx was not cancelled")
		}
	}
}

func TestBatchCancelCancelsRunningToolsAndEveryCallGetsOneResult(t *testing.T) {
	var cancelled atomic.Int32
	reg := newRegistry(t, capstan.Tool{Name: "wait", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done()
		cancelled.Add(1)
		return "stopped", nil
	}})
	calls := make([]capstan.Call, 50)
	for i := range calls {
		calls[i] = call(strconv.Itoa(i), "wait", `{}`)
	}
	b, err := reg.Submit(context.Background(), calls, capstan.WithLimit(4))
	if err != nil {
		t.Fatal(err)
	}
	b.Cancel()
	b.Cancel() // twice is fine
	seen := map[int]int{}
	for r := range b.Results() {
		seen[r.Index]++
		// Not started: cancelled. Running: the tool's own result.
		if r.Outcome != capstan.OutcomeCancelled && r.Content != "stopped" && r.Content != "context canceled" {
			t.Errorf("%+v", r)
		}
	}
	if len(seen) != 50 {
		t.Fatalf("%d results", len(seen))
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("call %d got %d results", i, n)
		}
	}
	b.Cancel() // after the end too
}

func TestExecuteContextEndCancelsTheBatch(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "wait", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	res, err := reg.Execute(ctx, []capstan.Call{call("1", "wait", `{}`), call("2", "wait", `{}`)})
	if !errors.Is(err, context.DeadlineExceeded) || len(res) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	for _, r := range res {
		if !r.IsError() {
			t.Fatalf("%+v", r)
		}
	}
}

func TestWaitReturnsResultsInCallOrder(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "sleep", Func: func(ctx context.Context, args json.RawMessage) (any, error) {
		var in struct{ Ms int }
		_ = json.Unmarshal(args, &in)
		time.Sleep(time.Duration(in.Ms) * time.Millisecond)
		return in.Ms, nil
	}})
	b, err := reg.Submit(context.Background(), []capstan.Call{call("a", "sleep", `{"Ms":30}`), call("b", "sleep", `{"Ms":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Wait(context.Background())
	if err != nil || res[0].ID != "a" || res[0].Content != "30" || res[1].ID != "b" {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestSequentialRunsOneAtATimeInOrder(t *testing.T) {
	var running, maxRunning atomic.Int32
	var order []string
	var mu sync.Mutex
	reg := newRegistry(t, capstan.Tool{Name: "t", Func: func(ctx context.Context, args json.RawMessage) (any, error) {
		n := running.Add(1)
		if n > maxRunning.Load() {
			maxRunning.Store(n)
		}
		ci, _ := capstan.CallInfoFrom(ctx)
		mu.Lock()
		order = append(order, ci.ID)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		running.Add(-1)
		return nil, nil
	}})
	calls := []capstan.Call{call("1", "t", `{}`), call("2", "t", `{}`), call("3", "t", `{}`), call("4", "t", `{}`)}
	if _, err := reg.Execute(context.Background(), calls, capstan.Sequential()); err != nil {
		t.Fatal(err)
	}
	if maxRunning.Load() != 1 || fmt.Sprint(order) != "[1 2 3 4]" {
		t.Fatalf("max %d order %v", maxRunning.Load(), order)
	}
}

func TestLimitBoundsConcurrentCallsOfABatch(t *testing.T) {
	var running, maxRunning atomic.Int32
	var mu sync.Mutex
	reg := newRegistry(t, capstan.Tool{Name: "t", Func: func(context.Context, json.RawMessage) (any, error) {
		n := running.Add(1)
		mu.Lock()
		if n > maxRunning.Load() {
			maxRunning.Store(n)
		}
		mu.Unlock()
		time.Sleep(time.Millisecond)
		running.Add(-1)
		return nil, nil
	}})
	calls := make([]capstan.Call, 40)
	for i := range calls {
		calls[i] = call(strconv.Itoa(i), "t", `{}`)
	}
	if _, err := reg.Execute(context.Background(), calls, capstan.WithLimit(3)); err != nil {
		t.Fatal(err)
	}
	if m := maxRunning.Load(); m > 3 || m < 1 {
		t.Fatalf("max running %d", m)
	}
}

// 10,000 calls run at once: each waits until all 10,000 have started.
func TestTenThousandConcurrentCalls(t *testing.T) {
	const n = 10_000
	var started atomic.Int32
	all := make(chan struct{})
	reg := newRegistry(t, capstan.Tool{Name: "barrier", Func: func(ctx context.Context, args json.RawMessage) (any, error) {
		if started.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
			return string(args), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	check := func(res []capstan.Result) {
		t.Helper()
		for i, r := range res {
			if r.Outcome != capstan.OutcomeOK || r.Content != fmt.Sprintf(`{"i":%d}`, i) {
				t.Fatalf("%d: %+v", i, r)
			}
		}
	}
	calls := make([]capstan.Call, n)
	for i := range calls {
		calls[i] = call(strconv.Itoa(i), "barrier", fmt.Sprintf(`{"i":%d}`, i))
	}
	// One batch of 10,000.
	res, err := reg.Execute(context.Background(), calls, capstan.WithLimit(n), capstan.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	check(res)

	// 10,000 goroutines, one call each.
	started.Store(0)
	all = make(chan struct{})
	res = make([]capstan.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := reg.Execute(context.Background(), calls[i:i+1])
			if err != nil {
				t.Error(err)
				return
			}
			res[i] = r[0]
		}()
	}
	wg.Wait()
	check(res)
}

func TestCloseWithCallsInFlightGivesEveryCallOneResult(t *testing.T) {
	var started, ctxEnded atomic.Int32
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var execStarted atomic.Int32
	for _, name := range []string{"wait", "wait_exec"} {
		if err := reg.Register(capstan.Tool{Name: name, Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
			started.Add(1)
			if ci, _ := capstan.CallInfoFrom(ctx); ci.Tool == "wait_exec" {
				execStarted.Add(1)
			}
			<-ctx.Done()
			ctxEnded.Add(1)
			return "late", nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	calls := make([]capstan.Call, 100)
	for i := range calls {
		calls[i] = call(strconv.Itoa(i), "wait", `{}`)
	}
	batches := make([]*capstan.Batch, 3)
	for i := range batches {
		if batches[i], err = reg.Submit(context.Background(), calls, capstan.WithLimit(10)); err != nil {
			t.Fatal(err)
		}
	}
	execDone := make(chan []capstan.Result)
	go func() {
		execCalls := make([]capstan.Call, 5)
		for i := range execCalls {
			execCalls[i] = call(strconv.Itoa(i), "wait_exec", `{}`)
		}
		res, _ := reg.Execute(context.Background(), execCalls)
		execDone <- res
	}()
	for deadline := time.Now().Add(soon); (started.Load() < 10 || execStarted.Load() < 5) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), soon)
	defer cancel()
	if err := reg.CloseContext(ctx); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		seen := map[int]int{}
		for r := range b.Results() {
			seen[r.Index]++
			// Reported cancelled, or, if the tool answered first, its answer.
			if r.Outcome != capstan.OutcomeCancelled && r.Content != "late" && r.Content != "context canceled" {
				t.Errorf("%+v", r)
			}
		}
		if len(seen) != len(calls) {
			t.Fatalf("%d results of %d", len(seen), len(calls))
		}
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("call %d: %d results", i, k)
			}
		}
	}
	res := <-execDone
	if len(res) != 5 {
		t.Fatalf("execute: %+v", res)
	}
	for _, r := range res {
		if r.Outcome != capstan.OutcomeCancelled && r.Content != "late" {
			t.Fatalf("execute: %+v", r)
		}
	}
	// Every tool that started saw its ctx end.
	deadline := time.Now().Add(soon)
	for ctxEnded.Load() < started.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if ctxEnded.Load() != started.Load() || started.Load() == 0 {
		t.Fatalf("%d of %d started tools saw their ctx end", ctxEnded.Load(), started.Load())
	}
	// Afterwards: ErrShuttingDown, and Close again is harmless.
	if _, err := reg.Execute(context.Background(), calls[:1]); !errors.Is(err, capstan.ErrShuttingDown) {
		t.Fatalf("after close: %v", err)
	}
	if err := reg.Register(addTool()); !errors.Is(err, capstan.ErrShuttingDown) {
		t.Fatalf("register after close: %v", err)
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNestedExecuteInsideATool(t *testing.T) {
	var reg *capstan.Registry
	reg = newRegistry(t, addTool(), capstan.Tool{Name: "outer", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		res, err := reg.Execute(ctx, []capstan.Call{call("in", "add", `{"a":20,"b":22}`)})
		if err != nil {
			return nil, err
		}
		return res[0].Content, nil
	}})
	if r := execOne(t, reg, call("1", "outer", `{}`)); r.Content != "42" {
		t.Fatalf("lone: %+v", r)
	}
	res, err := reg.Execute(context.Background(), []capstan.Call{call("1", "outer", `{}`), call("2", "outer", `{}`)})
	if err != nil || res[0].Content != "42" || res[1].Content != "42" {
		t.Fatalf("batch: %v %+v", err, res)
	}
}

func TestEmptyBatchHasNoResults(t *testing.T) {
	reg := newRegistry(t, addTool())
	res, err := reg.Execute(context.Background(), nil)
	if err != nil || len(res) != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	b, err := reg.Submit(context.Background(), []capstan.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := <-b.Results(); ok {
		t.Fatal("a result for no call")
	}
}

// A tool that ignores its ctx and runs on a pool thread (a batch bigger
// than its limit): Close gives up at its ctx's deadline with ErrTimeout
// instead of hanging, and the tool's late answer is dropped.
func TestCloseGivesUpOnAToolThatIgnoresItsContext(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(capstan.Tool{Name: "stubborn", Func: func(context.Context, json.RawMessage) (any, error) {
		started <- struct{}{}
		<-release
		return "late", nil
	}}); err != nil {
		t.Fatal(err)
	}
	b, err := reg.Submit(context.Background(), []capstan.Call{call("1", "stubborn", `{}`), call("2", "stubborn", `{}`)}, capstan.WithLimit(1))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(soon):
		t.Fatal("the tool never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := reg.CloseContext(ctx); !errors.Is(err, capstan.ErrTimeout) {
		t.Fatalf("Close: %v", err)
	}
	close(release)
	res, err := b.Wait(context.Background())
	if err != nil || len(res) != 2 || res[0].Outcome != capstan.OutcomeCancelled || res[1].Outcome != capstan.OutcomeCancelled {
		t.Fatalf("%v %+v", err, res)
	}
}

// A result reaches the caller whole whatever its size, on every path a tool
// runs: the lone call inside Execute, goroutines of a batch within its
// limit, capstan's pool threads for a bigger batch (results up to 1 KiB are
// copied through room on the C stack, larger ones by another route).
func TestResultsOfEverySizeArriveWholeOnEveryPath(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	text := func(n int) string { return strings.Repeat("abcdefghij", n/10+1)[:n] }
	reg := newRegistry(t, capstan.Func("sized", "Text of n bytes.", func(ctx context.Context, a in) (string, error) {
		return text(a.N), nil
	}))
	sizes := []int{0, 1, 1000, 1023, 1024, 1025, 4096, 70000}
	var calls []capstan.Call
	for i, n := range sizes {
		calls = append(calls, call("c"+strconvItoa(i), "sized", `{"n":`+strconvItoa(n)+`}`))
	}
	for _, c := range calls { // lone calls: inside Execute's cgo call
		want := text(mustAtoi(t, strings.TrimSuffix(strings.TrimPrefix(string(c.Arguments), `{"n":`), "}")))
		if got := execOne(t, reg, c); got.IsError() || got.Content != want {
			t.Fatalf("%s: outcome %v, %d bytes, want %d", c.ID, got.Outcome, len(got.Content), len(want))
		}
	}
	for _, limit := range []int{len(calls), 2} { // goroutines; pool threads
		res, err := reg.Execute(context.Background(), calls, capstan.WithLimit(limit))
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range sizes {
			if res[i].IsError() || res[i].Content != text(n) || res[i].ID != calls[i].ID {
				t.Fatalf("limit %d, call %d: outcome %v, %d bytes, want %d", limit, i, res[i].Outcome, len(res[i].Content), n)
			}
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
