package capstan_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// Generous bounds: these hold on a machine with load average 10.
const (
	soon    = 10 * time.Second // something that should happen at once
	eternal = time.Hour        // a tool that never returns on its own
)

func newRegistry(t *testing.T, tools ...capstan.Tool) *capstan.Registry {
	t.Helper()
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	for _, tool := range tools {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func addTool() capstan.Tool {
	return capstan.Func("add", "Add two integers.", func(ctx context.Context, in addIn) (int, error) {
		return in.A + in.B, nil
	})
}

func call(id, name, args string) capstan.Call {
	return capstan.Call{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func execOne(t *testing.T, reg *capstan.Registry, c capstan.Call, opts ...capstan.ExecOption) capstan.Result {
	t.Helper()
	res, err := reg.Execute(context.Background(), []capstan.Call{c}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("want 1 result, got %d", len(res))
	}
	return res[0]
}

func strconvItoa(i int) string { return strconv.Itoa(i) }
