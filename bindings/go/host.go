package capstan

// Host batches (include/capstan.h section 11): Execute hands the checked
// calls of Quick tools to the binding in one cgo crossing, runs them on
// goroutines under the batch's limit, and hands every answer back in one
// crossing, instead of a callback into Go, a cancellation watch and a
// completion per call. The batch's other calls run on capstan's pool as
// usual, meanwhile.

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// handedCall is one call capstan hands out: checked, defaults filled.
type handedCall struct {
	Index     int             `json:"index"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// hostAnswer is what a handed-out call's tool gave.
type hostAnswer struct {
	kind C.capstan_content
	text string
	err  error
}

// useHost reports whether Execute runs the batch as a host batch: some call
// names a Quick tool, none a tool that waits for someone else (the
// approver, a Pump), and the batch has no timeout, deadline or run id
// (capstan's clock and journal act on each call through its handle), nor
// Sequential (the binding would have to order its own calls), and it fits
// in its limit. A batch bigger than its limit runs its tools on capstan's
// pool threads, in their callbacks: there the checks and the rendering of
// the calls spread over both cores, where a host batch checks and renders
// them on one thread (measured in BENCHMARKS.md: with a limit of 8, 10,000
// calls cost more CPU as a host batch).
func (r *Registry) useHost(calls []Call, o *execOptions) bool {
	limit := o.limit
	if limit == 0 {
		limit = 8
	}
	if o.flags&C.CAPSTAN_EXEC_SEQUENTIAL != 0 || o.timeout != 0 || o.deadline != 0 || o.runID != "" || o.limit < 0 ||
		len(calls) > limit {
		return false
	}
	found := false
	for i := range calls {
		v, ok := r.tools.Load(calls[i].Name)
		if !ok {
			continue // unknown here (an MCP mount's, or none): capstan decides
		}
		t := &v.(*toolEntry).tool
		if t.RequiresApproval || t.MainThread {
			return false
		}
		found = found || t.hostRun()
	}
	return found
}

// executeHost runs calls as a host batch (see useHost).
func (r *Registry) executeHost(ctx context.Context, calls []Call, o *execOptions) ([]Result, error) {
	limit := o.limit
	if limit == 0 {
		limit = 8
	}
	body := appendCalls(make([]byte, 0, 64*len(calls)+2), calls)
	var approved **C.char
	if len(o.approved) > 0 {
		approved = cStrings(o.approved)
		defer freeCStrings(approved, len(o.approved))
	}
	// Entered for the batch's whole life: Close waits for it, and its
	// cancelling r.ctx ends the tools' contexts meanwhile.
	if err := r.enter("Execute"); err != nil {
		return nil, err
	}
	defer r.leave()
	var hb *C.capstan_host_batch
	var handedPtr *C.char
	var handedLen C.size_t
	var msg *C.char
	st := C.cg_host_begin(r.ptr, bytesPtr(body), C.size_t(len(body)), o.flags, C.uint32_t(min(limit, 1<<31)),
		approved, C.size_t(len(o.approved)), &hb, &handedPtr, &handedLen, &msg)
	if st != C.CAPSTAN_OK {
		return nil, newError("Execute", st, msg)
	}
	// Cancelling ctx cancels the batch (capstan's side) and the tools' ctx;
	// never after the free.
	bctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	var mu sync.Mutex
	freed := false
	defer func() {
		mu.Lock()
		freed = true
		mu.Unlock()
		C.capstan_host_batch_free(hb)
	}()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			cancel()
			mu.Lock()
			if !freed {
				C.capstan_host_batch_cancel(hb)
			}
			mu.Unlock()
		})
		defer stop()
	}
	handed, err := scanHanded(unsafe.Slice((*byte)(unsafe.Pointer(handedPtr)), int(handedLen)))
	if err != nil {
		return nil, &Error{Op: "Execute", Status: ErrInternal, Message: "the calls capstan handed out are not JSON: " + err.Error()}
	}
	// Always an array, "[]" when every call was answered already (invalid,
	// unknown, denied): capstan takes no answers as none given.
	answers := r.runHanded(bctx, handed, limit)
	var results *C.char
	var resultsLen C.size_t
	st = C.cg_host_finish(hb, bytesPtr(answers), C.size_t(len(answers)), &results, &resultsLen, &msg)
	if st != C.CAPSTAN_OK {
		return nil, newError("Execute", st, msg)
	}
	res, err := scanResults(unsafe.Slice((*byte)(unsafe.Pointer(results)), int(resultsLen)), len(calls))
	if err != nil {
		return nil, err
	}
	return res, ctx.Err()
}

// runHanded runs the handed-out calls, at most limit at once (this
// goroutine is one of the workers), and returns capstan's answers array.
func (r *Registry) runHanded(ctx context.Context, handed []handedCall, limit int) []byte {
	out := make([]hostAnswer, len(handed))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(handed) {
				return
			}
			out[i] = r.runOne(ctx, &handed[i])
		}
	}
	workers := max(min(limit, len(handed)), 1)
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	b := make([]byte, 0, 64*len(handed)+2)
	b = append(b, '[')
	for i := range handed {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAnswer(b, &handed[i], &out[i])
	}
	return append(b, ']')
}

// runOne runs one handed-out call's tool (the registry's current one of
// that name).
func (r *Registry) runOne(ctx context.Context, c *handedCall) hostAnswer {
	v, ok := r.tools.Load(c.Name)
	if !ok {
		return hostAnswer{err: errors.New("the tool is gone")}
	}
	e := v.(*toolEntry)
	cctx := &callCtx{Context: ctx, info: CallInfo{ID: c.ID, Tool: c.Name}}
	if ctx.Err() != nil {
		return hostAnswer{err: context.Canceled}
	}
	kind, text, err := invoke(cctx, e.tool.Func, c.Arguments)
	return hostAnswer{kind: kind, text: text, err: err}
}

// appendAnswer writes one entry of the answers array.
func appendAnswer(b []byte, c *handedCall, a *hostAnswer) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(c.Index), 10)
	switch {
	case a.err != nil:
		msg := a.err.Error()
		var ask *InputRequired
		if errors.As(a.err, &ask) && ask != nil {
			msg = "Tool \"" + c.Name + "\" asked for input, which a Quick tool cannot do (it has no call handle)"
		}
		b = append(b, `,"error":`...)
		b = appendString(b, msg)
	case a.kind == C.CAPSTAN_CONTENT_JSON && !json.Valid([]byte(a.text)):
		// As the callback path does: a tool error the model reads.
		b = append(b, `,"error":`...)
		b = appendString(b, "Tool \""+c.Name+"\" returned malformed output: content is not valid JSON")
	case a.kind == C.CAPSTAN_CONTENT_JSON:
		b = append(b, `,"json":`...)
		b = append(b, a.text...)
	case a.kind == C.CAPSTAN_CONTENT_PARTS:
		b = append(b, `,"parts":`...)
		b = append(b, a.text...)
	default:
		b = append(b, `,"text":`...)
		b = appendString(b, a.text)
	}
	return append(b, '}')
}

// parseResults reads capstan's results array (call order) into Results.
func parseResults(text []byte, n int) ([]Result, error) {
	var wire []wireResult
	if err := json.Unmarshal(text, &wire); err != nil || len(wire) != n {
		msg := "capstan's results are not one per call"
		if err != nil {
			msg = "capstan's results are not JSON: " + err.Error()
		}
		return nil, &Error{Op: "Execute", Status: ErrInternal, Message: msg}
	}
	res := make([]Result, n)
	for i := range wire {
		w := &wire[i]
		res[i] = Result{Index: i, ID: w.ID, Name: w.Name, Content: w.Content, Outcome: w.Outcome,
			Duration: time.Duration(w.DurationUS) * time.Microsecond, Parts: w.Parts, Structured: w.Structured}
	}
	return res, nil
}
