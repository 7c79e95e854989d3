// Package temporal runs capstan's tool calls as Temporal activities (issue
// #47): a durable engine for a host that outgrew one machine, with
// capstan's journal making each activity idempotent.
//
// The workflow (AgentTurn) runs each tool call a model asked for as one
// activity (Tools.RunToolCall). Temporal retries an activity whose worker
// was lost, and a lost worker may already have run the tool: the activity
// therefore runs the call through a capstan registry with a journal, under
// the workflow's id as the run id and the model's call id, the key
// IdempotencyKey names (also the activity's id). A retried activity, or
// the same workflow run again, gets the recorded result and the tool does
// not run twice. A tool's error is a result the model reads, not an
// activity failure to retry.
//
//	make lib && cd examples/go/temporal && go test -tags capstan_intree .
package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ToolCall is one tool call a model asked for.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallInput is what one activity gets: the call and the run it belongs to.
type CallInput struct {
	RunID string   `json:"run_id"`
	Call  ToolCall `json:"call"`
}

// CallResult is a call's result as the model reads it.
type CallResult struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// IdempotencyKey is the journal key of a call, run id and call id: the
// same call sent again under it is answered from the journal.
func IdempotencyKey(runID, callID string) string { return runID + "/" + callID }

// Tools runs tool calls as activities on one capstan registry, which must
// have a journal (Registry.SetJournal) shared by every attempt.
type Tools struct {
	Registry *capstan.Registry
	// LoseAttempt, if set, is asked after each call's result came back:
	// true fails the attempt as a worker lost at that moment would (the
	// tool ran, Temporal never heard). For tests.
	LoseAttempt func(key string, attempt int32) bool
}

// RunToolCall is the activity: one call through capstan under its
// journal key.
func (t *Tools) RunToolCall(ctx context.Context, in CallInput) (CallResult, error) {
	call := capstan.Call{ID: in.Call.ID, Name: in.Call.Name, Arguments: in.Call.Arguments}
	results, err := t.Registry.Execute(ctx, []capstan.Call{call}, capstan.WithRunID(in.RunID))
	if err != nil {
		return CallResult{}, err // capstan itself failed: Temporal retries
	}
	r := results[0]
	key := IdempotencyKey(in.RunID, in.Call.ID)
	if t.LoseAttempt != nil && t.LoseAttempt(key, activity.GetInfo(ctx).Attempt) {
		return CallResult{}, temporal.NewApplicationError("worker lost after the tool ran", "WorkerLost")
	}
	return CallResult{ID: r.ID, Content: r.Content, IsError: r.IsError()}, nil
}

// AgentTurn is the workflow: every call of one model turn as an activity,
// in parallel, the results in call order. The workflow's id is the run id.
func AgentTurn(ctx workflow.Context, calls []ToolCall) ([]CallResult, error) {
	runID := workflow.GetInfo(ctx).WorkflowExecution.ID
	futures := make([]workflow.Future, len(calls))
	for i, c := range calls {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			ActivityID:          IdempotencyKey(runID, c.ID),
			StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{
				InitialInterval: time.Millisecond,
				MaximumAttempts: 5,
			},
		})
		var tools *Tools // the method's name; the worker's Tools runs it
		futures[i] = workflow.ExecuteActivity(actx, tools.RunToolCall, CallInput{RunID: runID, Call: c})
	}
	results := make([]CallResult, len(calls))
	for i, f := range futures {
		if err := f.Get(ctx, &results[i]); err != nil {
			return nil, fmt.Errorf("call %s: %w", calls[i].ID, err)
		}
	}
	return results, nil
}
