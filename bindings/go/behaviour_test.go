package capstan_test

// This binding against tests/fixtures/binding_behaviour.json, the table every
// binding's suite checks (issue #49.6), and duplicate registration (#49.5).

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

type behaviourRow struct {
	Name      string          `json:"name"`
	Code      *int            `json:"code"`
	Accepted  bool            `json:"accepted"`
	Canonical bool            `json:"canonical"`
	Index     int             `json:"index"`
	ID        string          `json:"id"`
	Mistake   string          `json:"mistake"`
	Status    string          `json:"status"`
	Outcome   string          `json:"outcome"`
	Fragment  string          `json:"fragment"`
	NamesTool bool            `json:"names_tool"`
	Arguments string          `json:"arguments"`
	Call      json.RawMessage `json:"call"`
}

func behaviourTable(t *testing.T) (table struct{ Formats, IDs, Errors []behaviourRow }) {
	t.Helper()
	raw, err := os.ReadFile("../../tests/fixtures/binding_behaviour.json")
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Formats []behaviourRow `json:"formats"`
		IDs     []behaviourRow `json:"ids"`
		Errors  []behaviourRow `json:"errors"`
	}
	if err := json.Unmarshal(raw, &parsed); err != nil {
		t.Fatal(err)
	}
	table.Formats, table.IDs, table.Errors = parsed.Formats, parsed.IDs, parsed.Errors
	return table
}

func behaviourRegistry(t *testing.T) *capstan.Registry {
	return newRegistry(t, capstan.Tool{Name: "f", Func: func(context.Context, json.RawMessage) (any, error) { return "old", nil }})
}

// checkStatus: err is a *capstan.Error of the row's status whose message has its fragment.
func checkStatus(t *testing.T, row behaviourRow, err error) {
	t.Helper()
	var e *capstan.Error
	if !errors.As(err, &e) || e.Status.Error() != row.Status || !strings.Contains(e.Message, row.Fragment) {
		t.Fatalf("%s: want %s with %q, got %v", row.Mistake, row.Status, row.Fragment, err)
	}
}

func TestBehaviourTable(t *testing.T) {
	table := behaviourTable(t)
	reg := behaviourRegistry(t)
	goFormats := map[string]capstan.Format{
		"describe": capstan.FormatDescribe, "openai_chat": capstan.FormatOpenAIChat,
		"openai_responses": capstan.FormatOpenAIResponses, "anthropic": capstan.FormatAnthropic,
		"gemini": capstan.FormatGemini, "mcp": capstan.FormatMCP,
	}
	canonical := 0
	for _, row := range table.Formats {
		if !row.Canonical { // Go takes formats as typed constants, not names
			continue
		}
		canonical++
		if f, ok := goFormats[row.Name]; !ok || int(f) != *row.Code {
			t.Errorf("format %s: Go's constant %d, the table's %d", row.Name, f, *row.Code)
		}
	}
	if canonical != len(goFormats) {
		t.Errorf("the table has %d canonical formats, Go %d", canonical, len(goFormats))
	}
	for _, row := range table.IDs {
		calls := make([]capstan.Call, row.Index+1)
		for i := range calls {
			calls[i].Name = "f"
		}
		res, err := reg.Execute(context.Background(), calls)
		if err != nil {
			t.Fatal(err)
		}
		if res[row.Index].ID != row.ID {
			t.Errorf("call %d without an id: id %q, want %q", row.Index, res[row.Index].ID, row.ID)
		}
	}
	for _, row := range table.Errors {
		switch row.Mistake {
		case "duplicate_registration":
			checkStatus(t, row, reg.Register(capstan.Tool{Name: "f", Func: func(context.Context, json.RawMessage) (any, error) { return "new", nil }}))
			if !strings.Contains(reg.Register(addToolNamed("f")).Error(), `"f"`) {
				t.Error("the message does not name the tool")
			}
			if r := execOne(t, reg, call("1", "f", `{}`)); r.Content != "old" {
				t.Errorf("after a refused registration: %+v", r)
			}
		case "unknown_tool", "arguments_not_json", "arguments_not_object":
			c := call("a", "f", row.Arguments)
			if row.Mistake == "unknown_tool" {
				c = call("a", "nope", `{}`)
			}
			r := execOne(t, reg, c)
			if r.Outcome.String() != row.Outcome || !strings.Contains(r.Content, row.Fragment) ||
				(row.NamesTool && !strings.Contains(r.Content, "nope")) {
				t.Errorf("%s: %+v", row.Mistake, r)
			}
		case "unknown_format":
			_, err := reg.Tools(capstan.Format(99))
			checkStatus(t, row, err)
		case "provider_shaped_call": // Go's Call is typed: a provider's call JSON reaches capstan through ParseCalls
			_, err := capstan.ParseCalls(capstan.FormatDescribe, append(append([]byte{'['}, row.Call...), ']'))
			checkStatus(t, row, err)
		default:
			t.Errorf("unknown mistake %q in the table", row.Mistake)
		}
	}
}

func TestReplaceRunsTheNewHandler(t *testing.T) {
	reg := behaviourRegistry(t)
	err := reg.Register(capstan.Tool{Name: "f", Func: func(context.Context, json.RawMessage) (any, error) { return "new", nil }}, capstan.Replace())
	if err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, reg, call("1", "f", `{}`)); r.Content != "new" {
		t.Fatalf("got %+v", r)
	}
}
