package capstan

// Every capstan_registry_set_* call of the binding is in this file.
//
// LIMITATION (until the setters take a destroy): capstan cannot tell when a
// replaced hook has run for the last time, so its cgo.Handle is released on
// replacement and at Close. A replaced hook that is still running somewhere
// then resolves its handle to nothing and does nothing (an approval is
// denied). Once the setters gain a trailing `capstan_destroy_fn destroy`
// (called once after the hook's last invocation):
//   1. pass `h ? cg_hook_destroy : NULL` as the new last argument in the
//      three helpers below (cg_hook_destroy, in capstan_go.c, releases h);
//   2. in hookHandles.swap, stop deleting the old handle (its destroy does),
//      and on a failed set delete the new one only if destroy does not run
//      for a failed set;
//   3. drop hookHandles.releaseAll from Registry.free (free runs destroy).
// TestHooksAreReleasedWhenReplacedOrClosed pins the result either way.

/*
#include "capstan_go.h"

static capstan_status cg_set_event_hook(capstan_registry *reg, uintptr_t h) {
    return capstan_registry_set_event_hook(reg, h ? cg_event_cb : NULL, (void *)h);
}
static capstan_status cg_set_notify(capstan_registry *reg, uintptr_t h) {
    return capstan_registry_set_notify(reg, h ? cg_notify_cb : NULL, (void *)h);
}
static capstan_status cg_set_approver(capstan_registry *reg, uintptr_t h) {
    return capstan_registry_set_approver(reg, h ? cg_approver_cb : NULL, (void *)h);
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/cgo"
	"sync"
	"time"
)

type hookHandles struct {
	mu                      sync.Mutex
	event, notify, approver cgo.Handle
}

// swap installs a new hook handle (0: none) with set and releases the old one.
func (hh *hookHandles) swap(r *Registry, op string, slot *cgo.Handle, fn any,
	set func(*C.capstan_registry, C.uintptr_t) C.capstan_status) error {
	if err := r.enter(op); err != nil {
		return err
	}
	defer r.leave()
	var h cgo.Handle
	if fn != nil {
		h = cgo.NewHandle(fn)
	}
	hh.mu.Lock()
	defer hh.mu.Unlock()
	if err := check(op, func() C.capstan_status { return set(r.ptr, C.uintptr_t(h)) }); err != nil {
		if h != 0 {
			h.Delete()
		}
		return err
	}
	old := *slot
	*slot = h
	if old != 0 {
		old.Delete() // see LIMITATION above
	}
	return nil
}

func (hh *hookHandles) releaseAll() {
	hh.mu.Lock()
	defer hh.mu.Unlock()
	for _, h := range []*cgo.Handle{&hh.event, &hh.notify, &hh.approver} {
		if *h != 0 {
			h.Delete()
			*h = 0
		}
	}
}

// EventKind says what an Event reports.
type EventKind uint32

// Event kinds.
const (
	EventStarted   EventKind = C.CAPSTAN_EVENT_STARTED   // a tool is about to run
	EventFinished  EventKind = C.CAPSTAN_EVENT_FINISHED  // a call has its result
	EventTimedOut  EventKind = C.CAPSTAN_EVENT_TIMED_OUT // a call ran past its deadline
	EventCancelled EventKind = C.CAPSTAN_EVENT_CANCELLED // a call ended cancelled
)

// Event is something that happened to a call.
type Event struct {
	Kind     EventKind
	Tool, ID string
	Index    int           // position of the call in its batch
	Outcome  Outcome       // for EventFinished
	Duration time.Duration // for EventFinished and EventTimedOut
}

// SetEventHook sets (nil: removes) the function that observes every call
// starting, finishing, timing out or being cancelled. It runs on the thread
// where the event happens, possibly on several at once: it must be quick and
// must not block. A panic in it is swallowed.
func (r *Registry) SetEventHook(hook func(Event)) error {
	var fn any
	if hook != nil {
		fn = hook
	}
	return r.hooks.swap(r, "SetEventHook", &r.hooks.event, fn,
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
	return r.hooks.swap(r, "SetNotify", &r.hooks.notify, fn,
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
	return r.hooks.swap(r, "SetApprover", &r.hooks.approver, fn,
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
