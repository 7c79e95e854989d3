package capstan

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"math"
	"runtime/cgo"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Options configure a Registry.
type Options struct {
	// Coerce turns strings into numbers/integers/booleans where the schema
	// asks for those ("3" for an integer), instead of rejecting them.
	Coerce bool
}

// Registry holds tools and runs calls of them. All methods may be called
// from any goroutine at once. Close it when done: its C memory is not
// garbage-collected.
type Registry struct {
	ptr *C.capstan_registry

	// Close frees ptr only once no method is inside the C library with it.
	inUse     atomic.Int64
	closed    atomic.Bool
	drained   chan struct{}
	drainOnce sync.Once
	closeOnce sync.Once
	closeErr  error

	ctx    context.Context // parent of every tool call's ctx; ends at Close
	cancel context.CancelFunc

	// The Go tools by name (*toolEntry), for host batches (host.go): which
	// calls Execute may hand to the binding, and the function of each.
	tools sync.Map
}

// New creates a registry.
func New(opts Options) (*Registry, error) {
	var o C.capstan_registry_options
	o.struct_size = C.uint32_t(unsafe.Sizeof(o))
	if opts.Coerce {
		o.flags |= C.CAPSTAN_REGISTRY_COERCE
	}
	var ptr *C.capstan_registry
	if err := check("New", func() C.capstan_status { return C.capstan_registry_new(&o, &ptr) }); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Registry{ptr: ptr, drained: make(chan struct{}), ctx: ctx, cancel: cancel}, nil
}

func (r *Registry) enter(op string) error {
	r.inUse.Add(1)
	if r.closed.Load() {
		r.leave()
		return &Error{Op: op, Status: ErrShuttingDown, Message: "the registry is closed"}
	}
	return nil
}

func (r *Registry) leave() {
	if r.inUse.Add(-1) == 0 && r.closed.Load() {
		r.drainOnce.Do(func() { close(r.drained) })
	}
}

// Close shuts the registry down and waits, with no time limit, for what
// still runs: it is CloseContext(context.Background()), and makes a
// Registry an io.Closer.
func (r *Registry) Close() error { return r.CloseContext(context.Background()) }

// CloseContext shuts the registry down: calls not started end
// OutcomeCancelled, running tools see their ctx cancelled and are reported
// cancelled, every call still gets exactly one result, and each tool's
// resources are released. It waits for capstan's callbacks until ctx's
// deadline (none: no limit); past it, it returns an error wrapping
// ErrTimeout and what still runs finishes in the background. Tool goroutines
// that ignore their ctx may outlive it; their late results are dropped.
// Further calls return ErrShuttingDown; a second Close or CloseContext
// returns the first one's error. Neither must be called from inside a tool
// running on the Pump goroutine or a lone Execute call (it would wait for
// itself).
func (r *Registry) CloseContext(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.closed.Store(true)
		r.inUse.Add(1)
		r.leave() // signals drained if nobody is inside
		timeout := C.uint32_t(math.MaxUint32)
		if d, ok := ctx.Deadline(); ok {
			timeout = millis(max(time.Until(d), time.Millisecond))
		}
		// Tools' contexts end first: capstan_registry_close waits for the
		// tools that run in its callbacks.
		r.cancel()
		r.closeErr = check("Close", func() C.capstan_status { return C.capstan_registry_close(r.ptr, timeout) })
		kickSweep()
		select {
		case <-r.drained:
			r.free()
		case <-ctx.Done():
			if r.closeErr == nil {
				r.closeErr = ctx.Err()
			}
			go func() { <-r.drained; r.free() }()
		}
	})
	return r.closeErr
}

func (r *Registry) free() {
	C.capstan_registry_free(r.ptr) // runs the hooks' destroys (hooks.go)
}

// RegisterOption changes how Register registers a tool.
type RegisterOption func(*C.uint32_t)

// Replace makes Register replace a tool of the same name (the old one's
// calls in flight finish first) instead of failing (CAPSTAN_TOOL_REPLACE).
func Replace() RegisterOption {
	return func(flags *C.uint32_t) { *flags |= C.CAPSTAN_TOOL_REPLACE }
}

