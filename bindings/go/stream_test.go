package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// chunk is one OpenAI Chat streaming event with this delta.
func chunk(delta string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
}

func callStart(i int, id, name string) string {
	return chunk(`{"tool_calls":[{"index":` + strconvItoa(i) + `,"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":""}}]}`)
}

func callArgs(i int, args string) string {
	q, _ := json.Marshal(args)
	return chunk(`{"tool_calls":[{"index":` + strconvItoa(i) + `,"function":{"arguments":` + string(q) + `}}]}`)
}

const streamEnd = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` +
	"\n\ndata: [DONE]\n\n"

// The body of a response with text and two calls, cut where the first
// call is complete (the second has begun) and the rest.
func twoCallBody(first, second string) (head, tail string) {
	head = chunk(`{"role":"assistant","content":"Checking "}`) + chunk(`{"content":"both."}`) +
		callStart(0, "call_a", first) + callArgs(0, `{"n":`) + callArgs(0, `1}`) +
		callStart(1, "call_b", second) + callArgs(1, `{"n":`)
	return head, callArgs(1, `2}`) + streamEnd
}

type numIn struct {
	N int `json:"n"`
}

func countingTool(name string, started *atomic.Int32) capstan.Tool {
	t := capstan.Func(name, "", func(_ context.Context, in numIn) (string, error) {
		started.Add(1)
		return name + " " + strconvItoa(in.N), nil
	})
	return t
}

type collector struct {
	mu      sync.Mutex
	text    strings.Builder
	results chan capstan.Result
}

func newCollector() *collector { return &collector{results: make(chan capstan.Result, 16)} }

func (c *collector) handlers() capstan.StreamHandlers {
	return capstan.StreamHandlers{
		Text:   func(s string) { c.mu.Lock(); c.text.WriteString(s); c.mu.Unlock() },
		Result: func(r capstan.Result) { c.results <- r },
	}
}

func (c *collector) next(t *testing.T) capstan.Result {
	t.Helper()
	select {
	case r := <-c.results:
		return r
	case <-time.After(soon):
		t.Fatal("no result came")
		return capstan.Result{}
	}
}

func TestStreamStartsACompleteCallBeforeTheResponseEnds(t *testing.T) {
	var started atomic.Int32
	reg := newRegistry(t, countingTool("first", &started), countingTool("second", &started))
	c := newCollector()
	s, err := reg.NewStream(context.Background(), capstan.FormatOpenAIChat, c.handlers(), capstan.EarlyDispatch())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head, tail := twoCallBody("first", "second")
	if _, err := s.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	// The first call's result arrives while the response is still open.
	if r := c.next(t); r.Index != 0 || r.ID != "call_a" || r.Content != "first 1" {
		t.Fatalf("early result %+v", r)
	}
	// Split inside an event: the stream takes bytes as they come.
	for _, part := range []string{tail[:7], tail[7:]} {
		if _, err := s.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	turn, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if r := c.next(t); r.Index != 1 || r.Content != "second 2" {
		t.Fatalf("second result %+v", r)
	}
	if len(turn.Calls) != 2 || turn.Calls[1].Name != "second" || len(turn.Results) != 2 ||
		turn.Results[0].Content != "first 1" || turn.Results[1].Content != "second 2" || turn.Results[1].Index != 1 {
		t.Fatalf("turn %+v", turn)
	}
	if turn.Text != "Checking both." || c.text.String() != turn.Text || turn.StopReason != "tool_calls" || turn.Cancelled {
		t.Fatalf("text %q (handler %q), stop %q", turn.Text, c.text.String(), turn.StopReason)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(turn.Messages, &msgs); err != nil || len(msgs) != 2 || msgs[1]["tool_call_id"] != "call_b" {
		t.Fatalf("messages %s", turn.Messages)
	}
	if _, err := s.Finish(); !errors.Is(err, capstan.ErrWrongContext) {
		t.Fatalf("second Finish: %v", err)
	}
}

func TestStreamWithoutEarlyDispatchAndWaitForResponseTools(t *testing.T) {
	var started, waitStarted atomic.Int32
	wait := countingTool("careful", &waitStarted)
	wait.WaitForResponse = true
	reg := newRegistry(t, countingTool("first", &started), wait)
	head, tail := twoCallBody("first", "careful")

	// Without EarlyDispatch nothing starts before Finish.
	c := newCollector()
	s, err := reg.NewStream(context.Background(), capstan.FormatOpenAIChat, c.handlers())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte(head + tail)); err != nil {
		t.Fatal(err)
	}
	if started.Load() != 0 || waitStarted.Load() != 0 {
		t.Fatal("a call started before Finish without EarlyDispatch")
	}
	if turn, err := s.Finish(); err != nil || turn.Results[0].Content != "first 1" || turn.Results[1].Content != "careful 2" {
		t.Fatalf("%+v %v", turn, err)
	}
	s.Close()

	// With it, a WaitForResponse tool still waits: the other call, complete
	// after it, has finished while it has not started.
	started.Store(0)
	waitStarted.Store(0)
	head, tail = twoCallBody("careful", "first")
	c = newCollector()
	s, err = reg.NewStream(context.Background(), capstan.FormatOpenAIChat, c.handlers(), capstan.EarlyDispatch())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write([]byte(head + callArgs(1, `2}`))); err != nil {
		t.Fatal(err)
	}
	if r := c.next(t); r.Index != 1 || r.Content != "first 2" {
		t.Fatalf("early result %+v", r)
	}
	if waitStarted.Load() != 0 {
		t.Fatal("a WaitForResponse tool started before the response ended")
	}
	if _, err := s.Write([]byte(streamEnd)); err != nil {
		t.Fatal(err)
	}
	if turn, err := s.Finish(); err != nil || turn.Results[0].Content != "careful 1" || waitStarted.Load() != 1 {
		t.Fatalf("%+v %v", turn, err)
	}
}

func TestStreamErrors(t *testing.T) {
	var started atomic.Int32
	reg := newRegistry(t, countingTool("first", &started))
	head, _ := twoCallBody("first", "first")

	s, err := reg.NewStream(context.Background(), capstan.FormatOpenAIChat, capstan.StreamHandlers{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(); !errors.Is(err, capstan.ErrStreamTruncated) {
		t.Fatalf("a body without its end: %v", err)
	}
	s.Close()
	if started.Load() != 0 {
		t.Fatal("a call of a truncated response ran")
	}

	s, err = reg.NewStream(context.Background(), capstan.FormatOpenAIChat, capstan.StreamHandlers{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Write([]byte(`data: {"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}` + "\n\n"))
	var e *capstan.Error
	if !errors.As(err, &e) || e.Status != capstan.ErrProviderError || e.Provider == nil || e.Provider.Kind != "server_error" {
		t.Fatalf("error event: %v", err)
	}
	if _, err := s.Write([]byte(head)); !errors.Is(err, capstan.ErrProviderError) {
		t.Fatalf("the error is not sticky: %v", err)
	}

	if _, err := reg.NewStream(context.Background(), capstan.FormatMCP, capstan.StreamHandlers{}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("MCP stream: %v", err)
	}
	if _, err := reg.NewStream(context.Background(), capstan.FormatOpenAIChat, capstan.StreamHandlers{}, capstan.Sequential(), capstan.WithLimit(-1)); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("negative limit: %v", err)
	}
}

