package capstan_test

// Benchmarks of the binding next to a pure-Go baseline doing the same work
// without capstan: decode the arguments, validate them against the same JSON
// Schema with github.com/santhosh-tekuri/jsonschema/v6, call the function,
// encode the result, with at most `limit` goroutines at once for a batch.
//
//	go test -run '^$' -bench . -benchtime 2s ./bindings/go/   (or: make go-bench)

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

type forecastIn struct {
	City string `json:"city" jsonschema:"minLength=1,maxLength=64"`
	Days int    `json:"days" jsonschema:"minimum=1,maximum=7"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=c,enum=f"`
}

type forecastOut struct {
	City  string    `json:"city"`
	Temps []float64 `json:"temps"`
}

func forecast(_ context.Context, in forecastIn) (forecastOut, error) {
	temps := make([]float64, in.Days)
	for i := range temps {
		temps[i] = 20 + float64(i)/2
	}
	return forecastOut{City: in.City, Temps: temps}, nil
}

// benchQuick registers the bench's tools Quick (host batches); the
// environment variable CAPSTAN_BENCH_QUICK=0 measures the callback path.
var benchQuick = os.Getenv("CAPSTAN_BENCH_QUICK") != "0"

func benchCalls(n int) []capstan.Call {
	calls := make([]capstan.Call, n)
	for i := range calls {
		calls[i] = capstan.Call{ID: "call_" + strconv.Itoa(i), Name: "forecast",
			Arguments: json.RawMessage(fmt.Sprintf(`{"city":"Lyon %d","days":%d,"unit":"c"}`, i, 1+i%7))}
	}
	return calls
}

// baseline is what a Go program does without capstan.
type baseline struct {
	schema *jsonschema.Schema
}

func newBaseline(b *testing.B) *baseline {
	schema, err := capstan.SchemaFor[forecastIn]()
	if err != nil {
		b.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(schema)))
	if err != nil {
		b.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("forecast.json", doc); err != nil {
		b.Fatal(err)
	}
	s, err := c.Compile("forecast.json")
	if err != nil {
		b.Fatal(err)
	}
	return &baseline{schema: s}
}

func (bl *baseline) run(ctx context.Context, c capstan.Call) capstan.Result {
	res := capstan.Result{ID: c.ID, Name: c.Name}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(c.Arguments)))
	if err == nil {
		err = bl.schema.Validate(v)
	}
	if err != nil {
		res.Outcome, res.Content = capstan.OutcomeInvalidArguments, err.Error()
		return res
	}
	var in forecastIn
	if err := json.Unmarshal(c.Arguments, &in); err != nil {
		res.Outcome, res.Content = capstan.OutcomeInvalidArguments, err.Error()
		return res
	}
	out, err := forecast(ctx, in)
	if err != nil {
		res.Outcome, res.Content = capstan.OutcomeToolError, err.Error()
		return res
	}
	b, _ := json.Marshal(out)
	res.Content = string(b)
	return res
}

func (bl *baseline) batch(ctx context.Context, calls []capstan.Call, limit int) []capstan.Result {
	return bl.batchOf(ctx, calls, limit, bl.run)
}

// batchOf runs calls with run on at most limit goroutines at once.
func (bl *baseline) batchOf(ctx context.Context, calls []capstan.Call, limit int,
	run func(context.Context, capstan.Call) capstan.Result) []capstan.Result {
	results := make([]capstan.Result, len(calls))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, c := range calls {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = run(ctx, c)
			results[i].Index = i
		}()
	}
	wg.Wait()
	return results
}

func benchRegistry(b *testing.B) *capstan.Registry {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = reg.Close() })
	tool := capstan.Func("forecast", "Daily temperatures.", forecast)
	tool.Quick = benchQuick
	if err := reg.Register(tool); err != nil {
		b.Fatal(err)
	}
	return reg
}

