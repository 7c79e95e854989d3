package capstan

// The Go ends of the C trampolines in capstan_go.c. capstan calls them on its pool
// threads, on a goroutine's thread inside a cgo call, or on a thread that
// completes a call: they must never panic (a panic in a cgo callback ends the
// process), so each resolves its cgo.Handle without trusting it.

// #include "capstan_go.h"
import "C"

import (
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// value resolves a handle; nil if it was already released.
func value(h C.uintptr_t) (v any) {
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	return cgo.Handle(h).Value()
}

//export goToolCall
func goToolCall(tool C.uintptr_t, call C.uintptr_t, runHere C.int, args *C.char, argsLen C.size_t, id *C.char, idLen C.size_t, answer *C.cg_answer) {
	if args == nil {
		return // timed out or cancelled already: capstan has its result
	}
	e, _ := value(tool).(*toolEntry)
	if e == nil {
		msg := "the tool is gone"
		C.cg_call_fail(call, stringPtr(msg), C.size_t(len(msg)))
		return
	}
	// Copied here: they are only valid until the call completes, which a
	// timeout may do at any moment after.
	e.start(uintptr(call), int(runHere), C.GoBytes(unsafe.Pointer(args), C.int(argsLen)), C.GoStringN(id, C.int(idLen)), answer)
}

//export goReleaseHandle
func goReleaseHandle(h C.uintptr_t) {
	defer func() { _ = recover() }() // released twice would be a capstan bug; never crash for it
	if h != 0 {
		cgo.Handle(h).Delete()
	}
}

//export goBatchResult
func goBatchResult(h C.uintptr_t, r *C.capstan_result) {
	if b, _ := value(h).(*Batch); b != nil {
		b.onResult(cgo.Handle(h), r)
	}
}

// --- cancellation -------------------------------------------------------------
//
// A tool's ctx is cancelled when capstan_call_cancelled turns true for its
// call. One goroutine polls every running call while there are any, all in
// one cgo call, every 2 ms plus 1 us per running call (so 10,000 running
// calls cost about 0.3 ms of polling per 12 ms); Batch.Cancel and
// Registry.Close poll at once.

var watched struct {
	sync.Mutex
	calls   map[uintptr]func()
	polling bool
}

var sweepKick = make(chan struct{}, 1)

func watch(call uintptr, cancel func()) {
	watched.Lock()
	if watched.calls == nil {
		watched.calls = make(map[uintptr]func())
	}
	watched.calls[call] = cancel
	if !watched.polling {
		watched.polling = true
		go poll()
	}
	watched.Unlock()
}

func unwatch(call uintptr) {
	watched.Lock()
	delete(watched.calls, call)
	watched.Unlock()
}

func kickSweep() {
	select {
	case sweepKick <- struct{}{}:
	default:
	}
}

func poll() {
	var handles []C.uintptr_t
	var flags []uint8
	timer := time.NewTimer(2 * time.Millisecond)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
		case <-sweepKick:
		}
		watched.Lock()
		if len(watched.calls) == 0 {
			watched.polling = false
			watched.Unlock()
			return
		}
		handles = handles[:0]
		for h := range watched.calls {
			handles = append(handles, C.uintptr_t(h))
		}
		watched.Unlock()
		if cap(flags) < len(handles) {
			flags = make([]uint8, len(handles))
		}
		flags = flags[:len(handles)]
		C.cg_cancelled_many(&handles[0], C.size_t(len(handles)), (*C.uint8_t)(&flags[0]))
		for i, h := range handles {
			if flags[i] != 0 {
				watched.Lock()
				cancel := watched.calls[uintptr(h)]
				delete(watched.calls, uintptr(h))
				watched.Unlock()
				if cancel != nil {
					cancel()
				}
			}
		}
		timer.Reset(2*time.Millisecond + time.Duration(len(handles))*time.Microsecond)
	}
}

// --- running a lone call on the caller's goroutine ------------------------------
//
// Execute of one call without a timeout runs the tool inside its own cgo call
// (no goroutine hand-off). That pins an OS thread for the tool's duration, so
// at most runHereMax callers do it at once; the others use goroutines (10,000
// goroutines each running a sleeping tool inline would need 10,000 threads,
// past Go's limit).

const runHereMax = 64

// runHereCount counts the lone calls running on their caller's thread (an
// atomic add each way, cheaper than a channel's lock).
var runHereCount atomic.Int32

func acquireRunHere() bool {
	if runHereCount.Add(1) > runHereMax {
		runHereCount.Add(-1)
		return false
	}
	return true
}

func releaseRunHere() { runHereCount.Add(-1) }
