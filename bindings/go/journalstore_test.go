package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// memStore is a host's journal store in a map, as a user would write one:
// the latest `started` or `completed` record of each (run, call) key. It
// also keeps every record it was given, in order, for the tests to read,
// and fails or panics on demand.
type memStore struct {
	mu      sync.Mutex
	byKey   map[string][]byte
	history [][]byte

	failRecord, panicRecord string // fail records of this kind ("*": any)
	failLookup, panicLookup bool
	answer                  []byte // answered by every Lookup when set
}

type recordKey struct{ Kind, Run, Call string }

func newMemStore() *memStore { return &memStore{byKey: map[string][]byte{}} }

func (s *memStore) Record(recordJSON []byte) error {
	var k recordKey
	if err := json.Unmarshal(recordJSON, &k); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failRecord == "*" || s.failRecord == k.Kind {
		return errors.New("the database is down")
	}
	if s.panicRecord == "*" || s.panicRecord == k.Kind {
		panic("the store panicked")
	}
	s.history = append(s.history, recordJSON)
	if k.Kind != "tools" {
		s.byKey[k.Run+"\x00"+k.Call] = recordJSON
	}
	return nil
}

func (s *memStore) Lookup(runID, callID string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failLookup:
		return nil, errors.New("the database is down")
	case s.panicLookup:
		panic("the store panicked")
	case s.answer != nil:
		return s.answer, nil
	}
	return s.byKey[runID+"\x00"+callID], nil
}

// records returns the kinds and keys of every record given so far.
func (s *memStore) records(t *testing.T) []recordKey {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recordKey
	for _, r := range s.history {
		var k recordKey
		if err := json.Unmarshal(r, &k); err != nil {
			t.Fatalf("capstan wrote a record that is not JSON: %s", r)
		}
		out = append(out, k)
	}
	return out
}

// crash forgets the `completed` records: what the store holds had the
// process died while the tools ran.
func (s *memStore) crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.history {
		var k recordKey
		if json.Unmarshal(r, &k) == nil && k.Kind == "started" {
			s.byKey[k.Run+"\x00"+k.Call] = r
		}
	}
}

// countingTool counts its runs and answers "<name> <n>".
func countedTool(name string, runs *atomic.Int32, idempotent bool) capstan.Tool {
	return capstan.Tool{Name: name, Idempotent: idempotent,
		Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			return name + " " + strconvItoa(int(runs.Add(1))), nil
		}}
}

// journaled makes a registry with tools whose journal is kept by store;
// the journal handle is closed at once (the registry keeps it).
func journaled(t *testing.T, store capstan.JournalStore, replay bool, tools ...capstan.Tool) *capstan.Registry {
	t.Helper()
	j, err := capstan.NewJournal(store)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	reg := newRegistry(t, tools...)
	if err := reg.SetJournal(j, replay); err != nil {
		t.Fatal(err)
	}
	return reg
}

