package capstan

// Streams: a streamed model response read as it arrives, each tool call
// started as soon as its arguments are complete (capstan_stream_*).

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// EarlyDispatch starts each call of a stream the moment its arguments are
// complete, before the response ends, unless its tool is flagged
// WaitForResponse. Off by default: a response can still fail after a call
// is complete (a provider error, a dropped connection), and a host that then
// asks again would run that call twice. Execute, Submit and RunTurn ignore
// it. WithLimit also caps the calls started early and still running.
func EarlyDispatch() ExecOption {
	return func(o *execOptions) { o.flags |= C.CAPSTAN_EXEC_EARLY_DISPATCH }
}

// StreamHandlers receive what a Stream reads as it reads it. Either may be
// nil.
type StreamHandlers struct {
	// Text gets each piece of the model's text (never a partial
	// character), on the goroutine calling Write or Finish, inside it.
	Text func(text string)
	// Result gets each call's result as the call ends (Index: its position
	// in the response), on the thread that ended it, possibly on several
	// at once: it must be quick and must not block.
	Result func(r Result)
}

// StreamTurn is what a finished Stream read and ran.
type StreamTurn struct {
	Calls    []Call          // the response's calls, in order
	Results  []Result        // one per call, in call order
	Messages json.RawMessage // the results as the provider's next request takes them
	Text     string          // the response's text
	// StopReason is the provider's stop or finish reason ("" when none).
	StopReason string
	Cancelled  bool  // the stream was cancelled (Cancel or its ctx)
	CutCalls   []int // positions of calls the response cut (never run)
}

// Stream reads one streamed model response (the body of a server-sent
// events response) in a provider's format. Write the body to it as it
// arrives (it is an io.Writer: io.Copy(stream, resp.Body)), then Finish.
// Close it when done. Write and Finish must not be called at once from two
// goroutines; Cancel may be called from any goroutine at any time.
type Stream struct {
	reg      *Registry
	handlers StreamHandlers
	h        cgo.Handle
	stop     func() bool // stops the ctx watch

	mu       sync.Mutex // held by Write, Finish, Close
	cancelMu sync.Mutex // held by Cancel, and by Close to clear ptr
	ptr      *C.capstan_stream
	finished bool
}

// NewStream starts reading a streamed response in format (OpenAI Chat,
// OpenAI Responses, Anthropic or Gemini; Gemini's streamGenerateContent
// with alt=sse). opts say how calls run, as for Execute, plus EarlyDispatch.
// Ending ctx cancels the stream (see Cancel).
func (r *Registry) NewStream(ctx context.Context, format Format, h StreamHandlers, opts ...ExecOption) (*Stream, error) {
	var o execOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.limit < 0 || o.timeout < 0 || o.deadline < 0 {
		return nil, &Error{Op: "NewStream", Status: ErrInvalidArgument, Message: "limit, timeout and deadline must not be negative"}
	}
	var approved **C.char
	if len(o.approved) > 0 {
		approved = cStrings(o.approved)
		defer freeCStrings(approved, len(o.approved))
	}
	s := &Stream{reg: r, handlers: h}
	s.h = cgo.NewHandle(s)
	if err := r.enter("NewStream"); err != nil {
		s.h.Delete()
		return nil, err
	}
	var msg *C.char
	rid, ridLen, freeRid := o.cRunID()
	defer freeRid()
	st := C.cg_stream_new(r.ptr, C.capstan_format(format), o.flags, C.uint32_t(min(uint64(o.limit), math.MaxUint32)),
		millis(o.timeout), millis(o.deadline), approved, C.size_t(len(o.approved)), rid, ridLen, C.uintptr_t(s.h), &s.ptr, &msg)
	r.leave()
	if st != C.CAPSTAN_OK {
		s.h.Delete()
		return nil, newError("NewStream", st, msg)
	}
	if ctx.Err() != nil {
		s.Cancel() // at once, not on AfterFunc's goroutine: nothing runs
	} else if ctx.Done() != nil {
		s.stop = context.AfterFunc(ctx, s.Cancel)
	}
	return s, nil
}

// Write reads the next bytes of the response body, split anywhere. Text goes
// to the Text handler before it returns; with EarlyDispatch each call whose
// arguments are complete starts now. Errors are sticky (every later Write
// and Finish return the same): ErrProviderError for the provider's error
// event, ErrInvalidResponse for an event that is not the format's,
// ErrStreamTooLarge past 16 MiB held at once, ErrWrongContext after Finish
// or Cancel. Calls already started keep running.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return 0, &Error{Op: "Stream.Write", Status: ErrWrongContext, Message: "the stream is closed"}
	}
	err := check("Stream.Write", func() C.capstan_status {
		return C.capstan_stream_feed(s.ptr, unsafe.Pointer(bytesPtr(p)), C.size_t(len(p)))
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Finish says the body ended: it starts the calls not started yet, waits
// until every call has its result, and returns the turn. ErrStreamTruncated
// when the body ended before the response's closing event (a dropped
// connection: calls not started are not run), or Write's sticky error.
// After Cancel the calls not started end OutcomeCancelled and there is no
// error. Once only.
func (s *Stream) Finish() (StreamTurn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil || s.finished {
		return StreamTurn{}, &Error{Op: "Stream.Finish", Status: ErrWrongContext, Message: "the stream was already finished or closed"}
	}
	s.finished = true
	raw, err := takeText("Stream.Finish", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_stream_finish(s.ptr, out, n)
	})
	if err != nil {
		return StreamTurn{}, err
	}
	var w struct {
		Calls      []Call          `json:"calls"`
		Results    []Result        `json:"results"`
		Messages   json.RawMessage `json:"messages"`
		Text       string          `json:"text"`
		StopReason *string         `json:"stop_reason"`
		Cancelled  bool            `json:"cancelled"`
		CutCalls   []int           `json:"cut_calls"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return StreamTurn{}, &Error{Op: "Stream.Finish", Status: ErrInternal, Message: err.Error()}
	}
	for i := range w.Results {
		w.Results[i].Index = i
	}
	t := StreamTurn{Calls: w.Calls, Results: w.Results, Messages: w.Messages, Text: w.Text, Cancelled: w.Cancelled, CutCalls: w.CutCalls}
	if w.StopReason != nil {
		t.StopReason = *w.StopReason
	}
	return t, nil
}

// Cancel cancels the stream: no call starts any more, running tools see
// their ctx cancelled, later Writes fail. Still Finish to collect the
// results, or just Close. Any goroutine, any time; also from a handler.
func (s *Stream) Cancel() {
	s.cancelMu.Lock() // never held long: Close frees ptr after clearing it
	defer s.cancelMu.Unlock()
	if s.ptr != nil {
		C.capstan_stream_cancel(s.ptr)
		kickSweep()
	}
}

// Close frees the stream (calls still running finish in the background,
// their results dropped); after it no handler runs. Waits for a Write or
// Finish in progress. A second Close does nothing.
func (s *Stream) Close() error {
	if s.stop != nil {
		s.stop()
	}
	s.mu.Lock()
	s.cancelMu.Lock()
	p := s.ptr
	s.ptr = nil
	s.cancelMu.Unlock()
	s.mu.Unlock()
	if p != nil {
		C.capstan_stream_free(p)
		s.h.Delete()
	}
	return nil
}

// RunStream reads a whole streamed response from body (e.g. an HTTP
// response's Body) through a Stream and returns its turn: NewStream,
// io.Copy, Finish, Close. A read error of body cancels the stream and is
// returned with what Finish collected; so is ctx.Err() when ctx ended (the
// turn's calls not started then end OutcomeCancelled), as with Execute.
func (r *Registry) RunStream(ctx context.Context, format Format, body io.Reader, h StreamHandlers, opts ...ExecOption) (StreamTurn, error) {
	s, err := r.NewStream(ctx, format, h, opts...)
	if err != nil {
		return StreamTurn{}, err
	}
	defer s.Close()
	if _, err := io.Copy(s, body); err != nil {
		var capErr *Error
		if errors.As(err, &capErr) && ctx.Err() == nil {
			return StreamTurn{}, err // the stream's own error: Finish would say the same
		}
		s.Cancel()
		t, _ := s.Finish()
		if ctx.Err() != nil {
			return t, ctx.Err()
		}
		return t, err
	}
	t, err := s.Finish()
	if err == nil {
		err = ctx.Err()
	}
	return t, err
}

//export goStreamText
func goStreamText(h C.uintptr_t, text *C.char, n C.size_t) {
	s, _ := value(h).(*Stream)
	if s == nil || s.handlers.Text == nil {
		return
	}
	t := C.GoStringN(text, C.int(n))
	defer func() { _ = recover() }()
	s.handlers.Text(t)
}

//export goStreamResult
func goStreamResult(h C.uintptr_t, r *C.capstan_result) {
	s, _ := value(h).(*Stream)
	if s == nil || r == nil || s.handlers.Result == nil {
		return
	}
	res := cResult(r)
	defer func() { _ = recover() }()
	s.handlers.Result(res)
}
