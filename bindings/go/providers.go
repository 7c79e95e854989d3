package capstan

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"math"
	"time"
	"unsafe"
)

// Format is a provider's wire format.
type Format uint32

// Formats of include/capstan.h.
const (
	FormatDescribe        Format = C.CAPSTAN_FORMAT_DESCRIBE // capstan's own
	FormatOpenAIChat      Format = C.CAPSTAN_FORMAT_OPENAI_CHAT
	FormatOpenAIResponses Format = C.CAPSTAN_FORMAT_OPENAI_RESPONSES
	FormatAnthropic       Format = C.CAPSTAN_FORMAT_ANTHROPIC
	FormatGemini          Format = C.CAPSTAN_FORMAT_GEMINI
	FormatMCP             Format = C.CAPSTAN_FORMAT_MCP
)

// Tools returns the registered tools as the JSON the format's API takes
// (sorted by name), e.g. the "tools" array of an OpenAI Chat request.
func (r *Registry) Tools(format Format) (json.RawMessage, error) {
	return r.out("Tools", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_registry_tools_json(r.ptr, C.capstan_format(format), nil, out, n, nil, nil)
	})
}

// ExportOptions change how ExportTools writes the tool list.
type ExportOptions struct {
	// Strict writes OpenAI strict-mode schemas (every property required,
	// optional ones nullable, additionalProperties false); run the calls
	// with StrictNulls then.
	Strict bool
	// GeminiLower writes Gemini's OpenAPI-subset `parameters` (local $refs
	// inlined, unsupported keywords dropped) instead of parametersJsonSchema.
	GeminiLower bool
}

// ExportTools is Tools with options; report lists
// [{"tool","pointer","message"}]: what was dropped or could not be made
// strict, and names the format would refuse.
func (r *Registry) ExportTools(format Format, opts ExportOptions) (tools, report json.RawMessage, err error) {
	var o C.capstan_export_options
	o.struct_size = C.uint32_t(unsafe.Sizeof(o))
	if opts.Strict {
		o.flags |= C.CAPSTAN_EXPORT_STRICT
	}
	if opts.GeminiLower {
		o.flags |= C.CAPSTAN_EXPORT_GEMINI_LOWER
	}
	var rep *C.char
	var repLen C.size_t
	tools, err = r.out("ExportTools", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_registry_tools_json(r.ptr, C.capstan_format(format), &o, out, n, &rep, &repLen)
	})
	if err != nil {
		return nil, nil, err
	}
	report = C.GoBytes(unsafe.Pointer(rep), C.int(repLen))
	C.capstan_string_free(rep)
	return tools, report, nil
}

// ParseCalls reads the tool calls out of a model response (the whole body or
// just the message) in the given format; none when the model asked for no
// tool. ErrInvalidResponse names what is missing.
func ParseCalls(format Format, response []byte) ([]Call, error) {
	raw, err := takeText("ParseCalls", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_format_parse_calls(C.capstan_format(format), bytesPtr(response), C.size_t(len(response)), out, n)
	})
	if err != nil {
		return nil, err
	}
	var calls []Call
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, &Error{Op: "ParseCalls", Status: ErrInternal, Message: err.Error()}
	}
	return calls, nil
}

// FormatResults formats results as the messages/items the format expects
// next in the conversation.
func FormatResults(format Format, results []Result) (json.RawMessage, error) {
	body, err := json.Marshal(results)
	if err != nil {
		return nil, &Error{Op: "FormatResults", Status: ErrInvalidResults, Message: err.Error()}
	}
	return takeText("FormatResults", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_format_write_results(C.capstan_format(format), bytesPtr(body), C.size_t(len(body)), out, n)
	})
}

// RunTurn is one agent turn: it parses the calls out of a model response,
// runs them as Execute does, and returns what to append to the conversation,
// in the same format. An error only for a response that lacks what the
// format requires, a closed registry, or ctx (with the messages of the
// results, cancelled ones included). With WholeTurn, the whole turn (the
// model's own turn, then the results) in one array.
func (r *Registry) RunTurn(ctx context.Context, format Format, response []byte, opts ...ExecOption) (json.RawMessage, error) {
	var o execOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.wholeTurn {
		return r.runWholeTurn(ctx, format, response, o)
	}
	calls, err := ParseCalls(format, response)
	if err != nil {
		return nil, err
	}
	results, runErr := r.Execute(ctx, calls, opts...)
	if results == nil && runErr != nil {
		return nil, runErr
	}
	msgs, err := FormatResults(format, results)
	if err != nil {
		return nil, err
	}
	return msgs, runErr
}

// runWholeTurn is RunTurn with WholeTurn: capstan_registry_run_turn with
// CAPSTAN_EXEC_WHOLE_TURN.
func (r *Registry) runWholeTurn(ctx context.Context, format Format, response []byte, o execOptions) (json.RawMessage, error) {
	if o.limit < 0 || o.timeout < 0 || o.deadline < 0 {
		return nil, &Error{Op: "RunTurn", Status: ErrInvalidArgument, Message: "limit, timeout and deadline must not be negative"}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return nil, context.DeadlineExceeded
		}
		if o.deadline == 0 || left < o.deadline {
			o.deadline = left
		}
	}
	var approved **C.char
	if len(o.approved) > 0 {
		approved = cStrings(o.approved)
		defer freeCStrings(approved, len(o.approved))
	}
	rid, ridLen, freeRid := o.cRunID()
	defer freeRid()
	raw, err := r.out("RunTurn", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.cg_run_turn(r.ptr, C.capstan_format(format), bytesPtr(response), C.size_t(len(response)),
			o.flags|C.CAPSTAN_EXEC_WHOLE_TURN, C.uint32_t(min(uint64(o.limit), math.MaxUint32)),
			millis(o.timeout), millis(o.deadline), approved, C.size_t(len(o.approved)), rid, ridLen, out, n)
	})
	if err != nil {
		return nil, err
	}
	return json.RawMessage(raw), nil
}
