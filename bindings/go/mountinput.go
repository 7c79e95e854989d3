package capstan

// A mount's host answering what its server asks while running a tool
// (capstan_mcp_mount_options.input_*): elicitation, sampling, roots. The
// host's Go func is called on capstan's MCP threads through one cgo.Handle
// per mount that capstan's input_destroy releases.

// #include "capstan_go.h"
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/cgo"
	"sync/atomic"
	"time"
	"unsafe"
)

// MountInput answers the requests a mounted server makes while running one
// of its tools: a form for the user (AskElicitation), a completion of the
// host's model (AskSampling), the host's roots (AskRoots). A 2026-07-28
// server asks with an InputRequiredResult (the mount has every request
// answered, then calls the tool again with the answers, up to 10 rounds a
// call); an older server (2025-11-25) sends its requests mid-call.
type MountInput struct {
	// Methods are the methods Answer answers (AskElicitation, AskSampling,
	// AskRoots; at least one), declared to the server as the client's
	// capabilities. Another name is ErrInvalidArgument.
	Methods []string
	// Answer returns the method's result as JSON: an ElicitResult
	// ({"action":"accept","content":{...}}, "decline" or "cancel"; the
	// requested schema's defaults are filled in for fields an accepted
	// form leaves out), a CreateMessageResult or a ListRootsResult, at
	// most 1 MiB. tool is the mounted tool's local name, "" for an older
	// server's request (made mid-call, it names no call); params are the
	// request's params. An error, a panic, an empty or larger answer, or
	// one that is not the method's result gives no answer: the call ends
	// as a tool error saying so ("the host gave no answer to ..."). It may
	// block (a user answering): ctx ends after MountOptions.CallTimeout if
	// set, or when the registry closes; capstan stops waiting when the
	// call ends (for an older server's request, after an hour). It runs on
	// one of capstan's MCP threads and must not Close the mount. Required
	// (nil with Methods is ErrInvalidArgument).
	Answer func(ctx context.Context, tool, method string, params json.RawMessage) (json.RawMessage, error)
}

// inputMethods maps MountInput.Methods to capstan's flags.
var inputMethods = map[string]C.uint32_t{
	AskElicitation: C.CAPSTAN_MCP_INPUT_ELICITATION,
	AskSampling:    C.CAPSTAN_MCP_INPUT_SAMPLING,
	AskRoots:       C.CAPSTAN_MCP_INPUT_ROOTS,
}

// inputHooks is what a mount's input cgo.Handle refers to.
type inputHooks struct {
	answer  func(ctx context.Context, tool, method string, params json.RawMessage) (json.RawMessage, error)
	methods C.uint32_t
	parent  context.Context // the registry's: its Close ends Answer's ctx
	timeout time.Duration   // 0: none
}

// Live input handles, and destroys of a handle already released (a capstan
// bug if ever non-zero); export_test.go reads them.
var inputLive, inputDoubleDestroys atomic.Int64

// newInputHooks checks the methods of in and makes the hooks (their handle
// comes with fill).
func newInputHooks(in *MountInput, parent context.Context, callTimeout time.Duration) (*inputHooks, error) {
	h := &inputHooks{answer: in.Answer, parent: parent, timeout: callTimeout}
	for _, m := range in.Methods {
		flag, ok := inputMethods[m]
		if !ok {
			return nil, &Error{Op: "MountMCP", Status: ErrInvalidArgument,
				Message: fmt.Sprintf("MountInput.Methods: %q is none of %s, %s, %s", m, AskElicitation, AskSampling, AskRoots)}
		}
		h.methods |= flag
	}
	return h, nil
}

// fill sets the input_ fields of opts. capstan releases the handle
// (goInputDestroy) exactly once, whatever capstan_mcp_mount_new returns:
// call it right before that.
func (h *inputHooks) fill(opts *C.capstan_mcp_mount_options) {
	inputLive.Add(1)
	C.cg_mount_input(opts, C.uintptr_t(cgo.NewHandle(h)), C.bool(h.answer != nil), h.methods)
}

// run calls Answer and copies its answer into capstan's room; 0: none.
func (h *inputHooks) run(tool, method string, params json.RawMessage, room []byte) (n C.size_t) {
	defer func() {
		if recover() != nil {
			n = 0 // a panic is no answer, never a crash
		}
	}()
	ctx, cancel := h.parent, context.CancelFunc(func() {})
	if h.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, h.timeout)
	}
	defer cancel()
	answer, err := h.answer(ctx, tool, method, params)
	if err != nil || len(answer) > len(room) {
		return 0
	}
	return C.size_t(copy(room, answer))
}

//export goInputAnswer
func goInputAnswer(hd C.uintptr_t, tool, method, params *C.char, paramsLen C.size_t, answer *C.char, capacity C.size_t) C.size_t {
	h, _ := value(hd).(*inputHooks)
	if h == nil || h.answer == nil || method == nil || answer == nil {
		return 0
	}
	var toolName string
	if tool != nil {
		toolName = C.GoString(tool)
	}
	var p json.RawMessage
	if params != nil {
		p = C.GoBytes(unsafe.Pointer(params), C.int(paramsLen))
	}
	return h.run(toolName, C.GoString(method), p, unsafe.Slice((*byte)(unsafe.Pointer(answer)), int(capacity)))
}

//export goInputDestroy
func goInputDestroy(hd C.uintptr_t) {
	defer func() {
		if recover() != nil { // released already: never crash for it
			inputDoubleDestroys.Add(1)
		}
	}()
	cgo.Handle(hd).Delete()
	inputLive.Add(-1)
}
