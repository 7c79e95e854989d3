package capstan

// Progress reports, MCP tool metadata and the process-wide runtime (what
// capstan 0.4 added beside release04.go).

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"math"
	"time"
	"unsafe"
)

// ReportProgress reports the progress of the call ctx belongs to (a tool's
// ctx): progress so far, out of total (0 = unknown), with message ("" =
// none). It reaches the registry's event hook as an EventProgress, on this
// goroutine before it returns, and, for a call from an MCP client that
// asked for progress, that client as notifications/progress. Any goroutine,
// any number of times while the call runs. progress must be finite, not
// negative and above the call's previous report (MCP's rule), total finite
// and not negative, message at most 4096 bytes: else ErrInvalidArgument and
// nothing is reported; ErrInvalidUTF8 for a message that is not UTF-8.
// Once the call has its result: ErrAlreadyCompleted (it timed out or was
// cancelled) or ErrStaleHandle (the tool returned). ErrInvalidArgument for
// a ctx that is not a tool's.
func ReportProgress(ctx context.Context, progress, total float64, message string) error {
	ci, ok := CallInfoFrom(ctx)
	if !ok || ci.call == 0 {
		return &Error{Op: "ReportProgress", Status: ErrInvalidArgument, Message: "ctx is not the context of a tool call"}
	}
	var msg *C.char
	if message != "" {
		msg = stringPtr(message)
	}
	var errText *C.char
	st := C.cg_call_progress(C.uintptr_t(ci.call), C.double(progress), C.double(total), msg, C.size_t(len(message)), &errText)
	if st != C.CAPSTAN_OK {
		return newError("ReportProgress", st, errText)
	}
	return nil
}

// MCPMeta is a tool's metadata for MCP clients (the MCP Tool fields besides
// name, description and inputSchema), checked by capstan when the tool is
// registered.
type MCPMeta struct {
	// Title is the name clients show to people.
	Title       string           `json:"title,omitempty"`
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// OutputSchema is the JSON Schema ("type": "object") of the tool's
	// structured content (Parts with a Structured object, or a JSON object
	// result); a result that fails it becomes a tool error.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Icons: at most 16.
	Icons []Icon `json:"icons,omitempty"`
}

// ToolAnnotations are hints for clients and approvers; capstan enforces
// none of them. A nil hint is left out (MCP's default applies: not
// read-only, destructive, not idempotent, open world).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Icon is an MCP icon: an https or data: URL, with its MIME type, sizes
// ("48x48", "any") and theme ("light" or "dark"), each optional but Src.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Hint returns a pointer to b, for the *bool fields of ToolAnnotations.
func Hint(b bool) *bool { return &b }

// RuntimeOptions say how capstan runs its own threads, process-wide. Zero
// values mean capstan's defaults.
type RuntimeOptions struct {
	// Threads caps the pool threads that run tool and result callbacks
	// (0 = 256). Tools of a batch bigger than its limit, or Sequential, run
	// on them; smaller batches run on goroutines.
	Threads int
	// KeepAlive is how long an idle pool thread waits for work before it
	// ends (0 = 10 s; rounded up to milliseconds).
	KeepAlive time.Duration
}

// ConfigureRuntime sets how capstan runs its own threads, process-wide, at
// any time (also after threads started): lowering Threads lets the threads
// over it end once their current callback returns. RuntimeOptions{}
// restores the defaults. ErrInvalidArgument for negative values.
func ConfigureRuntime(opts RuntimeOptions) error {
	if opts.Threads < 0 || int64(opts.Threads) > math.MaxUint32 || opts.KeepAlive < 0 {
		return &Error{Op: "ConfigureRuntime", Status: ErrInvalidArgument, Message: "threads and keep-alive must be >= 0"}
	}
	var o C.capstan_runtime_options
	o.struct_size = C.uint32_t(unsafe.Sizeof(o))
	o.threads = C.uint32_t(opts.Threads)
	o.keep_alive_ms = millis(opts.KeepAlive)
	return check("ConfigureRuntime", func() C.capstan_status { return C.capstan_runtime_configure(&o) })
}

// ShutdownRuntime stops every thread capstan started and joins it,
// process-wide: the pool threads (they first finish the work queued and
// running), the timer thread, the MCP client's connection threads. It
// waits for what still runs until ctx's deadline (none: no limit) and
// cancels nothing itself. nil when no capstan thread is left; an error
// wrapping ErrTimeout otherwise, naming what still runs (a tool in a
// callback, a call with a timeout still running, a Mount not closed, an
// MCPServer not stopped). capstan keeps working afterwards: the next call
// that needs a thread starts it again, and ConfigureRuntime's options stay.
// Never call it from inside a tool, hook or approver (it would wait for
// itself).
func ShutdownRuntime(ctx context.Context) error {
	timeout := C.uint32_t(math.MaxUint32)
	if d, ok := ctx.Deadline(); ok {
		timeout = millis(max(time.Until(d), time.Millisecond))
	}
	return check("ShutdownRuntime", func() C.capstan_status { return C.capstan_runtime_shutdown(timeout) })
}
