// The program tests/install/go_module.sh builds outside the tree: a user's
// module that `go get`s the binding and builds it with no build tag, against
// an installed prefix found through pkg-config. It runs one agent turn and
// exits 1 unless the tool's result comes back in the provider's format.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "go consumer:", err)
		os.Exit(1)
	}
}

func run(version string) error {
	if v := capstan.Version(); v != version {
		return fmt.Errorf("capstan.Version() is %q, want %q", v, version)
	}
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		return err
	}
	defer reg.Close()
	err = reg.Register(capstan.Func("add", "Add two integers.",
		func(ctx context.Context, in addIn) (int, error) { return in.A + in.B, nil }))
	if err != nil {
		return err
	}
	response := `{"choices":[{"message":{"role":"assistant","tool_calls":[
		{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":40}"}}]}}]}`
	msgs, err := reg.RunTurn(context.Background(), capstan.FormatOpenAIChat, []byte(response))
	if err != nil {
		return err
	}
	var got []map[string]any
	if err := json.Unmarshal(msgs, &got); err != nil {
		return err
	}
	if len(got) != 1 || got[0]["role"] != "tool" || got[0]["tool_call_id"] != "call_1" || got[0]["content"] != "42" {
		return fmt.Errorf("unexpected messages %s", msgs)
	}
	fmt.Printf("go consumer: capstan %s, add(2, 40) -> %s\n", version, msgs)
	return nil
}