func BenchmarkSingleCall(b *testing.B) {
	ctx := context.Background()
	calls := benchCalls(1)
	b.Run("capstan", func(b *testing.B) {
		reg := benchRegistry(b)
		loop(b, 1, func() {
			res, err := reg.Execute(ctx, calls)
			if err != nil || res[0].IsError() {
				b.Fatal(err, res)
			}
		})
	})
	b.Run("baseline", func(b *testing.B) {
		bl := newBaseline(b)
		loop(b, 1, func() {
			if r := bl.run(ctx, calls[0]); r.IsError() {
				b.Fatal(r)
			}
		})
	})
	c, p := figures[b.Name()+"/capstan"], figures[b.Name()+"/baseline"]
	benchRow("lone call", "trivial", "wall us/call", c.wallNs/1e3, p.wallNs/1e3, "<= peer", "")
	benchRow("lone call", "trivial", "cpu us/call", c.cpuNs/1e3, p.cpuNs/1e3, "<= peer", "")
}

func BenchmarkBatch10k(b *testing.B) {
	ctx := context.Background()
	calls := benchCalls(10_000)
	for _, limit := range []int{8, 10_000} {
		b.Run(fmt.Sprintf("capstan/limit=%d", limit), func(b *testing.B) {
			reg := benchRegistry(b)
			loop(b, len(calls), func() {
				res, err := reg.Execute(ctx, calls, capstan.WithLimit(limit))
				if err != nil || res[9_999].IsError() {
					b.Fatal(err, res[9_999])
				}
			})
		})
		b.Run(fmt.Sprintf("baseline/limit=%d", limit), func(b *testing.B) {
			bl := newBaseline(b)
			loop(b, len(calls), func() {
				if res := bl.batch(ctx, calls, limit); res[9_999].IsError() {
					b.Fatal(res[9_999])
				}
			})
		})
		c := figures[fmt.Sprintf("%s/capstan/limit=%d", b.Name(), limit)]
		p := figures[fmt.Sprintf("%s/baseline/limit=%d", b.Name(), limit)]
		rate := func(f benchFigures) float64 {
			if f.wallNs == 0 {
				return 0
			}
			return float64(len(calls)) / (f.wallNs / 1e9)
		}
		benchRow("10000 calls", "trivial", "calls/s", rate(c), rate(p), ">= peer", fmt.Sprintf(", both at most %d at once", limit))
	}
}

// BenchmarkBatch100 is 100 trivial calls, all at once on both sides.
func BenchmarkBatch100(b *testing.B) {
	ctx := context.Background()
	calls := benchCalls(100)
	b.Run("capstan", func(b *testing.B) {
		reg := benchRegistry(b)
		loop(b, len(calls), func() {
			res, err := reg.Execute(ctx, calls, capstan.WithLimit(len(calls)))
			if err != nil || res[99].IsError() {
				b.Fatal(err, res[99])
			}
		})
	})
	b.Run("baseline", func(b *testing.B) {
		bl := newBaseline(b)
		loop(b, len(calls), func() {
			if res := bl.batch(ctx, calls, len(calls)); res[99].IsError() {
				b.Fatal(res[99])
			}
		})
	})
	c, p := figures[b.Name()+"/capstan"], figures[b.Name()+"/baseline"]
	benchRow("100 calls", "trivial", "wall us/call", c.wallNs/1e3/100, p.wallNs/1e3/100, "<= peer", ", both at most 100 at once")
	benchRow("100 calls", "trivial", "cpu us/call", c.cpuNs/1e3/100, p.cpuNs/1e3/100, "<= peer", ", both at most 100 at once")
}

// ioIn and ioTool are the 2 ms I/O tool: it waits (time.Sleep, as a
// network call would) and answers with a small struct.
type ioIn struct {
	City string `json:"city" jsonschema:"minLength=1,maxLength=64"`
	Days int    `json:"days" jsonschema:"minimum=1,maximum=7"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=c,enum=f"`
}

func ioTool(ctx context.Context, in ioIn) (forecastOut, error) {
	time.Sleep(2 * time.Millisecond)
	return forecast(ctx, forecastIn(in))
}

