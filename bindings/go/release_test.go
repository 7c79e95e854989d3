package capstan_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// toolHolding returns a tool whose Func keeps an object alive, and a flag
// that turns true once that object was garbage-collected: proof that the
// binding let go of the tool (its cgo.Handle was released in destroy).
func toolHolding(name string, schema string) (capstan.Tool, *atomic.Bool) {
	freed := new(atomic.Bool)
	obj := new([64]byte)
	runtime.AddCleanup(obj, func(f *atomic.Bool) { f.Store(true) }, freed)
	return capstan.Tool{Name: name, Schema: json.RawMessage(schema),
		Func: func(context.Context, json.RawMessage) (any, error) { return len(obj) + int(obj[0]), nil }}, freed
}

func waitFreed(t *testing.T, what string, freed *atomic.Bool) {
	t.Helper()
	for deadline := time.Now().Add(soon); !freed.Load() && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if !freed.Load() {
		t.Fatalf("%s: the tool was never released", what)
	}
}

func TestToolsAreReleasedWhenUnregisteredReplacedRefusedOrClosed(t *testing.T) {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	unreg, freedUnreg := toolHolding("a", "")
	replaced, freedReplaced := toolHolding("b", "")
	refused, freedRefused := toolHolding("c", `{"type":"array"}`)
	closed, freedClosed := toolHolding("d", "")
	for _, tool := range []capstan.Tool{unreg, replaced, closed} {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Register(refused); err == nil {
		t.Fatal("array schema accepted")
	}
	if res, err := reg.Execute(context.Background(), []capstan.Call{call("1", "a", `{}`)}); err != nil || res[0].Content != "64" {
		t.Fatalf("%v %+v", err, res)
	}
	if err := reg.Unregister("a"); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(addToolNamed("b"), capstan.Replace()); err != nil {
		t.Fatal(err)
	}
	duplicate, freedDuplicate := toolHolding("d", "")
	if err := reg.Register(duplicate); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("a second %q: %v", "d", err)
	}
	unreg, replaced, refused, duplicate = capstan.Tool{}, capstan.Tool{}, capstan.Tool{}, capstan.Tool{}
	waitFreed(t, "unregistered", freedUnreg)
	waitFreed(t, "replaced", freedReplaced)
	waitFreed(t, "refused", freedRefused)
	waitFreed(t, "refused as a duplicate", freedDuplicate)
	if freedClosed.Load() {
		t.Fatal("a registered tool was released")
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	closed = capstan.Tool{}
	waitFreed(t, "closed", freedClosed)
	_, _, _, _ = unreg, replaced, refused, closed
}

func addToolNamed(name string) capstan.Tool {
	t := addTool()
	t.Name = name
	return t
}

func hookHolding() (func(capstan.Event), *atomic.Bool) {
	freed := new(atomic.Bool)
	obj := new([64]byte)
	runtime.AddCleanup(obj, func(f *atomic.Bool) { f.Store(true) }, freed)
	return func(capstan.Event) { obj[0]++ }, freed
}

func TestHooksAreReleasedWhenReplacedOrClosed(t *testing.T) {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, freedFirst := hookHolding()
	second, freedSecond := hookHolding()
	if err := reg.SetEventHook(first); err != nil {
		t.Fatal(err)
	}
	if err := reg.SetEventHook(second); err != nil {
		t.Fatal(err)
	}
	first, second = nil, nil
	waitFreed(t, "replaced hook", freedFirst)
	if freedSecond.Load() {
		t.Fatal("the hook in place was released")
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	waitFreed(t, "hook at close", freedSecond)
	_, _ = first, second
}
