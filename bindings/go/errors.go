package capstan

// #include "capstan_go.h"
import "C"

import (
	"encoding/json"
	"runtime"
	"strings"
	"time"
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
	ErrProviderError    Status = C.CAPSTAN_ERR_PROVIDER_ERROR
	ErrStreamTruncated  Status = C.CAPSTAN_ERR_STREAM_TRUNCATED
	ErrStreamTooLarge   Status = C.CAPSTAN_ERR_STREAM_TOO_LARGE
	ErrUnsupported      Status = C.CAPSTAN_ERR_UNSUPPORTED
	ErrTransport        Status = C.CAPSTAN_ERR_TRANSPORT
	ErrMCPConnect       Status = C.CAPSTAN_ERR_MCP_CONNECT
)

// Error returns the status's constant name, e.g. "CAPSTAN_ERR_INVALID_SCHEMA".
func (s Status) Error() string { return C.GoString(C.capstan_status_name(C.capstan_status(s))) }

// Error is a failed capstan call: the status and capstan's message for it,
// plus what capstan_error_json adds. errors.Is(err, capstan.ErrX) matches on
// the status; errors.As(err, &e) with e *capstan.Error reads the fields:
//
//	var e *capstan.Error
//	if errors.As(err, &e) && e.Provider != nil && e.Provider.Kind == "rate_limit_error" {
//		time.Sleep(e.Provider.RetryAfter)
//	}
type Error struct {
	Op      string // the binding function that failed, e.g. "Register"
	Status  Status
	Message string // capstan's message (capstan_error_message), may be empty
	// Provider is what a provider's error body said (Status ErrProviderError
	// only, else nil).
	Provider *ProviderError
	// SchemaPointer is the JSON Pointer of the offending place in a tool's
	// schema ("" for its root) when HasSchemaPointer (Status ErrInvalidSchema).
	SchemaPointer    string
	HasSchemaPointer bool
}

// ProviderError is what a provider's error body said, as capstan read it.
// Fields the provider did not send are zero.
type ProviderError struct {
	Kind       string        // the kind the message shows, e.g. "rate_limit_error"
	Message    string        // the provider's own message
	Type       string        // its error type or status name
	Code       string        // its error code, as text
	HTTPStatus int           // an HTTP status the body carries (0: none)
	RetryAfter time.Duration // a retry delay the body carries (0: none)
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "capstan: " + e.Op + ": " + e.Status.Error()
	}
	return "capstan: " + e.Op + ": " + e.Message + " (" + e.Status.Error() + ")"
}

// Unwrap returns the Status, which is what errors.Is compares.
func (e *Error) Unwrap() error { return e.Status }

// errorJSON is capstan_error_json's document.
type errorJSON struct {
	Message  *string `json:"message"`
	Provider *struct {
		Kind         string  `json:"kind"`
		Message      string  `json:"message"`
		Type         *string `json:"type"`
		Code         *string `json:"code"`
		HTTPStatus   *int    `json:"http_status"`
		RetryAfterMs *int64  `json:"retry_after_ms"`
	} `json:"provider"`
	Pointer *string `json:"pointer"`
}

// newError builds an Error from a status and what cg_last_error returned
// (capstan_error_json's document, or a plain message; freed here; may be NULL).
func newError(op string, st C.capstan_status, msg *C.char) error {
	e := &Error{Op: op, Status: Status(st)}
	if msg == nil {
		return e
	}
	text := C.GoString(msg)
	C.free(unsafe.Pointer(msg))
	var doc errorJSON
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &doc) != nil || doc.Message == nil {
		e.Message = text
		return e
	}
	e.Message = *doc.Message
	if p := doc.Provider; p != nil {
		pe := &ProviderError{Kind: p.Kind, Message: p.Message}
		if p.Type != nil {
			pe.Type = *p.Type
		}
		if p.Code != nil {
			pe.Code = *p.Code
		}
		if p.HTTPStatus != nil {
			pe.HTTPStatus = *p.HTTPStatus
		}
		if p.RetryAfterMs != nil {
			pe.RetryAfter = time.Duration(*p.RetryAfterMs) * time.Millisecond
		}
		e.Provider = pe
	}
	if doc.Pointer != nil {
		e.SchemaPointer, e.HasSchemaPointer = *doc.Pointer, true
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