// Register adds a tool. A tool of the same name already registered makes it
// fail with ErrInvalidArgument naming the tool, unless Replace() is given.
// Other errors: ErrInvalidName, ErrInvalidSchema (the message names the
// problem; also an MCP OutputSchema that does not compile),
// ErrInvalidArgument (no Func, bad limits, MCP metadata capstan refuses,
// naming the field).
func (r *Registry) Register(t Tool, opts ...RegisterOption) error {
	if t.err != nil {
		return t.err
	}
	bad := func(st Status, msg string) error { return &Error{Op: "Register", Status: st, Message: msg} }
	switch {
	case t.Func == nil:
		return bad(ErrInvalidArgument, "tool "+t.Name+" has no Func")
	case strings.IndexByte(t.Name, 0) >= 0:
		return bad(ErrInvalidName, "a tool name must not contain NUL")
	case strings.IndexByte(t.Description, 0) >= 0 || strings.IndexByte(string(t.Schema), 0) >= 0:
		return bad(ErrInvalidArgument, "description and schema must not contain NUL")
	case t.Timeout < 0 || t.MaxOutputChars < 0 || int64(t.MaxOutputChars) > math.MaxUint32:
		return bad(ErrInvalidArgument, "timeout and max output must be >= 0")
	}
	var flags C.uint32_t
	if t.RequiresApproval {
		flags |= C.CAPSTAN_TOOL_REQUIRES_APPROVAL
	}
	if t.Serial {
		flags |= C.CAPSTAN_TOOL_SERIAL
	}
	if t.MainThread {
		flags |= C.CAPSTAN_TOOL_MAIN_THREAD
	}
	if t.WaitForResponse {
		flags |= C.CAPSTAN_TOOL_WAIT_FOR_RESPONSE
	}
	if t.Deferred {
		flags |= C.CAPSTAN_TOOL_DEFERRED
	}
	if t.Idempotent {
		flags |= C.CAPSTAN_TOOL_IDEMPOTENT
	}
	if t.hostRun() {
		flags |= C.CAPSTAN_TOOL_HOST_RUN
	}
	for _, opt := range opts {
		opt(&flags)
	}
	name, desc := C.CString(t.Name), C.CString(t.Description)
	defer C.free(unsafe.Pointer(name))
	defer C.free(unsafe.Pointer(desc))
	var params *C.char
	if len(t.Schema) > 0 {
		params = C.CString(string(t.Schema))
		defer C.free(unsafe.Pointer(params))
	}
	var meta *C.char
	if t.MCP != nil {
		b, err := json.Marshal(t.MCP)
		if err != nil {
			return bad(ErrInvalidArgument, "tool "+t.Name+": its MCP metadata is not JSON: "+err.Error())
		}
		if string(b) != "{}" {
			meta = C.CString(string(b))
			defer C.free(unsafe.Pointer(meta))
		}
	}
	if err := r.enter("Register"); err != nil {
		return err
	}
	defer r.leave()
	// Released by the tool's destroy: when it is replaced or removed and its
	// last call is done, at Close, or before cg_register returns on failure.
	e := &toolEntry{tool: t, reg: r}
	h := cgo.NewHandle(e)
	var msg *C.char
	st := C.cg_register(r.ptr, name, desc, params, C.uintptr_t(h), millis(t.Timeout),
		C.uint32_t(t.MaxOutputChars), flags, meta, &msg)
	if st != C.CAPSTAN_OK {
		return newError("Register", st, msg)
	}
	r.tools.Store(t.Name, e)
	return nil
}

// Unregister removes a tool; its calls in flight finish. ErrNotFound if
// there is no such tool.
func (r *Registry) Unregister(name string) error {
	if err := r.enter("Unregister"); err != nil {
		return err
	}
	defer r.leave()
	err := check("Unregister", func() C.capstan_status {
		return C.capstan_registry_remove_tool(r.ptr, stringPtr(name), C.size_t(len(name)))
	})
	if err == nil {
		r.tools.Delete(name)
	}
	return err
}

// Pump runs queued calls of MainThread tools on the calling goroutine for
// about budget (at least one call if any is queued) and returns how many
// ran. Call it from the goroutine that must run them, e.g. the main
// goroutine after runtime.LockOSThread.
func (r *Registry) Pump(budget time.Duration) int {
	if r.enter("Pump") != nil {
		return 0
	}
	defer r.leave()
	return int(C.cg_pump(r.ptr, millis(budget)))
}

// ToolStats are one tool's counters.
type ToolStats struct {
	Calls    uint64            `json:"calls"`
	Outcomes map[string]uint64 `json:"outcomes"` // by Outcome.String()
	InFlight int64             `json:"in_flight"`
	// Latency percentiles (bucket bounds, within 25%); 0 before any call ran.
	P50 time.Duration `json:"-"`
	P99 time.Duration `json:"-"`
}

// Stats are the registry's per-tool statistics.
type Stats struct {
	Tools map[string]ToolStats
}

// Stats returns per-tool counts per outcome, latency percentiles and calls
// in flight.
func (r *Registry) Stats() (Stats, error) {
	raw, err := r.out("Stats", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_registry_stats_json(r.ptr, out, n)
	})
	if err != nil {
		return Stats{}, err
	}
	var w struct {
		Tools map[string]struct {
			ToolStats
			P50 *int64 `json:"p50_us"`
			P99 *int64 `json:"p99_us"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return Stats{}, &Error{Op: "Stats", Status: ErrInternal, Message: err.Error()}
	}
	s := Stats{Tools: make(map[string]ToolStats, len(w.Tools))}
	for name, t := range w.Tools {
		ts := t.ToolStats
		if t.P50 != nil {
			ts.P50 = time.Duration(*t.P50) * time.Microsecond
		}
		if t.P99 != nil {
			ts.P99 = time.Duration(*t.P99) * time.Microsecond
		}
		s.Tools[name] = ts
	}
	return s, nil
}

// out runs a C function that returns text through (char **out, size_t *len)
// with the registry entered, and copies the text into Go memory.
func (r *Registry) out(op string, f func(out **C.char, n *C.size_t) C.capstan_status) ([]byte, error) {
	if err := r.enter(op); err != nil {
		return nil, err
	}
	defer r.leave()
	return takeText(op, f)
}

func takeText(op string, f func(out **C.char, n *C.size_t) C.capstan_status) ([]byte, error) {
	var p *C.char
	var n C.size_t
	if err := check(op, func() C.capstan_status { return f(&p, &n) }); err != nil {
		return nil, err
	}
	defer C.capstan_string_free(p)
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// Version is the library's version, e.g. "0.4.0".
func Version() string { return C.GoString(C.capstan_version_string()) }
