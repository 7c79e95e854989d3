package capstan

// Every capstan_registry_set_* call of the binding is in this file.
//
// A hook's cgo.Handle belongs to capstan once set: capstan calls
// cg_hook_destroy (which releases it) exactly once, after the hook's last
// invocation has returned (on replacement, removal, Close), or before the
// setter returns when the setter fails.

/*
#include "capstan_go.h"

static capstan_status cg_set_event_hook(capstan_registry *reg, uintptr_t h) {
    return capstan_registry_set_event_hook(reg, h ? cg_event_cb : NULL, (void *)h, h ? cg_hook_destroy : NULL);
}
static capstan_status cg_set_notify(capstan_registry *reg, uintptr_t h) {
    return capstan_registry_set_notify(reg, h ? cg_notify_cb : NULL, (void *)h, h ? cg_hook_destroy : NULL);
}
static capstan_status cg_set_approver(capstan_registry *reg, uintptr_t h) {
    return capstan_registry_set_approver(reg, h ? cg_approver_cb : NULL, (void *)h, h ? cg_hook_destroy : NULL);
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/cgo"
	"time"
)

// setHook installs fn (nil: none) with set. The handle made for fn is
// capstan's from then on: its destroy releases it, also when set fails.
func (r *Registry) setHook(op string, fn any, set func(*C.capstan_registry, C.uintptr_t) C.capstan_status) error {
	if err := r.enter(op); err != nil {
		return err
	}
	defer r.leave()
	var h cgo.Handle
	if fn != nil {
		h = cgo.NewHandle(fn)
	}
	return check(op, func() C.capstan_status { return set(r.ptr, C.uintptr_t(h)) })
}

// EventKind says what an Event reports.
type EventKind uint32

// Event kinds.
const (
	EventStarted   EventKind = C.CAPSTAN_EVENT_STARTED   // a tool is about to run
	EventFinished  EventKind = C.CAPSTAN_EVENT_FINISHED  // a call has its result
	EventTimedOut  EventKind = C.CAPSTAN_EVENT_TIMED_OUT // a call ran past its deadline
	EventCancelled EventKind = C.CAPSTAN_EVENT_CANCELLED // a call ended cancelled
	EventProgress  EventKind = C.CAPSTAN_EVENT_PROGRESS  // a running call reported progress (ReportProgress)
	EventLog       EventKind = C.CAPSTAN_EVENT_LOG       // a running call sent a log message (Log)
	EventReplayed  EventKind = C.CAPSTAN_EVENT_REPLAYED  // a call was answered from the journal (SetJournal); EventFinished follows
)

// Event is something that happened to a call.
type Event struct {
	Kind     EventKind
	Tool, ID string
	Index    int           // position of the call in its batch
	Outcome  Outcome       // for EventFinished
	Duration time.Duration // for EventFinished and EventTimedOut; for EventProgress and EventLog, since the tool started
	// For EventProgress: the value reported, the total (0 when unknown) and
	// the message ("" when none). For EventLog: the message.
	Progress, Total float64
	Message         string
	Level           LogLevel // for EventLog
}

// SetEventHook sets (nil: removes) the function that observes every call
// starting, finishing, timing out or being cancelled, the progress tools
// report (ReportProgress; also a mounted MCP server's progress for a call)
// and the log messages they send (Log). It runs on the thread
// where the event happens, possibly on several at once: it must be quick and
// must not block. A panic in it is swallowed.
func (r *Registry) SetEventHook(hook func(Event)) error {
	var fn any
	if hook != nil {
		fn = hook
	}
	return r.setHook("SetEventHook", fn,
		func(p *C.capstan_registry, h C.uintptr_t) C.capstan_status { return C.cg_set_event_hook(p, h) })
}

// SetNotify sets (nil: removes) a wake-up function for an event loop: it is
// called on any thread when a MainThread call waits for Pump. It must be
// quick and must not call into the registry (e.g. a non-blocking channel send).
func (r *Registry) SetNotify(notify func()) error {
	var fn any
	if notify != nil {
		fn = notify
	}
	return r.setHook("SetNotify", fn,
		func(p *C.capstan_registry, h C.uintptr_t) C.capstan_status { return C.cg_set_notify(p, h) })
}

// Approval is a call of a RequiresApproval tool waiting for a decision.
type Approval struct {
	Tool, ID  string
	Arguments json.RawMessage // validated
}

// Decision answers an Approval.
type Decision struct {
	Approve bool
	Reason  string // for a denial: what the model reads
}

// Approve lets the call run.
func Approve() Decision { return Decision{Approve: true} }

// Deny refuses the call; the model reads reason.
func Deny(reason string) Decision { return Decision{Reason: reason} }

// SetApprover sets (nil: removes) the function that decides calls of
// RequiresApproval tools not listed with WithApproved. It runs on its own
// goroutine and may take its time (ask a user); ctx ends when the registry
// closes. A panic denies the call. Without an approver such calls end
// OutcomeDenied.
func (r *Registry) SetApprover(approver func(ctx context.Context, a Approval) Decision) error {
	var fn any
	if approver != nil {
		fn = &approverFn{f: approver, ctx: r.ctx}
	}
	return r.setHook("SetApprover", fn,
		func(p *C.capstan_registry, h C.uintptr_t) C.capstan_status { return C.cg_set_approver(p, h) })
}

type approverFn struct {
	f   func(context.Context, Approval) Decision
	ctx context.Context
}

//export goEvent
func goEvent(h C.uintptr_t, e *C.capstan_event) {
	hook, _ := value(h).(func(Event))
	if hook == nil || e == nil {
		return
	}
	ev := Event{
		Kind:     EventKind(e.kind),
		Tool:     C.GoStringN(e.tool, C.int(e.tool_len)),
		ID:       C.GoStringN(e.id, C.int(e.id_len)),
		Index:    int(e.index),
		Outcome:  Outcome(e.outcome),
		Duration: time.Duration(e.duration_us) * time.Microsecond,
	}
	if ev.Kind == EventProgress {
		ev.Progress, ev.Total = float64(e.progress), float64(e.total)
		if e.message != nil {
			ev.Message = C.GoStringN(e.message, C.int(e.message_len))
		}
	}
	if ev.Kind == EventLog {
		ev.Level = LogLevel(e.level)
		if e.message != nil {
			ev.Message = C.GoStringN(e.message, C.int(e.message_len))
		}
	}
	defer func() { _ = recover() }()
	hook(ev)
}

//export goNotify
func goNotify(h C.uintptr_t) {
	if notify, _ := value(h).(func()); notify != nil {
		defer func() { _ = recover() }()
		notify()
	}
}

//export goApprove
func goApprove(h C.uintptr_t, a C.uintptr_t) {
	ap, _ := value(h).(*approverFn)
	if ap == nil {
		decide(a, Deny("no approver"))
		return
	}
	var n C.size_t
	approval := Approval{}
	if p := C.cg_approval_tool(a, &n); p != nil {
		approval.Tool = C.GoStringN(p, C.int(n))
	}
	if p := C.cg_approval_id(a, &n); p != nil {
		approval.ID = C.GoStringN(p, C.int(n))
	}
	if p := C.cg_approval_arguments(a, &n); p != nil {
		approval.Arguments = json.RawMessage(C.GoStringN(p, C.int(n)))
	}
	go func() {
		d := func() (d Decision) {
			defer func() {
				if p := recover(); p != nil {
					d = Deny(fmt.Sprintf("the approver panicked: %v", p))
				}
			}()
			return ap.f(ap.ctx, approval)
		}()
		decide(a, d)
	}()
}

func decide(a C.uintptr_t, d Decision) {
	C.cg_approval_decide(a, C.bool(d.Approve), stringPtr(d.Reason), C.size_t(len(d.Reason)))
}