func TestStreamCancelledByItsContext(t *testing.T) {
	var started atomic.Int32
	reg := newRegistry(t, countingTool("first", &started))
	head, tail := twoCallBody("first", "first")
	ctx, cancel := context.WithCancel(context.Background())
	s, err := reg.NewStream(ctx, capstan.FormatOpenAIChat, capstan.StreamHandlers{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write([]byte(head + tail)); err != nil {
		t.Fatal(err)
	}
	cancel()
	// AfterFunc runs Cancel on its own goroutine: wait for later Writes to fail.
	for deadline := time.Now().Add(soon); ; time.Sleep(time.Millisecond) {
		if _, err := s.Write(nil); errors.Is(err, capstan.ErrWrongContext) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the stream was never cancelled: %v", err)
		}
	}
	turn, err := s.Finish()
	if err != nil || !turn.Cancelled || len(turn.Results) != 2 || turn.Results[0].Outcome != capstan.OutcomeCancelled || started.Load() != 0 {
		t.Fatalf("%+v %v (started %d)", turn, err, started.Load())
	}
}

func TestRunStreamReadsABodyAndCarriesParts(t *testing.T) {
	reg := newRegistry(t, screenshotTool())
	body := chunk(`{"role":"assistant","content":null}`) + callStart(0, "c1", "screenshot") + callArgs(0, `{}`) + streamEnd
	c := newCollector()
	turn, err := reg.RunStream(context.Background(), capstan.FormatOpenAIChat, strings.NewReader(body), c.handlers(), capstan.EarlyDispatch())
	if err != nil {
		t.Fatal(err)
	}
	if r := c.next(t); len(blocks(t, r.Parts)) != 2 {
		t.Fatalf("the handler's result has no parts: %+v", r)
	}
	if len(turn.Results) != 1 || len(blocks(t, turn.Results[0].Parts)) != 2 || !strings.Contains(string(turn.Messages), `"type":"image_url"`) {
		t.Fatalf("%+v", turn)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c = newCollector()
	turn, err = reg.RunStream(ctx, capstan.FormatOpenAIChat, strings.NewReader(body), c.handlers())
	if !errors.Is(err, context.Canceled) || len(turn.Results) != 0 || len(c.results) != 0 {
		t.Fatalf("a cancelled ctx: %+v %v", turn, err)
	}
	failing := errReader{}
	if _, err := reg.RunStream(context.Background(), capstan.FormatOpenAIChat, failing, capstan.StreamHandlers{}); !errors.Is(err, errBody) {
		t.Fatalf("a body that fails to read: %v", err)
	}
}

var errBody = errors.New("connection reset")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBody }
