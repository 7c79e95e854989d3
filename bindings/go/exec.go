package capstan

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"math"
	"runtime/cgo"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Call is one tool call as a model asked for it (capstan's normalized shape).
// Arguments is a JSON object, or a JSON string holding one (as OpenAI sends it).
type Call struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Outcome says how a call ended.
type Outcome uint32

// Outcomes of include/capstan.h.
const (
	OutcomeOK               Outcome = C.CAPSTAN_OUTCOME_OK
	OutcomeToolError        Outcome = C.CAPSTAN_OUTCOME_TOOL_ERROR
	OutcomeInvalidArguments Outcome = C.CAPSTAN_OUTCOME_INVALID_ARGUMENTS
	OutcomeUnknownTool      Outcome = C.CAPSTAN_OUTCOME_UNKNOWN_TOOL
	OutcomeTimeout          Outcome = C.CAPSTAN_OUTCOME_TIMEOUT
	OutcomeCancelled        Outcome = C.CAPSTAN_OUTCOME_CANCELLED
	OutcomeDenied           Outcome = C.CAPSTAN_OUTCOME_DENIED
)

var outcomeNames = [...]string{"ok", "tool_error", "invalid_arguments", "unknown_tool", "timeout", "cancelled", "denied"}

// String returns the name capstan uses in JSON ("ok", "tool_error", ...).
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// MarshalJSON writes the outcome's name.
func (o Outcome) MarshalJSON() ([]byte, error) { return json.Marshal(o.String()) }

// UnmarshalJSON reads an outcome's name.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for i, n := range outcomeNames {
		if n == s {
			*o = Outcome(i)
			return nil
		}
	}
	return &Error{Op: "Outcome", Status: ErrInvalidResults, Message: "unknown outcome " + strconv.Quote(s)}
}

// Result is one call's result: the text for the model and how the call ended.
type Result struct {
	Index    int           `json:"-"` // position of the call in its batch
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Content  string        `json:"content"` // what the model reads
	Outcome  Outcome       `json:"outcome"`
	Duration time.Duration `json:"-"`
	// Parts are the MCP content blocks of a tool that returned Parts or
	// Content (nil otherwise); Structured its structured content.
	Parts      json.RawMessage `json:"parts,omitempty"`
	Structured json.RawMessage `json:"structured_content,omitempty"`
}

// IsError reports whether the call did not end OutcomeOK.
func (r Result) IsError() bool { return r.Outcome != OutcomeOK }

type wireResult struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Content    string          `json:"content"`
	IsError    bool            `json:"is_error"`
	Outcome    Outcome         `json:"outcome"`
	DurationUS int64           `json:"duration_us"`
	Parts      json.RawMessage `json:"parts,omitempty"`
	Structured json.RawMessage `json:"structured_content,omitempty"`
}

// MarshalJSON writes capstan's normalized result shape.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireResult{r.ID, r.Name, r.Content, r.IsError(), r.Outcome, r.Duration.Microseconds(), r.Parts, r.Structured})
}

// UnmarshalJSON reads capstan's normalized result shape.
func (r *Result) UnmarshalJSON(b []byte) error {
	var w wireResult
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Result{ID: w.ID, Name: w.Name, Content: w.Content, Outcome: w.Outcome, Duration: time.Duration(w.DurationUS) * time.Microsecond,
		Parts: w.Parts, Structured: w.Structured}
	return nil
}

// ExecOption changes how Execute, Submit and RunTurn run a batch.
type ExecOption func(*execOptions)

type execOptions struct {
	flags    C.uint32_t
	limit    int
	timeout  time.Duration
	deadline time.Duration
	approved []string
	// RunTurn only: CAPSTAN_EXEC_WHOLE_TURN through capstan_registry_run_turn.
	wholeTurn bool
	// The run the calls belong to, for the registry's journal (SetJournal).
	runID string
}

// runID is the run id as C text (NULL without one) and what frees it.
func (o *execOptions) cRunID() (*C.char, C.size_t, func()) {
	if o.runID == "" {
		return nil, 0, func() {}
	}
	p := C.CString(o.runID)
	return p, C.size_t(len(o.runID)), func() { C.free(unsafe.Pointer(p)) }
}

