package capstan

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
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
		return C.capstan_tools_json(r.ptr, C.capstan_format(format), out, n)
	})
}

// ParseCalls reads the tool calls out of a model response (the whole body or
// just the message) in the given format; none when the model asked for no
// tool. ErrInvalidResponse names what is missing.
func ParseCalls(format Format, response []byte) ([]Call, error) {
	raw, err := takeText("ParseCalls", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_parse_calls(C.capstan_format(format), bytesPtr(response), C.size_t(len(response)), out, n)
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
		return C.capstan_format_results(C.capstan_format(format), bytesPtr(body), C.size_t(len(body)), out, n)
	})
}

// RunTurn is one agent turn: it parses the calls out of a model response,
// runs them as Execute does, and returns what to append to the conversation,
// in the same format. An error only for a response that lacks what the
// format requires, a closed registry, or ctx (with the messages of the
// results, cancelled ones included).
func (r *Registry) RunTurn(ctx context.Context, format Format, response []byte, opts ...ExecOption) (json.RawMessage, error) {
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
