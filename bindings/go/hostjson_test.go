package capstan

// The host batch's JSON scan (hostjson.go) reads what encoding/json reads,
// and gives up (falling back to encoding/json) on what it does not know.

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

var scanTexts = []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\r", "\u2603 snow é", "\x01 control", "</script>&", `\u0041`, "emoji \U0001F600"}

func TestScanResultsReadsWhatEncodingJSONReads(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pick := func() string { return scanTexts[rng.Intn(len(scanTexts))] }
	raws := []json.RawMessage{nil, json.RawMessage(`[{"type":"text","text":"a \"b\" ]}"}]`), json.RawMessage(`{"x":[1,{"y":null}],"z":"}"}`), json.RawMessage(`3`), json.RawMessage(`"s"`)}
	var want []Result
	for i := range 300 {
		r := Result{Index: i, ID: pick(), Name: pick(), Content: pick(), Outcome: Outcome(rng.Intn(len(outcomeNames))),
			Duration: time.Duration(rng.Intn(1e9)) * time.Microsecond, Parts: raws[rng.Intn(len(raws))], Structured: raws[rng.Intn(len(raws))]}
		want = append(want, r)
	}
	text, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanResults(text, len(want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("result %d:\n got %+v\nwant %+v", i, got[i], want[i])
			}
		}
	}
	// White space and keys it does not know, as capstan may write later.
	spaced := []byte(` [ { "id" : "a" , "later" : {"k":[1,2]} , "name":"n","content":"c","is_error":false,"outcome":"denied","duration_us":7 } ] `)
	got, err = scanResults(spaced, 1)
	if err != nil || !reflect.DeepEqual(got[0], Result{ID: "a", Name: "n", Content: "c", Outcome: OutcomeDenied, Duration: 7 * time.Microsecond}) {
		t.Fatalf("spaced: %+v %v", got, err)
	}
}

func TestScanUnescapesEveryJSONEscape(t *testing.T) {
	text := []byte(`[{"id":"a\/b\b\f\"\\\n\r\t","name":"\u00e9\ud83d\ude00","content":"{\"k\":\"v\"}","outcome":"ok"}]`)
	got, err := scanResults(text, 1)
	if err != nil || got[0].ID != "a/b\b\f\"\\\n\r\t" || got[0].Name != "é\U0001F600" || got[0].Content != `{"k":"v"}` {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestScanFallsBackOnWhatItDoesNotKnow(t *testing.T) {
	// A number it does not read (a fraction) and an unknown outcome:
	// encoding/json decides (the first reads, the second fails).
	frac := []byte(`[{"id":"a","name":"n","content":"c","outcome":"ok","duration_us":1.5}]`)
	if _, err := scanResults(frac, 1); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("fraction: %v", err)
	}
	bad := []byte(`[{"id":"a","outcome":"maybe"}]`)
	if _, err := scanResults(bad, 1); err == nil {
		t.Error("an unknown outcome was read")
	}
	if _, err := scanResults([]byte(`[{"id":"a"}`), 1); err == nil {
		t.Error("a truncated array was read")
	}
	if _, err := scanResults([]byte(`[{"id":"a"}]`), 2); err == nil {
		t.Error("too few results were read")
	}
}

func TestScanHandedReadsWhatEncodingJSONReads(t *testing.T) {
	var want []handedCall
	for i, s := range scanTexts {
		want = append(want, handedCall{Index: i * 37, ID: s, Name: "tool_" + s, Arguments: json.RawMessage(`{"s":` + string(mustJSON(s)) + `,"n":[1,{"d":"]"}]}`)})
	}
	text, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanHanded(text)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v\nwant %+v", got, err, want)
	}
	if got, err := scanHanded([]byte(`[]`)); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	if _, err := scanHanded([]byte(`[{"index":1,`)); err == nil {
		t.Fatal("a truncated array was read")
	}
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func TestScanGuardTurnsAPanicIntoAnError(t *testing.T) {
	s := scanner{b: []byte(`[]`)}
	s.guard(func() { _ = s.b[5] })
	if s.err == nil {
		t.Fatal("a panic in the scan was not turned into an error")
	}
}