func run(t *testing.T, reg *capstan.Registry, calls ...capstan.Call) []capstan.Result {
	t.Helper()
	res, err := reg.Execute(context.Background(), calls, capstan.WithRunID("run-1"))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Rule 1: the store sees capstan's records, a `started` then a
// `completed` per call, and a second registry on the same store answers a
// completed call from it without running the tool (also through a whole
// turn, whose calls run on capstan's pool threads).
func TestAHostJournalAnswersACompletedCallFromItsOwnStore(t *testing.T) {
	store := newMemStore()
	var runs atomic.Int32
	charge := countedTool("charge", &runs, false)
	first := run(t, journaled(t, store, false, charge), call("c1", "charge", `{"n":5}`))
	if first[0].Content != "charge 1" || runs.Load() != 1 {
		t.Fatalf("first run: %+v, %d runs", first[0], runs.Load())
	}
	got := store.records(t)
	want := []recordKey{{"tools", "run-1", "c1"}, {"started", "run-1", "c1"}, {"completed", "run-1", "c1"}}
	if len(got) != len(want) {
		t.Fatalf("the store got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: %+v, want %+v (all: %+v)", i, got[i], want[i], got)
		}
	}
	var completed struct {
		Tool   string
		Result struct{ Outcome, Content string }
	}
	if err := json.Unmarshal(store.history[2], &completed); err != nil || completed.Tool != "charge" ||
		completed.Result.Content != "charge 1" || completed.Result.Outcome != "ok" {
		t.Errorf("the completed record is not the call's result: %s", store.history[2])
	}

	again := journaled(t, store, false, charge)
	var replayed atomic.Int32
	if err := again.SetEventHook(func(e capstan.Event) {
		if e.Kind == capstan.EventReplayed && e.ID == "c1" {
			replayed.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	res := run(t, again, call("c1", "charge", `{"n":5}`))
	if res[0].Content != "charge 1" || res[0].IsError() || runs.Load() != 1 {
		t.Errorf("second registry: %+v after %d runs, want the recorded result and 1 run", res[0], runs.Load())
	}
	turn := []byte(`{"choices":[{"message":{"role":"assistant","tool_calls":[
		{"id":"c1","type":"function","function":{"name":"charge","arguments":"{\"n\":5}"}}]}}]}`)
	msgs, err := again.RunTurn(context.Background(), capstan.FormatOpenAIChat, turn, capstan.WithRunID("run-1"), capstan.WholeTurn())
	if err != nil || !strings.Contains(string(msgs), `"content":"charge 1"`) || runs.Load() != 1 {
		t.Errorf("a whole turn: %s, %v, %d runs", msgs, err, runs.Load())
	}
	if replayed.Load() != 2 {
		t.Errorf("%d EventReplayed for c1, want 2", replayed.Load())
	}
}

// Rule 2: a call whose `started` the store holds without its `completed`
// (the process died while the tool ran): a non-idempotent tool's call fails
// "Outcome unknown:" and does not run, an idempotent one runs again.
func TestAHostJournalResolvesACallThatNeverCompletedByItsToolsPolicy(t *testing.T) {
	store := newMemStore()
	var charges, fetches atomic.Int32
	tools := []capstan.Tool{countedTool("charge", &charges, false), countedTool("fetch", &fetches, true)}
	calls := []capstan.Call{call("c1", "charge", `{"n":1}`), call("c2", "fetch", `{"n":2}`)}
	run(t, journaled(t, store, false, tools...), calls...)
	store.crash()
	res := run(t, journaled(t, store, false, tools...), calls...)
	if !res[0].IsError() || !strings.HasPrefix(res[0].Content, "Outcome unknown:") || charges.Load() != 1 {
		t.Errorf("charge: %+v after %d runs, want Outcome unknown and 1 run", res[0], charges.Load())
	}
	if res[1].Content != "fetch 2" || fetches.Load() != 2 {
		t.Errorf("fetch (idempotent): %+v after %d runs, want it run again", res[1], fetches.Load())
	}
}

// Rule 3: a store that fails (an error or a panic) fails the call with an
// error result naming the journal's failure; a failed `started` keeps the
// tool from running; nothing crashes and the store is released.
func TestAFailingHostJournalFailsTheCallWithoutRunningTheTool(t *testing.T) {
	live := settledStores()
	t.Cleanup(func() { // after the registries' Close (cleanups run last first)
		if now, double := storesReach(live); now != live || double != 0 {
			t.Errorf("host stores live %d (was %d), released twice %d", now, live, double)
		}
	})
	var runs atomic.Int32
	charge := countedTool("charge", &runs, false)
	cases := []struct {
		name, want string
		set        func(*memStore)
	}{
		{"record returns an error", `could not record the start of call "c1" (run "run-1"): the host's record returned 1`,
			func(s *memStore) { s.failRecord = "started" }},
		{"record panics", "the host's record returned 2", func(s *memStore) { s.panicRecord = "*" }},
		{"lookup returns an error", `(run "run-1"): the host's lookup returned 1`, func(s *memStore) { s.failLookup = true }},
		{"lookup panics", "the host's lookup returned 2", func(s *memStore) { s.panicLookup = true }},
		{"lookup answers what is not a record", "not a journal record", func(s *memStore) { s.answer = []byte(`{"kind":"nope"}`) }},
		{"lookup answers bytes that are not UTF-8", "the host's lookup returned 4", func(s *memStore) { s.answer = []byte{0xff} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := newMemStore()
			c.set(store)
			res := run(t, journaled(t, store, false, charge), call("c1", "charge", `{"n":1}`))
			if !res[0].IsError() || !strings.Contains(res[0].Content, c.want) || !strings.Contains(res[0].Content, "The tool was not run") {
				t.Errorf("got %+v, want an error result with %q", res[0], c.want)
			}
			if runs.Load() != 0 {
				t.Errorf("the tool ran %d times", runs.Load())
			}
		})
	}
	// A `completed` that cannot be written still hands over the result of
	// the tool that ran (a later run finds its outcome unknown).
	store := newMemStore()
	store.failRecord = "completed"
	res := run(t, journaled(t, store, false, charge), call("c1", "charge", `{"n":1}`))
	if res[0].Content != "charge 1" {
		t.Errorf("a failed completed record: %+v", res[0])
	}
}

// settledStores is the count of live host stores once it stops moving: a
// registry an earlier test closed may let go of its journal a moment after
// Close returned (a pool thread drops the batch that held it), so the
// count read at once could still include that test's store.
func settledStores() int64 {
	prev, same := int64(-1), 0
	for i := 0; i < 200 && same < 3; i++ {
		live, _ := capstan.JournalStores()
		if live == prev {
			same++
		} else {
			prev, same = live, 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	return prev
}

// storesReach waits (10 s at most) until want stores are live; the count
// it last read, and the stores released twice.
func storesReach(want int64) (live, double int64) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		live, double = capstan.JournalStores()
		if live == want || time.Now().After(deadline) {
			return live, double
		}
		time.Sleep(time.Millisecond)
	}
}

// Rule 4: the store stays alive while a registry uses the journal, after
// the journal's Close, and is released exactly once when both are gone,
// in either order.
func TestAHostJournalStoreLivesAsLongAsItsJournalOrARegistryUsingIt(t *testing.T) {
	base := settledStores()
	var runs atomic.Int32
	store := newMemStore()
	j, err := capstan.NewJournal(store)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(countedTool("charge", &runs, false)); err != nil {
		t.Fatal(err)
	}
	if err := reg.SetJournal(j, false); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	_ = j.Close() // a second Close does nothing
	if err := reg.SetJournal(j, false); err == nil || !strings.Contains(err.Error(), "journal is closed") {
		t.Errorf("SetJournal of a closed journal: %v", err)
	}
	runtime.GC()
	run(t, reg, call("c1", "charge", `{"n":1}`))
	if n := len(store.records(t)); n != 3 {
		t.Errorf("after the journal's Close the store got %d records, want 3", n)
	}
	if live, _ := capstan.JournalStores(); live != base+1 {
		t.Errorf("%d live stores while the registry uses it, want %d", live, base+1)
	}
	_ = reg.Close()
	if live, double := storesReach(base); live != base || double != 0 {
		t.Errorf("after both closed: %d live stores (want %d), %d released twice", live, base, double)
	}

	// The registry first, then the journal; and a registry that drops it.
	j, err = capstan.NewJournal(newMemStore())
	if err != nil {
		t.Fatal(err)
	}
	reg = newRegistry(t)
	if err := reg.SetJournal(j, false); err != nil {
		t.Fatal(err)
	}
	if err := reg.SetJournal(nil, false); err != nil {
		t.Fatal(err)
	}
	_ = reg.Close()
	if live, _ := capstan.JournalStores(); live != base+1 {
		t.Errorf("the open journal's store was released with the registry: %d live, want %d", live, base+1)
	}
	_ = j.Close()
	if live, double := storesReach(base); live != base || double != 0 {
		t.Errorf("after the journal's Close: %d live stores (want %d), %d released twice", live, base, double)
	}

	if _, err := capstan.NewJournal(nil); !errors.Is(err, capstan.ErrNullParameter) {
		t.Errorf("NewJournal(nil): %v", err)
	}
}

// Rule 5: replay with a host's store runs no tool and writes nothing: a
// recorded call is answered, a missing one fails naming it.
func TestAHostJournalReplayRunsNoTool(t *testing.T) {
	store := newMemStore()
	var runs atomic.Int32
	charge := countedTool("charge", &runs, false)
	run(t, journaled(t, store, false, charge), call("c1", "charge", `{"n":1}`))
	written := len(store.records(t))
	res := run(t, journaled(t, store, true, charge), call("c1", "charge", `{"n":1}`), call("c9", "charge", `{"n":9}`))
	if res[0].Content != "charge 1" || res[0].IsError() {
		t.Errorf("the recorded call: %+v", res[0])
	}
	if !res[1].IsError() || !strings.Contains(res[1].Content, `Call "c9" of tool "charge" is not in the recording`) {
		t.Errorf("the missing call: %+v", res[1])
	}
	if runs.Load() != 1 || len(store.records(t)) != written {
		t.Errorf("replay ran %d tools (want 0) or wrote %d records", runs.Load()-1, len(store.records(t))-written)
	}
}

// blockingStore holds each `completed` record until n are being written at
// once (or `soon` passed), and counts how many it saw at once.
type blockingStore struct {
	*memStore
	n            int32
	inside, most atomic.Int32
	all          chan struct{}
	closeAll     sync.Once
}

func (s *blockingStore) Record(recordJSON []byte) error {
	if !strings.Contains(string(recordJSON), `"kind":"completed"`) {
		return s.memStore.Record(recordJSON)
	}
	now := s.inside.Add(1)
	defer s.inside.Add(-1)
	for m := s.most.Load(); now > m && !s.most.CompareAndSwap(m, now); m = s.most.Load() {
	}
	if now == s.n {
		s.closeAll.Do(func() { close(s.all) })
	}
	select {
	case <-s.all:
	case <-time.After(soon):
	}
	return s.memStore.Record(recordJSON)
}

// The store is called from several threads at once (the calls of a batch
// complete each on its own thread), and a store that is safe for that
// gets every record (run with -race).
func TestAHostJournalIsCalledFromSeveralThreadsAtOnce(t *testing.T) {
	const n = 4
	store := &blockingStore{memStore: newMemStore(), n: n, all: make(chan struct{})}
	var runs atomic.Int32
	reg := journaled(t, store, false, countedTool("charge", &runs, false))
	var calls []capstan.Call
	for i := range n {
		calls = append(calls, call("c"+strconvItoa(i), "charge", `{"n":1}`))
	}
	for _, r := range run(t, reg, calls...) {
		if r.IsError() {
			t.Errorf("%+v", r)
		}
	}
	if store.most.Load() != n {
		t.Errorf("at most %d records were written at once, want %d", store.most.Load(), n)
	}
	kinds := map[string]int{}
	for _, r := range store.records(t) {
		kinds[r.Kind]++
	}
	if kinds["started"] != n || kinds["completed"] != n {
		t.Errorf("records: %v, want %d started and %d completed", kinds, n, n)
	}
}
