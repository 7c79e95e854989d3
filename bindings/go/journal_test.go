package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// A call completed under a run id is answered from the journal in a new
// registry (a restarted process) without running its tool, errors kept as
// errors; replay mode runs nothing and fails a call missing from the
// recording; a corrupt file fails to open naming the line.
func TestJournalAnswersACompletedCallWithoutRunningItsTool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	var runs atomic.Int32
	charge := capstan.Tool{Name: "charge", Schema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"}}}`),
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			runs.Add(1)
			if strings.Contains(string(args), `"amount":0`) {
				return nil, errors.New("nothing to charge")
			}
			return "charged", nil
		}}
	calls := []capstan.Call{call("c1", "charge", `{"amount":5}`), call("c2", "charge", `{"amount":0}`)}
	execute := func(replay bool, calls []capstan.Call) []capstan.Result {
		t.Helper()
		j, err := capstan.OpenJournalJSONL(path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		reg := newRegistry(t, charge)
		if err := reg.SetJournal(j, replay); err != nil {
			t.Fatal(err)
		}
		res, err := reg.Execute(context.Background(), calls, capstan.WithRunID("run-1"))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := execute(false, calls)
	again := execute(false, calls)
	if runs.Load() != 2 {
		t.Fatalf("tools ran %d times, want 2 (once per call)", runs.Load())
	}
	for i := range first {
		if first[i].Content != again[i].Content || first[i].Outcome != again[i].Outcome {
			t.Errorf("call %d: replayed %+v, recorded %+v", i, again[i], first[i])
		}
	}
	if !again[1].IsError() {
		t.Errorf("a recorded error replayed as a success: %+v", again[1])
	}
	missing := execute(true, []capstan.Call{call("c9", "charge", `{"amount":1}`)})
	if runs.Load() != 2 || !strings.Contains(missing[0].Content, "not in the recording") {
		t.Errorf("replay ran a tool or did not say the call is missing: %+v", missing[0])
	}

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := writeFile(bad, "{\"kind\":\"nope\"}\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := capstan.OpenJournalJSONL(bad); err == nil || !strings.Contains(err.Error(), "record at line 1") {
		t.Errorf("a corrupt journal opened or did not name its line: %v", err)
	}
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }
