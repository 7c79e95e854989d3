package capstan

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/invopop/jsonschema"
)

// Tool is a Go function the model may call.
type Tool struct {
	Name        string          // ^[A-Za-z0-9_-]{1,64}$
	Description string          // what the tool does, for the model
	Schema      json.RawMessage // JSON Schema of the arguments (object root); nil: any object
	// Func runs the call. args are the validated arguments (schema defaults
	// filled in). ctx is cancelled when capstan cancels the call (its batch
	// was cancelled, it timed out, the registry closed). Returning an error
	// gives a tool error whose message the model reads; returning a string
	// gives that text; json.RawMessage is sent as is; Parts (or []Part) and
	// Content are content parts (images, audio, files); anything else is
	// encoded with encoding/json. A panic becomes a tool error.
	Func             func(ctx context.Context, args json.RawMessage) (any, error)
	Timeout          time.Duration // per call; 0 = none
	MaxOutputChars   int           // cap on the result text; 0 = none
	RequiresApproval bool          // never runs without the approver's yes (SetApprover)
	Serial           bool          // never runs concurrently with itself
	MainThread       bool          // runs only inside Registry.Pump, on the pumping goroutine
	// WaitForResponse: a stream never starts this tool's calls before the
	// whole response arrived, even with EarlyDispatch (for side effects).
	WaitForResponse bool
	// Deferred leaves the tool out of Tools and ExportTools in the provider
	// formats until the search tool (AddSearchTool) has found it; it can be
	// called at any time.
	Deferred bool
	// Idempotent: safe to run twice. With a journal (Registry.SetJournal),
	// a call of it that started in an earlier process and never completed
	// runs again; without it such a call fails "Outcome unknown: ...".
	Idempotent bool
	// MCP is what MCP clients see beside the name, description and schema
	// (capstan_tool_def.mcp_meta): a title, annotations, an output schema,
	// icons. capstan's MCP server sends it in tools/list, and Tools gives it
	// in FormatMCP (and as "mcp" in FormatDescribe). With an OutputSchema,
	// a successful result whose structured content fails it becomes a tool
	// error listing the failing JSON Pointers. nil = none.
	MCP *MCPMeta
	// Quick lets Execute run the tool's calls on goroutines of its own,
	// without a capstan call handle (CAPSTAN_TOOL_HOST_RUN): one cgo
	// crossing hands out a batch's checked calls, one takes every answer
	// back, instead of a callback and a completion per call. The tool's
	// ctx still ends when Execute's ctx does or at Close, but
	// ReportProgress, Log, InputFrom and InputRequired have no call to act
	// on (ReportProgress and Log return ErrInvalidArgument). Ignored for a
	// tool with a Timeout (capstan's timer needs the handle), MainThread or
	// RequiresApproval. See
	// docs/go.md, "Quick tools".
	Quick bool

	err error // from Func[In, Out]: reported by Register
}

// Func makes a typed tool: the schema is derived from In (a struct; see
// SchemaFor) and the validated arguments are decoded into In.
func Func[In, Out any](name, description string, f func(ctx context.Context, in In) (Out, error)) Tool {
	schema, err := SchemaFor[In]()
	return Tool{
		Name:        name,
		Description: description,
		Schema:      schema,
		err:         err,
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			var in In
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, fmt.Errorf("arguments do not fit %T: %v", in, err)
			}
			return f(ctx, in)
		},
	}
}

// SchemaFor derives the JSON Schema of a struct type's JSON form with
// github.com/invopop/jsonschema: properties from `json` tags, constraints
// from `jsonschema` tags (description=..., enum=..., minimum=...), required
// = the fields without omitempty, additionalProperties false, nested
// structs inline (no $ref/$defs: models and providers handle those worst).
func SchemaFor[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, &Error{Op: "SchemaFor", Status: ErrInvalidSchema,
			Message: fmt.Sprintf("tool arguments must be a struct, not %s", t)}
	}
	if where, kind := noJSONForm(t, t.Name(), map[reflect.Type]bool{}); where != "" {
		return nil, &Error{Op: "SchemaFor", Status: ErrInvalidSchema,
			Message: fmt.Sprintf("%s is a %s, which has no JSON form: tag it `json:\"-\"` or leave it out of the arguments struct", where, kind)}
	}
	return reflectSchema(t)
}

