package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
)

// The tools of the test: charge (a side effect: counted, fails for 0) and
// quote; each run is counted per call id.
type counted struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counted) ran(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs[id]++
}

func (c *counted) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}

func callID(ctx context.Context) string {
	info, _ := capstan.CallInfoFrom(ctx)
	return info.ID
}

func newTools(t *testing.T, journal string, runs *counted) *Tools {
	t.Helper()
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	schema := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"]}`)
	charge := capstan.Tool{Name: "charge", Schema: schema,
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			runs.ran(callID(ctx))
			var in struct{ Amount int }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			if in.Amount == 0 {
				return nil, errors.New("nothing to charge")
			}
			return "charged", nil
		}}
	quote := capstan.Tool{Name: "quote", Schema: schema,
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			runs.ran(callID(ctx))
			return "quoted", nil
		}}
	for _, tool := range []capstan.Tool{charge, quote} {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	j, err := capstan.OpenJournalJSONL(journal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	if err := reg.SetJournal(j, false); err != nil {
		t.Fatal(err)
	}
	return &Tools{Registry: reg}
}

func turn(t *testing.T, tools *Tools, workflowID string, calls []ToolCall) []CallResult {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(AgentTurn)
	env.RegisterActivity(tools)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflowID})
	env.ExecuteWorkflow(AgentTurn, calls)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var results []CallResult
	if err := env.GetWorkflowResult(&results); err != nil {
		t.Fatal(err)
	}
	return results
}

var calls = []ToolCall{
	{ID: "call_1", Name: "charge", Arguments: json.RawMessage(`{"amount":5}`)},
	{ID: "call_2", Name: "quote", Arguments: json.RawMessage(`{"amount":7}`)},
	{ID: "call_3", Name: "charge", Arguments: json.RawMessage(`{"amount":0}`)},
}

// An activity whose worker is lost after its tool ran is retried by
// Temporal; the retry gets the journaled result and the tool does not run
// again. A tool's error is a result, not a retried failure.
func TestARetriedActivityDoesNotRunItsToolTwice(t *testing.T) {
	runs := &counted{runs: map[string]int{}}
	tools := newTools(t, filepath.Join(t.TempDir(), "calls.jsonl"), runs)
	var lost sync.Map
	tools.LoseAttempt = func(key string, attempt int32) bool {
		lost.Store(key, attempt)
		return key == IdempotencyKey("order-42", "call_1") && attempt == 1
	}
	results := turn(t, tools, "order-42", calls)
	if a, _ := lost.Load(IdempotencyKey("order-42", "call_1")); a != int32(2) {
		t.Fatalf("the lost activity was not retried (last attempt %v)", a)
	}
	want := []CallResult{{"call_1", "charged", false}, {"call_2", "quoted", false}, {"call_3", "Error: nothing to charge", true}}
	for i := range want {
		if results[i].ID != want[i].ID || results[i].IsError != want[i].IsError {
			t.Errorf("result %d: %+v, want %+v", i, results[i], want[i])
		}
	}
	if results[0].Content != "charged" || results[1].Content != "quoted" {
		t.Errorf("results %+v", results)
	}
	for _, id := range []string{"call_1", "call_2", "call_3"} {
		if n := runs.count(id); n != 1 {
			t.Errorf("%s ran %d times, want 1", id, n)
		}
	}
}

// The same workflow run again (a new worker process, the same workflow id
// and journal): every call is answered from the journal; another workflow
// id is another run, whose calls run.
func TestTheSameWorkflowAgainRunsNoTool(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "calls.jsonl")
	runs := &counted{runs: map[string]int{}}
	first := turn(t, newTools(t, journal, runs), "order-7", calls)
	again := turn(t, newTools(t, journal, runs), "order-7", calls)
	for i := range first {
		if first[i] != again[i] {
			t.Errorf("call %d: %+v again, %+v first", i, again[i], first[i])
		}
	}
	if n := runs.count("call_1"); n != 1 {
		t.Fatalf("call_1 ran %d times in the same workflow, want 1", n)
	}
	turn(t, newTools(t, journal, runs), "order-8", calls[:1])
	if n := runs.count("call_1"); n != 2 {
		t.Fatalf("call_1 ran %d times after another workflow, want 2", n)
	}
}
