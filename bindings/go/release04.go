package capstan

// What capstan 0.4 added, in Go: approval checks without running, tool
// search and deferred tools, history check and repair.

// #include "capstan_go.h"
import "C"

import (
	"encoding/json"
	"strings"
	"unsafe"
)

// PendingCall is a call that would wait for the approver (NeedsApproval).
type PendingCall struct {
	Index int    `json:"index"` // position in the calls given
	ID    string `json:"id"`
	Name  string `json:"name"`
}

// NeedsApproval says which calls would wait for the approver if run with
// these options: those of RequiresApproval tools whose id is not listed by
// WithApproved. Runs nothing. ErrInvalidCalls for calls capstan cannot
// read.
func (r *Registry) NeedsApproval(calls []Call, opts ...ExecOption) ([]PendingCall, error) {
	var o execOptions
	for _, opt := range opts {
		opt(&o)
	}
	body := appendCalls(make([]byte, 0, 64*len(calls)+2), calls)
	var approved **C.char
	if len(o.approved) > 0 {
		approved = cStrings(o.approved)
		defer freeCStrings(approved, len(o.approved))
	}
	raw, err := r.out("NeedsApproval", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.cg_needs_approval(r.ptr, bytesPtr(body), C.size_t(len(body)), approved, C.size_t(len(o.approved)), out, n)
	})
	if err != nil {
		return nil, err
	}
	var pending []PendingCall
	if err := json.Unmarshal(raw, &pending); err != nil {
		return nil, &Error{Op: "NeedsApproval", Status: ErrInternal, Message: err.Error()}
	}
	return pending, nil
}

// --- tool search ------------------------------------------------------------------

// SearchOptions change how Search reads its query.
type SearchOptions struct {
	// Regex reads the query as a regular expression (Rust regex syntax,
	// linear time; (?i) for case-insensitive) matched against names,
	// descriptions and parameter names and descriptions, a name match
	// first. Without it the query is words, ranked by BM25.
	Regex bool
	// Limit is the most results (1 to 100); 0 = 5.
	Limit int
}

// SearchResult is one tool Search found.
type SearchResult struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
}

func searchFlags(regex bool, limit int, op string) (C.uint32_t, C.uint32_t, error) {
	if limit < 0 || limit > 100 {
		return 0, 0, &Error{Op: op, Status: ErrInvalidArgument, Message: "limit must be 0 (the default, 5) to 100"}
	}
	var flags C.uint32_t
	if regex {
		flags |= C.CAPSTAN_SEARCH_REGEX
	}
	return flags, C.uint32_t(limit), nil
}

