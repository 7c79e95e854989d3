package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

const chatResponse = `{"choices":[{"message":{"role":"assistant","tool_calls":[
 {"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}},
 {"id":"call_2","type":"function","function":{"name":"add","arguments":"{\"a\":\"x\"}"}}]}}]}`

func TestToolsExportsTheFormatsToolList(t *testing.T) {
	reg := newRegistry(t, addTool())
	raw, err := reg.Tools(capstan.FormatOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Type != "function" || tools[0].Function.Name != "add" ||
		!strings.Contains(string(tools[0].Function.Parameters), `"required":["a","b"]`) {
		t.Fatalf("%s", raw)
	}
}

func TestParseCallsReadsAProviderResponse(t *testing.T) {
	calls, err := capstan.ParseCalls(capstan.FormatOpenAIChat, []byte(chatResponse))
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].ID != "call_1" || calls[0].Name != "add" {
		t.Fatalf("%+v", calls)
	}
	_, err = capstan.ParseCalls(capstan.FormatOpenAIChat, []byte(`{"choices":"no"}`))
	var ce *capstan.Error
	if !errors.Is(err, capstan.ErrInvalidResponse) || !errors.As(err, &ce) || ce.Message == "" {
		t.Fatalf("bad body: %v", err)
	}
	if _, err := capstan.ParseCalls(capstan.Format(99), []byte(`{}`)); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("bad format: %v", err)
	}
}

func TestFormatResultsWritesTheNextMessages(t *testing.T) {
	msgs, err := capstan.FormatResults(capstan.FormatOpenAIChat, []capstan.Result{
		{ID: "call_1", Name: "add", Content: "5"},
		{ID: "call_2", Name: "add", Content: "bad", Outcome: capstan.OutcomeInvalidArguments},
	})
	if err != nil {
		t.Fatal(err)
	}
	var m []struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	if err := json.Unmarshal(msgs, &m); err != nil || len(m) != 2 || m[0].Role != "tool" || m[0].ToolCallID != "call_1" || m[0].Content != "5" {
		t.Fatalf("%v %s", err, msgs)
	}
}

func TestRunTurnGoesFromResponseToMessages(t *testing.T) {
	reg := newRegistry(t, addTool())
	msgs, err := reg.RunTurn(context.Background(), capstan.FormatOpenAIChat, []byte(chatResponse))
	if err != nil {
		t.Fatal(err)
	}
	var m []struct {
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	if err := json.Unmarshal(msgs, &m); err != nil || len(m) != 2 || m[0].Content != "5" || !strings.Contains(m[1].Content, "a") {
		t.Fatalf("%v %s", err, msgs)
	}
	if _, err := reg.RunTurn(context.Background(), capstan.FormatOpenAIChat, []byte(`{"choices":"no"}`)); !errors.Is(err, capstan.ErrInvalidResponse) {
		t.Fatalf("bad body: %v", err)
	}
}

func TestStrictExportAndStrictNullsGoTogether(t *testing.T) {
	reg := newRegistry(t, capstan.Func("weather", "", func(ctx context.Context, in weatherIn) (string, error) {
		return in.City + "/" + in.Unit, nil
	}))
	tools, report, err := reg.ExportTools(capstan.FormatOpenAIChat, capstan.ExportOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tools), `"strict":true`) || !json.Valid(report) {
		t.Fatalf("%s / %s", tools, report)
	}
	// A strict-mode model sends null for the optional unit.
	r := execOne(t, reg, call("1", "weather", `{"city":"Lyon","unit":null,"days":null,"inner":{"x":1}}`), capstan.StrictNulls())
	if r.Outcome != capstan.OutcomeOK || r.Content != "Lyon/" {
		t.Fatalf("%+v", r)
	}
}

// WholeTurn (CAPSTAN_EXEC_WHOLE_TURN): the array starts with the assistant
// message holding the thinking block and its signature unchanged.
func TestRunTurnWholeTurnKeepsTheThinkingBlock(t *testing.T) {
	reg := newRegistry(t, capstan.Func("add", "Add.", func(_ context.Context, in struct {
		A int `json:"a"`
	}) (int, error) {
		return in.A + 1, nil
	}))
	thinking := `{"type":"thinking","thinking":"Add one.","signature":"EqQBCkYIBRgCKkD/sig=="}`
	response := `{"id":"msg_t","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` + thinking +
		`,{"type":"tool_use","id":"toolu_1","name":"add","input":{"a":1}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`
	out, err := reg.RunTurn(context.Background(), capstan.FormatAnthropic, []byte(response), capstan.WholeTurn())
	if err != nil {
		t.Fatal(err)
	}
	var turn []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(out, &turn); err != nil || len(turn) != 2 {
		t.Fatalf("%s (%v)", out, err)
	}
	var got, want any
	_ = json.Unmarshal(turn[0].Content[0], &got)
	_ = json.Unmarshal([]byte(thinking), &want)
	if turn[0].Role != "assistant" || !reflect.DeepEqual(got, want) || turn[1].Role != "user" ||
		!strings.Contains(string(turn[1].Content[0]), `"content":"2"`) && !strings.Contains(string(turn[1].Content[0]), `"text":"2"`) {
		t.Fatalf("whole turn: %s", out)
	}
}
