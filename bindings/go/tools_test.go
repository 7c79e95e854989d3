package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

func TestTypedToolDecodesValidatedArguments(t *testing.T) {
	reg := newRegistry(t, addTool())
	r := execOne(t, reg, call("1", "add", `"{\"a\":2,\"b\":3}"`))
	if r.Outcome != capstan.OutcomeOK || r.Content != "5" || r.ID != "1" || r.Name != "add" {
		t.Fatalf("got %+v", r)
	}
}

type weatherIn struct {
	City  string   `json:"city" jsonschema:"description=City name,minLength=1"`
	Unit  string   `json:"unit,omitempty" jsonschema:"enum=c,enum=f"`
	Days  int      `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
	Inner struct { // nested structs are inlined
		X int `json:"x"`
	} `json:"inner"`
}

func TestSchemaForIsFlatStrictAndRequiresNonOmitemptyFields(t *testing.T) {
	raw, err := capstan.SchemaFor[weatherIn]()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "$ref") || strings.Contains(string(raw), "$defs") || strings.Contains(string(raw), "$schema") {
		t.Fatalf("schema has references or $schema: %s", raw)
	}
	var s struct {
		Type                 string                     `json:"type"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || fmt.Sprint(s.Required) != "[city inner]" || s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Fatalf("schema: %s", raw)
	}
	if !strings.Contains(string(s.Properties["unit"]), `"enum":["c","f"]`) {
		t.Fatalf("unit: %s", s.Properties["unit"])
	}
}

func TestSchemaForRejectsNonStruct(t *testing.T) {
	if _, err := capstan.SchemaFor[int](); !errors.Is(err, capstan.ErrInvalidSchema) {
		t.Fatalf("got %v", err)
	}
	tool := capstan.Func("n", "", func(ctx context.Context, in int) (int, error) { return in, nil })
	reg := newRegistry(t)
	if err := reg.Register(tool); !errors.Is(err, capstan.ErrInvalidSchema) {
		t.Fatalf("Register: %v", err)
	}
}

// Issue 49: a field with no JSON form is an error naming it, not a panic
// inside the schema reflector; a field tagged json:"-" is left out.
func TestSchemaForNamesAFieldWithNoJSONForm(t *testing.T) {
	type inner struct {
		Done chan bool
	}
	type withChan struct {
		City  string `json:"city"`
		Inner []inner
	}
	_, err := capstan.SchemaFor[withChan]()
	if !errors.Is(err, capstan.ErrInvalidSchema) || !strings.Contains(err.Error(), "withChan.Inner[].Done is a chan, which has no JSON form") {
		t.Fatalf("got %v", err)
	}
	tool := capstan.Func("c", "", func(ctx context.Context, in withChan) (string, error) { return "", nil })
	if err := newRegistry(t).Register(tool); !errors.Is(err, capstan.ErrInvalidSchema) {
		t.Fatalf("Register: %v", err)
	}
	type skipped struct {
		City string    `json:"city"`
		Hook func()    `json:"-"`
		Done chan bool `json:"-"`
	}
	if _, err := capstan.SchemaFor[skipped](); err != nil {
		t.Fatalf("json:\"-\" fields must be left out: %v", err)
	}
}

func TestInvalidArgumentsNeverReachTheTool(t *testing.T) {
	called := false
	reg := newRegistry(t, capstan.Func("weather", "", func(ctx context.Context, in weatherIn) (string, error) {
		called = true
		return "", nil
	}))
	r := execOne(t, reg, call("1", "weather", `{"city":"","unit":"k","extra":1}`))
	if r.Outcome != capstan.OutcomeInvalidArguments || called {
		t.Fatalf("got %+v, called %v", r, called)
	}
	for _, want := range []string{"city", "unit", "extra"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("message does not name %q: %s", want, r.Content)
		}
	}
}

// Issue 49: arguments that are not JSON fail their own call, with a position
// inside those arguments; the other calls of the batch run.
func TestArgumentsThatAreNotJSONFailOnlyTheirCall(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "weather", Func: func(context.Context, json.RawMessage) (any, error) {
		return "ok", nil
	}})
	res, err := reg.Execute(context.Background(), []capstan.Call{
		call("1", "weather", `{"city":"Oslo"}`), call("2", "weather", `{"city": Oslo}`),
	})
	if err != nil {
		t.Fatalf("the batch failed: %v", err)
	}
	if res[0].Outcome != capstan.OutcomeOK {
		t.Errorf("call 1: %+v", res[0])
	}
	if res[1].Outcome != capstan.OutcomeInvalidArguments || !strings.Contains(res[1].Content, "column 10") {
		t.Errorf("call 2 must be invalid_arguments at column 10 of its own arguments: %+v", res[1])
	}
}