// reflectSchema runs the reflector, turning a panic inside it (a type it
// cannot describe) into an error naming the type.
func reflectSchema(t reflect.Type) (b json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, &Error{Op: "SchemaFor", Status: ErrInvalidSchema,
				Message: fmt.Sprintf("no JSON Schema can be derived from %s: %v", t, p)}
		}
	}()
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version = ""
	b, err = json.Marshal(s)
	if err != nil {
		return nil, &Error{Op: "SchemaFor", Status: ErrInvalidSchema, Message: err.Error()}
	}
	return b, nil
}

// noJSONForm finds a field that encoding/json cannot carry (a channel, a
// func, a complex number, an unsafe pointer) among what a model's arguments
// would fill: exported fields not tagged `json:"-"`, through structs,
// pointers, slices, arrays and map values. It returns the field's path and
// kind, or "" (issue 49: the reflector panicked on a chan field).
func noJSONForm(t reflect.Type, path string, seen map[reflect.Type]bool) (string, reflect.Kind) {
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return path, t.Kind()
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return noJSONForm(t.Elem(), path+"[]", seen)
	case reflect.Map:
		return noJSONForm(t.Elem(), path+"[key]", seen)
	case reflect.Struct:
		if seen[t] {
			return "", 0
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if tag := f.Tag.Get("json"); tag == "-" {
				continue
			}
			if where, kind := noJSONForm(f.Type, path+"."+f.Name, seen); where != "" {
				return where, kind
			}
		}
	}
	return "", 0
}

type callInfoKey struct{}

// CallInfo identifies the call a tool runs for.
type CallInfo struct {
	ID   string // the model's call id
	Tool string

	call uintptr // the capstan_call handle, for ReportProgress
}

// CallInfoFrom returns the call a tool's ctx belongs to.
func CallInfoFrom(ctx context.Context) (CallInfo, bool) {
	ci, ok := ctx.Value(callInfoKey{}).(*CallInfo)
	if !ok {
		return CallInfo{}, false
	}
	return *ci, true
}

// callCtx is a tool's ctx: its parent plus its CallInfo, in one allocation
// (context.WithValue would take two).
type callCtx struct {
	context.Context
	info CallInfo
}

func (c *callCtx) Value(key any) any {
	if _, ok := key.(callInfoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// hostRun reports whether the tool's calls may be handed out: Quick, with
// no Timeout for capstan's timer to enforce through a call handle, and not
// waiting for someone else (a Pump, the approver).
func (t *Tool) hostRun() bool {
	return t.Quick && t.Timeout == 0 && !t.MainThread && !t.RequiresApproval
}

// toolEntry is what a registered tool's cgo.Handle refers to.
type toolEntry struct {
	tool Tool
	reg  *Registry
}

// start begins a call with its arguments and id (copies); it runs in the
// tool callback, on whichever thread capstan called it.
func (e *toolEntry) start(call uintptr, runHere int, args json.RawMessage, id string, answer *C.cg_answer) {
	if runHere == runOnGoroutine || runHere == runHereUntimed && e.tool.Timeout > 0 {
		// The submitting goroutine starts every call of its batch: it hands
		// each to a goroutine and goes on. (A lone call with a timeout goes
		// too: the caller must get the timeout result on time.)
		go e.run(call, id, args, true, nil)
		return
	}
	// A pool thread, which would only wait for the completion; Pump, whose
	// tools must run on its thread; or the lone call of an Execute whose ctx
	// cannot end, which nothing but Close (through the registry's ctx) can
	// cancel, so it needs no polling.
	// The tool runs inside the callback: a small result goes back in answer.
	e.run(call, id, args, runHere != runHereUntimed, answer)
}

// Where a tool callback runs (cg_run_here in capstan_go.c).
const (
	runOnPoolThread = 0
	runHereUntimed  = 1
	runHereAlways   = 2
	runOnGoroutine  = 3
)

// run calls the tool and completes the call; with answer (the callback's
// room, when run inside the callback), a small result is written there for
// the callback to complete once Go returns.
func (e *toolEntry) run(call uintptr, id string, args json.RawMessage, poll bool, answer *C.cg_answer) {
	var ctx context.Context = &callCtx{Context: e.reg.ctx, info: CallInfo{ID: id, Tool: e.tool.Name, call: call}}
	if poll {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		watch(call, cancel)
		defer cancel()
		defer unwatch(call)
		if C.cg_call_cancelled(C.uintptr_t(call)) {
			complete(call, 0, "", context.Canceled)
			return
		}
	}
	kind, text, err := invoke(ctx, e.tool.Func, args)
	if err == nil && answer != nil && len(text) <= len(answer.text) {
		// C memory: Go may write it. No C call: cg_tool_cb completes the call.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&answer.text[0])), len(text)), text)
		answer.kind, answer.len, answer.filled = C.uint32_t(kind), C.size_t(len(text)), 1
		return
	}
	complete(call, kind, text, err)
}

// invoke runs the tool and renders its result: a string is text,
// json.RawMessage is sent as is, []byte is text, Parts and Content are
// content parts, anything else is encoded as
// JSON. A panic, in the tool or in a MarshalJSON of its result, becomes an
// error: a panic must not unwind into capstan's callback.
func invoke(ctx context.Context, f func(context.Context, json.RawMessage) (any, error), args json.RawMessage) (kind C.capstan_content, text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the tool panicked: %v", p)
		}
	}()
	out, err := f(ctx, args)
	if err != nil {
		return 0, "", err
	}
	switch v := out.(type) {
	case string:
		return C.CAPSTAN_CONTENT_TEXT, v, nil
	case json.RawMessage:
		return C.CAPSTAN_CONTENT_JSON, string(v), nil
	case []byte:
		return C.CAPSTAN_CONTENT_TEXT, string(v), nil
	case []Part:
		return partsResult(Parts(v))
	case Parts, Content:
		return partsResult(v)
	}
	j, err := json.Marshal(out)
	if err != nil {
		return 0, "", fmt.Errorf("the tool's result is not JSON: %v", err)
	}
	// j is fresh and never written again: share it instead of copying.
	return C.CAPSTAN_CONTENT_JSON, unsafe.String(unsafe.SliceData(j), len(j)), nil
}

// partsResult renders Parts or Content for capstan_call_return.
func partsResult(v any) (C.capstan_content, string, error) {
	send, err := partsJSON(v)
	if err != nil {
		return 0, "", fmt.Errorf("the tool's content parts are not JSON: %v", err)
	}
	return C.CAPSTAN_CONTENT_PARTS, string(send), nil
}

// complete hands the tool's answer to capstan. A call that already ended
// (timeout, cancellation) refuses it; the model already has that result.
// A tool's *InputRequired asks its caller instead; if capstan refuses, the
// call fails with capstan's reason.
func complete(call uintptr, kind C.capstan_content, text string, err error) {
	if err != nil {
		msg := err.Error()
		var ask *InputRequired
		if errors.As(err, &ask) && ask != nil {
			if msg = ask.ask(call); msg == "" {
				return
			}
		}
		C.cg_call_fail(C.uintptr_t(call), stringPtr(msg), C.size_t(len(msg)))
		return
	}
	C.cg_call_return(C.uintptr_t(call), kind, stringPtr(text), C.size_t(len(text)))
}
