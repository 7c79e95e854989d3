package capstan

// #include "capstan_go.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Status is a capstan status code (capstan_status). A Status is itself an
// error, so that the exported Err* values work with errors.Is:
//
//	if errors.Is(err, capstan.ErrInvalidSchema) { ... }
type Status int32

// Statuses of include/capstan.h.
const (
	StatusOK            Status = C.CAPSTAN_OK
	ErrNullParameter    Status = C.CAPSTAN_ERR_NULL_PARAMETER
	ErrInvalidArgument  Status = C.CAPSTAN_ERR_INVALID_ARGUMENT
	ErrInvalidUTF8      Status = C.CAPSTAN_ERR_INVALID_UTF8
	ErrInvalidName      Status = C.CAPSTAN_ERR_INVALID_NAME
	ErrInvalidSchema    Status = C.CAPSTAN_ERR_INVALID_SCHEMA
	ErrInvalidCalls     Status = C.CAPSTAN_ERR_INVALID_CALLS
	ErrInvalidResults   Status = C.CAPSTAN_ERR_INVALID_RESULTS
	ErrInvalidResponse  Status = C.CAPSTAN_ERR_INVALID_RESPONSE
	ErrInvalidContent   Status = C.CAPSTAN_ERR_INVALID_CONTENT
	ErrNotFound         Status = C.CAPSTAN_ERR_NOT_FOUND
	ErrAlreadyCompleted Status = C.CAPSTAN_ERR_ALREADY_COMPLETED
	ErrStaleHandle      Status = C.CAPSTAN_ERR_STALE_HANDLE
	ErrTimeout          Status = C.CAPSTAN_ERR_TIMEOUT
	ErrShuttingDown     Status = C.CAPSTAN_ERR_SHUTTING_DOWN
	ErrWrongContext     Status = C.CAPSTAN_ERR_WRONG_CONTEXT
	ErrPanic            Status = C.CAPSTAN_ERR_PANIC
	ErrInternal         Status = C.CAPSTAN_ERR_INTERNAL
)

// Error returns the status's constant name, e.g. "CAPSTAN_ERR_INVALID_SCHEMA".
func (s Status) Error() string { return C.GoString(C.capstan_status_name(C.capstan_status(s))) }

// Error is a failed capstan call: the status and capstan's message for it.
// errors.Is(err, capstan.ErrX) matches on the status.
type Error struct {
	Op      string // the binding function that failed, e.g. "Register"
	Status  Status
	Message string // capstan's message (capstan_error_message), may be empty
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "capstan: " + e.Op + ": " + e.Status.Error()
	}
	return "capstan: " + e.Op + ": " + e.Message + " (" + e.Status.Error() + ")"
}

// Unwrap returns the Status, which is what errors.Is compares.
func (e *Error) Unwrap() error { return e.Status }

// newError builds an Error from a status and a message malloc'd by
// cg_last_error (freed here; may be NULL).
func newError(op string, st C.capstan_status, msg *C.char) error {
	e := &Error{Op: op, Status: Status(st)}
	if msg != nil {
		e.Message = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return e
}

// check runs one C call and, if it fails, reads its message on the same OS
// thread: capstan keeps the last error per thread, and a goroutine may move
// to another thread between two cgo calls unless it is locked.
func check(op string, f func() C.capstan_status) error {
	runtime.LockOSThread()
	st := f()
	var msg *C.char
	if st != C.CAPSTAN_OK {
		msg = C.cg_last_error()
	}
	runtime.UnlockOSThread()
	if st == C.CAPSTAN_OK {
		return nil
	}
	return newError(op, st, msg)
}