// Search returns the registered tools that best match query, best first
// (capstan_registry_search_json). ErrInvalidArgument for an empty query or
// one past 1024 bytes, or a pattern that does not compile (the message says
// why).
func (r *Registry) Search(query string, opts SearchOptions) ([]SearchResult, error) {
	flags, limit, err := searchFlags(opts.Regex, opts.Limit, "Search")
	if err != nil {
		return nil, err
	}
	var o C.capstan_search_options
	o.struct_size = C.uint32_t(unsafe.Sizeof(o))
	o.flags, o.limit = flags, limit
	raw, err := r.out("Search", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_registry_search_json(r.ptr, stringPtr(query), C.size_t(len(query)), &o, out, n)
	})
	if err != nil {
		return nil, err
	}
	var doc struct {
		Results []SearchResult `json:"results"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, &Error{Op: "Search", Status: ErrInternal, Message: err.Error()}
	}
	return doc.Results, nil
}

// SearchToolOptions configure the search tool (AddSearchTool).
type SearchToolOptions struct {
	Name        string // "" = "tool_search"
	Description string // "" = capstan's default, which tells the model how to search
	Regex       bool   // the model's query is a regular expression (see SearchOptions)
	Limit       int    // tools listed per search (1 to 100); 0 = 5
}

// AddSearchTool registers capstan's search tool (replacing a tool of its
// name): the model calls it with {"query": "..."} to find tools it was not
// shown, and gets {"tools":[{"name","description"}]}. Every Deferred tool a
// search lists is loaded: Tools and ExportTools include it from then on, so
// the model sees it on its next request. UnloadTools forgets them.
func (r *Registry) AddSearchTool(opts SearchToolOptions) error {
	flags, limit, err := searchFlags(opts.Regex, opts.Limit, "AddSearchTool")
	if err != nil {
		return err
	}
	if strings.IndexByte(opts.Name, 0) >= 0 || strings.IndexByte(opts.Description, 0) >= 0 {
		return &Error{Op: "AddSearchTool", Status: ErrInvalidArgument, Message: "name and description must not contain NUL"}
	}
	var o C.capstan_search_tool_options
	o.struct_size = C.uint32_t(unsafe.Sizeof(o))
	o.flags, o.limit = flags, limit
	if opts.Name != "" {
		o.name = C.CString(opts.Name)
		defer C.free(unsafe.Pointer(o.name))
	}
	if opts.Description != "" {
		o.description = C.CString(opts.Description)
		defer C.free(unsafe.Pointer(o.description))
	}
	if err := r.enter("AddSearchTool"); err != nil {
		return err
	}
	defer r.leave()
	return check("AddSearchTool", func() C.capstan_status { return C.capstan_registry_add_search_tool(r.ptr, &o) })
}

// UnloadTools forgets the Deferred tools the search tool has loaded (a new
// conversation): the exports leave them out again until found.
func (r *Registry) UnloadTools() error {
	if err := r.enter("UnloadTools"); err != nil {
		return err
	}
	defer r.leave()
	return check("UnloadTools", func() C.capstan_status { return C.capstan_registry_unload_tools(r.ptr) })
}

// --- history check and repair -------------------------------------------------------

// HistoryOptions change what CheckHistory does.
type HistoryOptions struct {
	// Repair also writes the repaired history (HistoryReport.Repaired).
	Repair bool
	// GeminiSignatures requires a thoughtSignature on the first
	// functionCall part of each model content, as Gemini 3 models do.
	GeminiSignatures bool
}

// HistoryFinding is one thing CheckHistory found wrong.
type HistoryFinding struct {
	// Kind: missing_result, orphan_result, duplicate_result,
	// duplicate_call_id, illegal_id, out_of_order or missing_signature.
	Kind    string `json:"kind"`
	Entry   int    `json:"entry"`   // index of the message, item or content
	CallID  string `json:"call_id"` // as the history has it ("" when none)
	Message string `json:"message"`
	Repair  string `json:"repair,omitempty"` // what the repair did (with Repair)
}

// HistoryReport is what CheckHistory found.
type HistoryReport struct {
	OK       bool             `json:"ok"`
	Findings []HistoryFinding `json:"findings"`
	// Repaired is the history in the shape it came in, repaired (with
	// HistoryOptions.Repair only, else nil).
	Repaired json.RawMessage `json:"-"`
}

// CheckHistory checks a conversation against the rules format (OpenAI
// Chat, OpenAI Responses, Anthropic or Gemini) sets for tool calls and
// their results: every call answered once, in order, under a legal and
// unique id. history is an array of messages, input items or contents, or a
// request body holding one under "messages", "input" or "contents". With
// Repair, a call without a result gets an error result saying it never
// finished (it is not run), orphan and second results are dropped, repeated
// or illegal ids are renamed as RunTurn renames them, results are put in
// call order. A damaged history is a report, not an error; the error is for
// FormatDescribe or FormatMCP (no conversations) and text that is not a
// history (ErrInvalidArgument, naming the entry). Pure: no registry.
func CheckHistory(format Format, history []byte, opts HistoryOptions) (HistoryReport, error) {
	var flags C.uint32_t
	if opts.Repair {
		flags |= C.CAPSTAN_HISTORY_REPAIR
	}
	if opts.GeminiSignatures {
		flags |= C.CAPSTAN_HISTORY_GEMINI_SIGNATURES
	}
	var rep *C.char
	var repLen C.size_t
	var repaired **C.char
	var repairedLen *C.size_t
	var fixed *C.char
	var fixedLen C.size_t
	if opts.Repair {
		repaired, repairedLen = &fixed, &fixedLen
	}
	err := check("CheckHistory", func() C.capstan_status {
		return C.capstan_format_check_history(C.capstan_format(format), bytesPtr(history), C.size_t(len(history)),
			flags, &rep, &repLen, repaired, repairedLen)
	})
	if err != nil {
		return HistoryReport{}, err
	}
	var report HistoryReport
	raw := C.GoBytes(unsafe.Pointer(rep), C.int(repLen))
	C.capstan_string_free(rep)
	if fixed != nil {
		report.Repaired = C.GoBytes(unsafe.Pointer(fixed), C.int(fixedLen))
		C.capstan_string_free(fixed)
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		return HistoryReport{}, &Error{Op: "CheckHistory", Status: ErrInternal, Message: err.Error()}
	}
	return report, nil
}