// WithRunID names the run (a conversation, a workflow) the calls belong
// to: with a journal on the registry (SetJournal) each call is recorded
// under the run id plus its call id, and a call already completed under
// that key is answered from the journal without running its tool.
func WithRunID(id string) ExecOption { return func(o *execOptions) { o.runID = id } }

// Sequential runs the calls one by one, in order (default: in parallel).
func Sequential() ExecOption { return func(o *execOptions) { o.flags |= C.CAPSTAN_EXEC_SEQUENTIAL } }

// StrictNulls drops the nulls an OpenAI strict-mode model sends for optional
// arguments before validation (see ExportOptions.Strict).
func StrictNulls() ExecOption { return func(o *execOptions) { o.flags |= C.CAPSTAN_EXEC_STRICT_NULLS } }

// WholeTurn makes RunTurn return the whole turn as the next request needs
// it (CAPSTAN_EXEC_WHOLE_TURN): one JSON array, the model's own turn first
// (thinking blocks and their signatures, reasoning items with
// encrypted_content, Gemini thought signatures, unchanged), then the
// results; append it to the history as is. RunTurn then runs the turn in
// capstan_registry_run_turn, tools on capstan's pool threads: ctx is
// checked before it starts and its deadline bounds the calls (as
// WithDeadline), but cancelling ctx does not stop a turn under way. Execute
// and Submit ignore it.
func WholeTurn() ExecOption { return func(o *execOptions) { o.wholeTurn = true } }

// WithLimit runs at most n calls of the batch at once (default 8).
func WithLimit(n int) ExecOption { return func(o *execOptions) { o.limit = n } }

// WithTimeout overrides every tool's timeout for this batch.
func WithTimeout(d time.Duration) ExecOption { return func(o *execOptions) { o.timeout = d } }

// WithDeadline bounds every call of the batch, counted from the moment it is
// submitted, waits included (for a free worker, the approver's decision, a
// Pump): a call without a result by then ends OutcomeTimeout with content
// saying what it was waiting for, and a running tool sees its ctx
// cancelled. WithTimeout, by contrast, bounds each call from its start.
func WithDeadline(d time.Duration) ExecOption { return func(o *execOptions) { o.deadline = d } }

// WithApproved lists ids of calls the user already approved: their
// RequiresApproval tools run without asking the approver.
func WithApproved(ids ...string) ExecOption {
	return func(o *execOptions) { o.approved = append(o.approved, ids...) }
}

// Execute runs calls and returns one result per call, in call order. Tool
// failures, invalid arguments, unknown tools, timeouts and denials are
// results, not errors; the error is for malformed calls or a closed registry.
// When ctx ends first, the batch is cancelled (calls not started report
// OutcomeCancelled, running tools see their ctx cancelled), Execute still
// waits for every result and returns them with ctx.Err().
//
// Where tools run: a lone call without a timeout or deadline, with a ctx
// that cannot be cancelled, on the calling goroutine, in one cgo call (a
// lone call that waits for the approver or a Pump holds its OS thread
// meanwhile; at most 64 such calls at once, the others are submitted); a batch of at most WithLimit calls,
// each on its own goroutine; a bigger or Sequential batch on capstan's pool
// threads, which apply the limit.
func (r *Registry) Execute(ctx context.Context, calls []Call, opts ...ExecOption) ([]Result, error) {
	if len(calls) == 1 && ctx.Done() == nil {
		if res, done, err := r.executeOne(calls, opts); done {
			return res, err
		}
	}
	var o execOptions
	for _, opt := range opts {
		opt(&o)
	}
	if r.useHost(calls, &o) {
		return r.executeHost(ctx, calls, &o)
	}
	b, err := r.submit(ctx, "Execute", calls, false, opts)
	if err != nil {
		return nil, err
	}
	<-b.done
	return b.slots, ctx.Err()
}

