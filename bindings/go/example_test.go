package capstan_test

import (
	"context"
	"fmt"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

type AddIn struct {
	A int `json:"a" jsonschema:"description=First addend"`
	B int `json:"b"`
}

// The README's snippet.
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
