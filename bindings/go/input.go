package capstan

// A tool asking its caller for input (MCP 2026-07-28 multi round-trip
// requests): a tool returns *InputRequired as its error and reads the
// answers with InputFrom (capstan_call_require_input, capstan_call_input).

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"unsafe"
)

// The MCP methods a tool may ask its caller for (InputRequest.Method, and
// what Input.CanAsk lists).
const (
	AskElicitation = "elicitation/create"     // ask the user (params: an ElicitRequest's)
	AskSampling    = "sampling/createMessage" // ask the client's model
	AskRoots       = "roots/list"             // ask for the client's roots
)

// InputRequest is one thing a tool asks its caller for: an MCP request
// method (AskElicitation, AskSampling, AskRoots) and its params (anything
// encoding/json makes a JSON object of; nil: none).
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// InputRequired, returned by a tool as its error, asks the call's caller
// for input instead of answering (MCP 2026-07-28 multi round-trip requests):
//
//	func greet(ctx context.Context, _ json.RawMessage) (any, error) {
//		var name struct {
//			Action  string                       `json:"action"`
//			Content struct{ Name string `json:"name"` } `json:"content"`
//		}
//		_ = json.Unmarshal(capstan.InputFrom(ctx).Responses["name"], &name) // none yet: stays zero
//		if name.Action != "accept" {
//			return nil, &capstan.InputRequired{State: "asked-name", Requests: map[string]capstan.InputRequest{
//				"name": {Method: capstan.AskElicitation, Params: map[string]any{
//					"message": "What is your name?",
//					"requestedSchema": map[string]any{"type": "object",
//						"properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}}
//		}
//		return "Hello, " + name.Content.Name + "!", nil
//	}
//
// Only an MCP client calling a served tool can be asked, and only for what
// it declared (InputFrom(ctx).CanAsk): it answers and the tool is called
// again, InputFrom then giving the answers and State. For any other caller
// (Execute, RunTurn, a stream), or a request capstan refuses (an unknown
// method, more than 32 requests, a State over 64 KiB), the call ends as a
// tool error giving capstan's reason. It is found with errors.As, so a
// wrapped one (fmt.Errorf("...: %w", ir)) asks too.
type InputRequired struct {
	// Requests by key (at most 32); the answers come back under the same
	// keys. nil: none (then State must be set).
	Requests map[string]InputRequest
	// State is the tool's own (at most 64 KiB; "" = none), back in the next
	// round as Input.State. It travels through the client sealed by capstan
	// (HMAC-SHA256 with a key of the server's): readable by the client, but
	// a changed one is refused before the tool runs.
	State string
}

// Error says what was asked, for a caller that reads it as an error.
func (e *InputRequired) Error() string {
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	asked := make([]string, len(keys))
	for i, k := range keys {
		asked[i] = k + " (" + e.Requests[k].Method + ")"
	}
	if len(asked) == 0 {
		asked = []string{"another round"}
	}
	return "the tool asked for input: " + strings.Join(asked, ", ")
}

// ask completes the call asking its caller; "" when it did, else why
// capstan refused (the call is then still open).
func (e *InputRequired) ask(call uintptr) string {
	requests := e.Requests
	if requests == nil {
		requests = map[string]InputRequest{}
	}
	body, err := json.Marshal(requests)
	if err != nil {
		return "the tool's input requests are not JSON: " + err.Error()
	}
	var state *C.char
	if e.State != "" {
		state = stringPtr(e.State)
	}
	var errText *C.char
	st := C.cg_call_require_input(C.uintptr_t(call), bytesPtr(body), C.size_t(len(body)), state,
		C.size_t(len(e.State)), &errText)
	if st == C.CAPSTAN_OK {
		return ""
	}
	refused := newError("InputRequired", st, errText).(*Error)
	if refused.Message == "" {
		return e.Error() + ", which capstan refused: " + refused.Status.Error()
	}
	return refused.Message
}

// Input is what a tool's caller gave besides the arguments, and what it can
// be asked (capstan_call_input).
type Input struct {
	// CanAsk lists the methods (AskElicitation, AskSampling, AskRoots) an
	// InputRequired may ask this caller for: what an MCP client calling a
	// served tool declared; empty for every other caller.
	CanAsk []string `json:"canAsk"`
	// Responses are the client's answers, in a round after the tool asked,
	// by the keys it asked with, as the client sent them (the tool checks
	// them): an ElicitResult, a CreateMessageResult or a ListRootsResult.
	Responses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	// State is the tool's InputRequired.State from the round before
	// (capstan checked that it came back unchanged); "" = none.
	State string `json:"requestState,omitempty"`
}

// InputFrom returns what the caller of the call ctx belongs to (a tool's
// ctx) gave besides the arguments, and what it can be asked. Read it while
// the tool runs; for a ctx that is not a tool's, or once the call has its
// result, CanAsk is empty and there are no answers.
func InputFrom(ctx context.Context) Input {
	none := Input{CanAsk: []string{}}
	ci, ok := ctx.Value(callInfoKey{}).(*CallInfo)
	if !ok || ci.call == 0 {
		return none
	}
	var n C.size_t
	p := C.cg_call_input(C.uintptr_t(ci.call), &n)
	if p == nil {
		return none
	}
	var in Input
	if json.Unmarshal(C.GoBytes(unsafe.Pointer(p), C.int(n)), &in) != nil {
		return none
	}
	if in.CanAsk == nil {
		in.CanAsk = []string{}
	}
	return in
}
