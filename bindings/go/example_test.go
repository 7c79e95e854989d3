package capstan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

type AddIn struct {
	A int `json:"a" jsonschema:"description=First addend"`
	B int `json:"b"`
}

// The Go guide's snippet (docs/go.md), as a testable example.
func ExampleFunc() {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	err = reg.Register(capstan.Func("add", "Add two integers.",
		func(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil }))
	if err != nil {
		panic(err)
	}
	response := []byte(`{"choices":[{"message":{"role":"assistant","tool_calls":[
	  {"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]}}]}`)
	msgs, err := reg.RunTurn(context.Background(), capstan.FormatOpenAIChat, response)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(msgs))
	// Output: [{"role":"tool","tool_call_id":"call_1","content":"5"}]
}

// A tool that returns an image: Anthropic gets an image block in its
// tool_result.
func ExampleParts() {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	png := []byte("\x89PNG\r\n\x1a\n")
	err = reg.Register(capstan.Tool{Name: "screenshot", Description: "Take a screenshot.",
		Func: func(context.Context, json.RawMessage) (any, error) {
			return capstan.Parts{capstan.Text("the screen"), capstan.Image(png, "image/png")}, nil
		}})
	if err != nil {
		panic(err)
	}
	response := []byte(`{"content":[{"type":"tool_use","id":"toolu_1","name":"screenshot","input":{}}]}`)
	msgs, err := reg.RunTurn(context.Background(), capstan.FormatAnthropic, response)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(msgs))
	// Output: {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"the screen"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]}
}

// A streamed OpenAI Chat response read as it arrives: with EarlyDispatch
// the call starts as soon as its arguments are complete.
func ExampleRegistry_RunStream() {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	err = reg.Register(capstan.Func("add", "Add two integers.",
		func(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil }))
	if err != nil {
		panic(err)
	}
	body := strings.NewReader(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Adding."}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"b\":3}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`)
	turn, err := reg.RunStream(context.Background(), capstan.FormatOpenAIChat, body, capstan.StreamHandlers{
		Text: func(text string) { fmt.Println("text:", text) },
	}, capstan.EarlyDispatch())
	if err != nil {
		panic(err)
	}
	fmt.Println(turn.StopReason, string(turn.Messages))
	// Output:
	// text: Adding.
	// tool_calls [{"role":"tool","tool_call_id":"call_1","content":"5"}]
}

// A tool that asks its MCP client for the user's name, and greets with the
// answer once the client called it again. Run locally, nothing can answer:
// the call ends as a tool error saying so.
func ExampleInputRequired() {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	type answer struct {
		Action  string `json:"action"`
		Content struct {
			Name string `json:"name"`
		} `json:"content"`
	}
	err = reg.Register(capstan.Func("greet", "Greet the user by name.",
		func(ctx context.Context, _ struct{}) (string, error) {
			var a answer
			_ = json.Unmarshal(capstan.InputFrom(ctx).Responses["name"], &a)
			if a.Action != "accept" {
				return "", &capstan.InputRequired{State: "asked-name", Requests: map[string]capstan.InputRequest{
					"name": {Method: capstan.AskElicitation, Params: map[string]any{
						"message": "What is your name?",
						"requestedSchema": map[string]any{"type": "object",
							"properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}}
			}
			return "Hello, " + a.Content.Name + "!", nil
		}))
	if err != nil {
		panic(err)
	}
	res, err := reg.Execute(context.Background(), []capstan.Call{{ID: "1", Name: "greet", Arguments: json.RawMessage(`{}`)}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res[0].Outcome, res[0].Content)
	// Output: tool_error unsupported: tool "greet" asked for input (elicitation/create), but its caller cannot be asked: only an MCP client calling a served tool can answer
}