func TestStringResultIsTextOtherResultsAreJSON(t *testing.T) {
	ret := func(name string, v any) capstan.Tool {
		return capstan.Tool{Name: name, Func: func(context.Context, json.RawMessage) (any, error) { return v, nil }}
	}
	reg := newRegistry(t,
		ret("text", `say "hi"`),
		ret("obj", map[string]any{"k": []int{1, 2}}),
		ret("raw", json.RawMessage(`{"r": true}`)),
		ret("bad", func() {}),
		ret("panics", panicky{}),
	)
	res, err := reg.Execute(context.Background(), []capstan.Call{
		call("1", "text", `{}`), call("2", "obj", `{}`), call("3", "raw", `{}`), call("4", "bad", `{}`),
		call("5", "panics", `{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`say "hi"`, `{"k":[1,2]}`, `{"r":true}`}
	for i, w := range want {
		if res[i].Content != w || res[i].Outcome != capstan.OutcomeOK {
			t.Errorf("%d: got %+v want %s", i, res[i], w)
		}
	}
	if res[3].Outcome != capstan.OutcomeToolError || !strings.Contains(res[3].Content, "not JSON") {
		t.Errorf("unencodable result: %+v", res[3])
	}
	if res[4].Outcome != capstan.OutcomeToolError || !strings.Contains(res[4].Content, "marshal bug") {
		t.Errorf("panicking MarshalJSON: %+v", res[4])
	}
}

func TestReturnedErrorBecomesToolErrorWithItsMessage(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "fail", Func: func(context.Context, json.RawMessage) (any, error) {
		return nil, errors.New("disk full")
	}})
	r := execOne(t, reg, call("1", "fail", `{}`))
	if r.Outcome != capstan.OutcomeToolError || !r.IsError() || !strings.Contains(r.Content, "disk full") {
		t.Fatalf("got %+v", r)
	}
}

func TestPanickingToolBecomesToolErrorAndTheProcessLives(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "boom", Func: func(context.Context, json.RawMessage) (any, error) {
		panic("kaboom")
	}}, addTool())
	// Alone (runs on the calling goroutine) and in a batch (on goroutines).
	r := execOne(t, reg, call("1", "boom", `{}`))
	if r.Outcome != capstan.OutcomeToolError || !strings.Contains(r.Content, "kaboom") {
		t.Fatalf("lone: %+v", r)
	}
	res, err := reg.Execute(context.Background(), []capstan.Call{call("1", "boom", `{}`), call("2", "add", `{"a":1,"b":1}`)})
	if err != nil || res[0].Outcome != capstan.OutcomeToolError || res[1].Content != "2" {
		t.Fatalf("batch: %+v %v", res, err)
	}
}

func TestErrorsCarryStatusAndMessage(t *testing.T) {
	reg := newRegistry(t)
	err := reg.Register(capstan.Tool{Name: "x", Schema: json.RawMessage(`{"type":"array"}`),
		Func: func(context.Context, json.RawMessage) (any, error) { return nil, nil }})
	var ce *capstan.Error
	if !errors.Is(err, capstan.ErrInvalidSchema) || !errors.As(err, &ce) || ce.Message == "" {
		t.Fatalf("schema: %#v", err)
	}
	err = reg.Register(capstan.Tool{Name: "bad name!", Func: func(context.Context, json.RawMessage) (any, error) { return nil, nil }})
	if !errors.Is(err, capstan.ErrInvalidName) || errors.Is(err, capstan.ErrInvalidSchema) {
		t.Fatalf("name: %v", err)
	}
	if err := reg.Register(capstan.Tool{Name: "nofunc"}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("no func: %v", err)
	}
	if res, err := reg.Execute(context.Background(), []capstan.Call{call("1", "x", `{`)}); err != nil || res[0].Outcome != capstan.OutcomeUnknownTool {
		t.Fatalf("a call of an unknown tool with arguments that are not JSON: %+v %v", res, err)
	}
}

// capstan keeps the last error per OS thread; goroutines move between
// threads. Many goroutines failing differently at once must each get the
// message of their own failure.
func TestErrorMessagesBelongToTheirOwnCall(t *testing.T) {
	reg := newRegistry(t)
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("bad name %d", i)
			err := reg.Register(capstan.Tool{Name: name, Func: func(context.Context, json.RawMessage) (any, error) { return nil, nil }})
			var ce *capstan.Error
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, name) {
				errs <- fmt.Sprintf("%q: %v", name, err)
			}
			name = fmt.Sprintf("missing_%d", i)
			err = reg.Unregister(name)
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, name) {
				errs <- fmt.Sprintf("%q: %v", name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestUnregisterRemovesTheTool(t *testing.T) {
	reg := newRegistry(t, addTool())
	if err := reg.Unregister("add"); err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, reg, call("1", "add", `{"a":1,"b":1}`)); r.Outcome != capstan.OutcomeUnknownTool {
		t.Fatalf("got %+v", r)
	}
	if err := reg.Unregister("add"); !errors.Is(err, capstan.ErrNotFound) {
		t.Fatalf("second: %v", err)
	}
}

func TestRegisteringAgainIsRefusedUnlessReplace(t *testing.T) {
	reg := newRegistry(t, addTool())
	again := capstan.Tool{Name: "add", Func: func(context.Context, json.RawMessage) (any, error) { return "new", nil }}
	err := reg.Register(again)
	if !errors.Is(err, capstan.ErrInvalidArgument) || !strings.Contains(err.Error(), `"add" is already registered`) {
		t.Fatalf("a second add: %v", err)
	}
	if r := execOne(t, reg, call("1", "add", `{"a":1,"b":2}`)); r.Content != "3" {
		t.Fatalf("the old tool: %+v", r)
	}
	if err := reg.Register(again, capstan.Replace()); err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, reg, call("1", "add", `{}`)); r.Content != "new" {
		t.Fatalf("got %+v", r)
	}
}

func TestToolContextNamesItsCall(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "who", Func: func(ctx context.Context, _ json.RawMessage) (any, error) {
		ci, ok := capstan.CallInfoFrom(ctx)
		return fmt.Sprint(ok, ci.ID, ci.Tool), nil
	}})
	if r := execOne(t, reg, call("c7", "who", `{}`)); r.Content != "truec7who" {
		t.Fatalf("got %+v", r)
	}
}

func TestVersionIsSet(t *testing.T) {
	if v := capstan.Version(); !strings.Contains(v, ".") {
		t.Fatalf("version %q", v)
	}
}

type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("marshal bug") }

// A provider's error body reaches Go as fields (errors.As), not only as text:
// here Gemini's RESOURCE_EXHAUSTED with its HTTP code and RetryInfo delay.
func TestProviderErrorsCarryKindHTTPStatusAndRetryDelay(t *testing.T) {
	body := []byte(`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`)
	_, err := capstan.ParseCalls(capstan.FormatGemini, body)
	var ce *capstan.Error
	if !errors.Is(err, capstan.ErrProviderError) || !errors.As(err, &ce) || ce.Provider == nil {
		t.Fatalf("got %#v", err)
	}
	p := ce.Provider
	if p.HTTPStatus != 429 || p.RetryAfter != 37*time.Second || p.Type != "RESOURCE_EXHAUSTED" || p.Message != "Quota exceeded" {
		t.Fatalf("provider fields: %+v", *p)
	}
	if ce.HasSchemaPointer {
		t.Fatalf("a provider error has no schema pointer: %+v", ce)
	}
}

// A schema error names the JSON Pointer of the offending place.
func TestSchemaErrorsCarryTheirJSONPointer(t *testing.T) {
	reg := newRegistry(t)
	err := reg.Register(capstan.Tool{Name: "x", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"intgr"}}}`),
		Func: func(context.Context, json.RawMessage) (any, error) { return nil, nil }})
	var ce *capstan.Error
	if !errors.Is(err, capstan.ErrInvalidSchema) || !errors.As(err, &ce) || !ce.HasSchemaPointer ||
		!strings.HasPrefix(ce.SchemaPointer, "/properties/n") || ce.Provider != nil {
		t.Fatalf("got %#v", err)
	}
}