// BenchmarkIO runs the 2 ms I/O tool: a lone call, 100 and 10,000 calls,
// every call of a batch at once on both sides (limit = the batch's size).
func BenchmarkIO(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 100, 10_000} {
		calls := benchCalls(n)
		for i := range calls {
			calls[i].Name = "io"
		}
		b.Run(fmt.Sprintf("capstan/n=%d", n), func(b *testing.B) {
			reg := benchRegistry(b)
			tool := capstan.Func("io", "Waits 2 ms, then answers.", ioTool)
			tool.Quick = benchQuick
			if err := reg.Register(tool); err != nil {
				b.Fatal(err)
			}
			loop(b, n, func() {
				res, err := reg.Execute(ctx, calls, capstan.WithLimit(n))
				if err != nil || res[n-1].IsError() {
					b.Fatal(err, res[n-1])
				}
			})
		})
		b.Run(fmt.Sprintf("baseline/n=%d", n), func(b *testing.B) {
			bl := newBaseline(b)
			loop(b, n, func() {
				var r capstan.Result
				if n == 1 {
					r = bl.runIO(ctx, calls[0])
				} else {
					r = bl.batchIO(ctx, calls, n)[n-1]
				}
				if r.IsError() {
					b.Fatal(r)
				}
			})
		})
		c := figures[fmt.Sprintf("%s/capstan/n=%d", b.Name(), n)]
		p := figures[fmt.Sprintf("%s/baseline/n=%d", b.Name(), n)]
		if n == 1 {
			benchRow("lone call", "2 ms I/O", "wall us/call", c.wallNs/1e3, p.wallNs/1e3, "-", "")
			benchRow("lone call", "2 ms I/O", "cpu us/call", c.cpuNs/1e3, p.cpuNs/1e3, "-", "")
			continue
		}
		kase, note := fmt.Sprintf("%d calls", n), fmt.Sprintf(", both at most %d at once", n)
		benchRow(kase, "2 ms I/O", "ms total", c.wallNs/1e6, p.wallNs/1e6, "-", note)
		benchRow(kase, "2 ms I/O", "cpu us/call", c.cpuNs/1e3/float64(n), p.cpuNs/1e3/float64(n), "-", note)
	}
}

// runIO and batchIO are run and batch with the I/O tool.
func (bl *baseline) runIO(ctx context.Context, c capstan.Call) capstan.Result {
	r := bl.run(ctx, c)
	time.Sleep(2 * time.Millisecond)
	return r
}

func (bl *baseline) batchIO(ctx context.Context, calls []capstan.Call, limit int) []capstan.Result {
	return bl.batchOf(ctx, calls, limit, bl.runIO)
}

// benchFigures is what the last run of a sub-benchmark measured, per op.
type benchFigures struct{ wallNs, cpuNs float64 }

// figures holds each sub-benchmark's last run by its full name (benchmarks
// run one at a time), so that its parent can print a BENCH-ROW line.
var figures = map[string]benchFigures{}

// benchRow prints one row for make bench-bindings (tools/bench_bindings.py):
// capstan beside the same work in pure Go. goal is issue #46's ("Go stays at
// or under pure Go").
func benchRow(kase, tool, metric string, capstanValue, peerValue float64, goal, peerNote string) {
	var met, g any = capstanValue <= peerValue, goal
	if strings.HasPrefix(goal, ">=") {
		met = capstanValue >= peerValue
	} else if goal == "-" {
		met, g = nil, nil // a row with no goal of the issue's
	}
	peer := "pure Go (jsonschema/v6 + encoding/json)"
	if tool != "trivial" {
		peer = "pure Go (jsonschema/v6 + encoding/json + time.Sleep)"
	}
	row, _ := json.Marshal(map[string]any{"binding": "go", "case": kase, "tool": tool, "metric": metric,
		"capstan": capstanValue, "peer": peer + peerNote, "peer_value": peerValue, "goal": g, "met": met})
	fmt.Printf("BENCH-ROW %s\n", row)
}

// cpuTime is the process's user+system CPU time: on a shared machine it says
// what a call costs better than the wall clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports CPU time per op and per call, with
// allocations and cgo calls (Go to C; callbacks into Go not counted) per
// op: those two do not depend on the machine's load.
func loop(b *testing.B, calls int, f func()) {
	b.ReportAllocs()
	start, cgoStart := cpuTime(), runtime.NumCgoCall()
	for b.Loop() {
		f()
	}
	cpu := float64((cpuTime() - start).Nanoseconds())
	b.ReportMetric(cpu/float64(b.N), "cpu-ns/op")
	figures[b.Name()] = benchFigures{wallNs: float64(b.Elapsed().Nanoseconds()) / float64(b.N), cpuNs: cpu / float64(b.N)}
	b.ReportMetric(float64(runtime.NumCgoCall()-cgoStart)/float64(b.N), "cgo-calls/op")
	if calls > 1 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
		b.ReportMetric(float64(b.N*calls)/b.Elapsed().Seconds(), "calls/s")
	}
}