// Submit starts calls and returns at once. Results arrive on Batch.Results as
// each call finishes; Batch.Wait returns them all in call order. Cancelling
// ctx cancels the batch (as Batch.Cancel).
func (r *Registry) Submit(ctx context.Context, calls []Call, opts ...ExecOption) (*Batch, error) {
	return r.submit(ctx, "Submit", calls, true, opts)
}

// Batch is a running set of calls started by Submit.
type Batch struct {
	ch    chan Result
	done  chan struct{}
	stop  func() bool // stops the ctx watch
	mu    sync.Mutex
	slots []Result
	// The C batch is freed once it is done and no Cancel uses it.
	ptr      *C.capstan_batch
	users    int
	finished bool
}

// Results delivers each result as its call finishes; it is closed after the
// last. It holds every result, so a reader may start late or never.
func (b *Batch) Results() <-chan Result { return b.ch }

// Done is closed once every call of the batch has its result.
func (b *Batch) Done() <-chan struct{} { return b.done }

// Wait waits until every call has its result and returns them in call order,
// or returns ctx.Err() if ctx ends first (the batch keeps running).
func (b *Batch) Wait(ctx context.Context) ([]Result, error) {
	select {
	case <-b.done:
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.slots, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Cancel cancels the batch: calls not started report OutcomeCancelled;
// running tools see their ctx cancelled and still deliver their own result.
// Every call still gets exactly one result. Safe to call at any time, twice,
// or after the batch is done.
func (b *Batch) Cancel() {
	b.mu.Lock()
	p := b.ptr
	if p == nil || b.finished {
		b.mu.Unlock()
		return
	}
	b.users++
	b.mu.Unlock()
	C.capstan_batch_cancel(p)
	kickSweep()
	b.release()
}

// release drops one use of the C batch and frees it if it was the last use
// of a finished batch. Frees outside the lock: freeing waits for running
// result callbacks, which take the lock.
func (b *Batch) release() {
	b.mu.Lock()
	b.users--
	p := b.freeable()
	b.mu.Unlock()
	if p != nil {
		C.capstan_batch_free(p)
	}
}

func (b *Batch) freeable() *C.capstan_batch {
	if b.finished && b.users == 0 && b.ptr != nil {
		p := b.ptr
		b.ptr = nil
		return p
	}
	return nil
}

func (r *Registry) submit(ctx context.Context, op string, calls []Call, stream bool, opts []ExecOption) (*Batch, error) {
	var o execOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.limit < 0 || o.timeout < 0 || o.deadline < 0 {
		return nil, &Error{Op: op, Status: ErrInvalidArgument, Message: "limit, timeout and deadline must not be negative"}
	}
	limit := o.limit
	if limit == 0 {
		limit = 8
	}
	body := appendCalls(make([]byte, 0, 64*len(calls)+2), calls)
	b := &Batch{done: make(chan struct{}), slots: make([]Result, len(calls))}
	if stream {
		b.ch = make(chan Result, len(calls))
	}
	flags := o.flags
	runHere := C.int(runOnGoroutine)
	if flags&C.CAPSTAN_EXEC_SEQUENTIAL == 0 && len(calls) <= limit {
		// Every call would start at once anyway: start them on this thread,
		// each on its own goroutine, with no pool thread in between. A
		// bigger batch goes through capstan's pool, which applies the limit
		// (calls not started yet can then still be cancelled), and its
		// tools run on the pool threads.
		flags |= C.CAPSTAN_EXEC_START_INLINE
		// A lone call runs right here when nothing could cancel it while it
		// runs (Cancel needs the batch, which exists once submit returns).
		if len(calls) == 1 && o.timeout == 0 && o.deadline == 0 && ctx.Done() == nil && acquireRunHere() {
			runHere = runHereUntimed
			defer releaseRunHere()
		}
	}
	var approved **C.char
	if len(o.approved) > 0 {
		approved = cStrings(o.approved)
		defer freeCStrings(approved, len(o.approved))
	}
	if err := r.enter(op); err != nil {
		return nil, err
	}
	h := cgo.NewHandle(b)
	var out *C.capstan_batch
	var msg *C.char
	rid, ridLen, freeRid := o.cRunID()
	defer freeRid()
	st := C.cg_submit(r.ptr, bytesPtr(body), C.size_t(len(body)), flags, C.uint32_t(min(uint64(limit), math.MaxUint32)),
		millis(o.timeout), millis(o.deadline), approved, C.size_t(len(o.approved)), rid, ridLen, C.uintptr_t(h), runHere, &out, &msg)
	r.leave()
	if st != C.CAPSTAN_OK {
		h.Delete()
		return nil, newError(op, st, msg)
	}
	b.mu.Lock()
	b.ptr = out
	p := b.freeable()
	b.mu.Unlock()
	if p != nil {
		C.capstan_batch_free(p)
	} else if ctx.Done() != nil {
		b.mu.Lock()
		if !b.finished {
			b.stop = context.AfterFunc(ctx, b.Cancel)
		}
		b.mu.Unlock()
	}
	return b, nil
}

// oneCall is the memory a lone call hands to cg_execute_one (its calls'
// JSON, the room its result is copied to), reused: none of it outlives the
// call, and neither holds a Go pointer.
type oneCall struct {
	res  C.cg_one_result
	body [512]byte
}

var oneCalls = sync.Pool{New: func() any { return new(oneCall) }}

// executeOne runs a lone call that nothing can cancel while it runs (no
// timeout, no deadline, a ctx that cannot end, not Sequential) in one cgo
// call, its tool on this goroutine: no batch, handle or channel, and no
// callback into Go but the tool's (cg_execute_one). done is false when the
// call does not qualify, or runHereMax such calls already run: submit then.
func (r *Registry) executeOne(calls []Call, opts []ExecOption) (res []Result, done bool, err error) {
	var o execOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.flags&C.CAPSTAN_EXEC_SEQUENTIAL != 0 || o.limit < 0 || o.timeout != 0 || o.deadline != 0 || !acquireRunHere() {
		return nil, false, nil
	}
	defer releaseRunHere()
	oc := oneCalls.Get().(*oneCall)
	defer oneCalls.Put(oc)
	body := appendCalls(oc.body[:0], calls)
	var approved **C.char
	if len(o.approved) > 0 {
		approved = cStrings(o.approved)
		defer freeCStrings(approved, len(o.approved))
	}
	if err := r.enter("Execute"); err != nil {
		return nil, true, err
	}
	one := &oc.res
	one.buf, one.got = nil, 0
	var msg *C.char
	rid, ridLen, freeRid := o.cRunID()
	defer freeRid()
	st := C.cg_execute_one(r.ptr, bytesPtr(body), C.size_t(len(body)), o.flags, approved, C.size_t(len(o.approved)), rid, ridLen, one, &msg)
	r.leave()
	if st != C.CAPSTAN_OK {
		return nil, true, newError("Execute", st, msg)
	}
	if one.got == 0 {
		return nil, true, &Error{Op: "Execute", Status: ErrInternal, Message: "out of memory copying the result"}
	}
	// One Go copy of the copied result; the strings share it.
	n := one.id_len + one.name_len + one.content_len + one.parts_len + one.structured_len
	var all string
	if one.buf == nil {
		all = C.GoStringN(&one.inline_buf[0], C.int(n))
	} else {
		all = C.GoStringN(one.buf, C.int(n))
		C.free(unsafe.Pointer(one.buf))
	}
	at := 0
	next := func(l C.size_t) string {
		part := all[at : at+int(l)]
		at += int(l)
		return part
	}
	result := Result{
		Index:    int(one.index),
		ID:       next(one.id_len),
		Name:     next(one.name_len),
		Content:  next(one.content_len),
		Outcome:  Outcome(one.outcome),
		Duration: time.Duration(one.duration_us) * time.Microsecond,
	}
	if parts := next(one.parts_len); one.has_parts != 0 {
		result.Parts = json.RawMessage(parts)
	}
	if structured := next(one.structured_len); one.has_structured != 0 {
		result.Structured = json.RawMessage(structured)
	}
	return []Result{result}, true, nil
}

// onResult receives one result (nil: the batch is done) on the thread that
// finished the call.
func (b *Batch) onResult(h cgo.Handle, r *C.capstan_result) {
	if r == nil {
		b.mu.Lock()
		b.finished = true
		stop := b.stop
		p := b.freeable()
		b.mu.Unlock()
		h.Delete()
		if stop != nil {
			stop()
		}
		if b.ch != nil {
			close(b.ch)
		}
		close(b.done)
		if p != nil {
			C.capstan_batch_free(p)
		}
		return
	}
	res := cResult(r)
	b.mu.Lock()
	if res.Index >= 0 && res.Index < len(b.slots) {
		b.slots[res.Index] = res
	}
	b.mu.Unlock()
	if b.ch != nil {
		b.ch <- res // never blocks: the channel holds every result
	}
}

// cResult copies a C result, with its content parts and structured content
// when it has them (capstan's, after its checks and caps).
func cResult(r *C.capstan_result) Result {
	res := Result{
		Index:    int(r.index),
		ID:       C.GoStringN(r.id, C.int(r.id_len)),
		Name:     C.GoStringN(r.name, C.int(r.name_len)),
		Content:  C.GoStringN(r.content, C.int(r.content_len)),
		Outcome:  Outcome(r.outcome),
		Duration: time.Duration(r.duration_us) * time.Microsecond,
	}
	if r.parts_json != nil {
		res.Parts = json.RawMessage(C.GoBytes(unsafe.Pointer(r.parts_json), C.int(r.parts_json_len)))
	}
	if r.structured_json != nil {
		res.Structured = json.RawMessage(C.GoBytes(unsafe.Pointer(r.structured_json), C.int(r.structured_json_len)))
	}
	return res
}

// appendCalls writes calls as capstan's normalized JSON array.
func appendCalls(b []byte, calls []Call) []byte {
	b = append(b, '[')
	for i, c := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		// No ID: none sent, so that capstan gives it "call_<index>" as in
		// every binding (tests/fixtures/binding_behaviour.json).
		b = append(b, '{')
		if c.ID != "" {
			b = append(b, `"id":`...)
			b = appendString(b, c.ID)
			b = append(b, ',')
		}
		b = append(b, `"name":`...)
		b = appendString(b, c.Name)
		if len(c.Arguments) > 0 {
			b = append(b, `,"arguments":`...)
			if json.Valid(c.Arguments) {
				b = append(b, c.Arguments...)
			} else {
				// As text: capstan fails this call alone (invalid_arguments,
				// line and column within its own arguments) instead of the
				// whole batch failing on the array assembled here (issue 49).
				b = appendString(b, string(c.Arguments))
			}
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendString appends s as a JSON string; text that needs escaping goes
// through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// cStrings copies strs into a malloc'd array of malloc'd C strings.
func cStrings(strs []string) **C.char {
	p := (**C.char)(C.malloc(C.size_t(len(strs)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	for i, s := range strs {
		unsafe.Slice(p, len(strs))[i] = C.CString(s)
	}
	return p
}

func freeCStrings(p **C.char, n int) {
	for _, s := range unsafe.Slice(p, n) {
		C.free(unsafe.Pointer(s))
	}
	C.free(unsafe.Pointer(p))
}

// millis converts a duration to capstan's milliseconds, rounding up so that
// a positive duration never becomes "none".
func millis(d time.Duration) C.uint32_t {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms >= 1<<32-1 {
		return 1<<32 - 2
	}
	return C.uint32_t(ms)
}

var emptyC = C.CString("")

// bytesPtr points C at Go bytes for the duration of one call (capstan copies
// what it keeps). Never NULL: an empty slice points at a static "".
func bytesPtr(b []byte) *C.char {
	if len(b) == 0 {
		return emptyC
	}
	return (*C.char)(unsafe.Pointer(unsafe.SliceData(b)))
}

func stringPtr(s string) *C.char {
	if len(s) == 0 {
		return emptyC
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s)))
}
