package capstan_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

var (
	png = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 40)...)
	pdf = []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
)

func screenshotTool() capstan.Tool {
	return capstan.Tool{Name: "screenshot", Func: func(context.Context, json.RawMessage) (any, error) {
		return capstan.Parts{capstan.Text("the screen, 640x480"), capstan.Image(png, "image/png")}, nil
	}}
}

func reportTool() capstan.Tool { // a plain []Part works as Parts
	return capstan.Tool{Name: "report", Func: func(context.Context, json.RawMessage) (any, error) {
		return []capstan.Part{capstan.File(pdf, "application/pdf", "report.pdf")}, nil
	}}
}

type block struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Resource *struct {
		URI, MimeType, Blob string
	} `json:"resource"`
}

func blocks(t *testing.T, raw json.RawMessage) []block {
	t.Helper()
	var b []block
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("parts %s: %v", raw, err)
	}
	return b
}

func TestToolReturnsTextAndImageParts(t *testing.T) {
	reg := newRegistry(t, screenshotTool(), reportTool())
	res, err := reg.Execute(context.Background(), []capstan.Call{call("c1", "screenshot", `{}`), call("c2", "report", `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != capstan.OutcomeOK || res[0].Content != "the screen, 640x480\n[image: image/png, 48 bytes]" {
		t.Fatalf("screenshot: %+v", res[0])
	}
	b := blocks(t, res[0].Parts)
	if len(b) != 2 || b[0].Type != "text" || b[0].Text != "the screen, 640x480" || b[1].Type != "image" ||
		b[1].MimeType != "image/png" || b[1].Data != base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("screenshot parts %s", res[0].Parts)
	}
	f := blocks(t, res[1].Parts)
	if len(f) != 1 || f[0].Type != "resource" || f[0].Resource == nil || f[0].Resource.URI != "file:///report.pdf" ||
		f[0].Resource.MimeType != "application/pdf" || f[0].Resource.Blob != base64.StdEncoding.EncodeToString(pdf) {
		t.Fatalf("report parts %s", res[1].Parts)
	}
	if !strings.HasPrefix(res[1].Content, "[resource: file:///report.pdf (application/pdf)") {
		t.Fatalf("report content %q", res[1].Content)
	}
	// The results as JSON carry the parts, so FormatResults sends the image.
	msgs, err := capstan.FormatResults(capstan.FormatAnthropic, res[:1])
	if err != nil {
		t.Fatal(err)
	}
	var anthropic struct { // one user message holding the tool_result blocks
		Role    string
		Content []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   []struct {
				Type   string
				Text   string
				Source struct{ Type, MediaType, Data string } `json:"source"`
			} `json:"content"`
		}
	}
	if err := json.Unmarshal(msgs, &anthropic); err != nil || anthropic.Role != "user" || len(anthropic.Content) != 1 {
		t.Fatalf("anthropic %s (%v)", msgs, err)
	}
	tr := anthropic.Content[0]
	if tr.Type != "tool_result" || tr.ToolUseID != "c1" || len(tr.Content) != 2 || tr.Content[1].Type != "image" ||
		tr.Content[1].Source.Type != "base64" || tr.Content[1].Source.Data != base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("anthropic tool_result %s", msgs)
	}
}

func TestRunTurnSendsImagesAsEachProviderTakesThem(t *testing.T) {
	reg := newRegistry(t, screenshotTool())
	pngB64 := base64.StdEncoding.EncodeToString(png)
	for _, tc := range []struct {
		format   capstan.Format
		response string
		want     []string // in the messages, in order
	}{
		{capstan.FormatOpenAIChat, `{"choices":[{"message":{"role":"assistant","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"screenshot","arguments":"{}"}}]}}]}`,
			[]string{`"role":"tool"`, `"tool_call_id":"c1"`, `"role":"user"`, `"type":"image_url"`, `"url":"data:image/png;base64,` + pngB64}},
		{capstan.FormatOpenAIResponses, `{"output":[{"type":"function_call","call_id":"c1","name":"screenshot","arguments":"{}"}]}`,
			[]string{`"type":"function_call_output"`, `"type":"input_image"`, `"image_url":"data:image/png;base64,` + pngB64}},
		{capstan.FormatGemini, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"screenshot","args":{}}}]}}]}`,
			[]string{`"functionResponse"`, `"inlineData"`, `"mimeType":"image/png"`, `"data":"` + pngB64}},
	} {
		msgs, err := reg.RunTurn(context.Background(), tc.format, []byte(tc.response))
		if err != nil {
			t.Fatalf("format %d: %v", tc.format, err)
		}
		rest := string(msgs)
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Fatalf("format %d: %s lacks %s (after what came before)", tc.format, msgs, w)
			}
			rest = rest[i+len(w):]
		}
	}
}

func TestBadPartsEndTheCallAsAToolError(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "broken", Func: func(context.Context, json.RawMessage) (any, error) {
		return capstan.Parts{capstan.Image(png, "png")}, nil
	}})
	r := execOne(t, reg, call("1", "broken", `{}`))
	if r.Outcome != capstan.OutcomeToolError || !strings.Contains(r.Content, "png") || r.Parts != nil {
		t.Fatalf("%+v", r)
	}
}

func TestStructuredContent(t *testing.T) {
	reg := newRegistry(t, capstan.Tool{Name: "stats", Func: func(context.Context, json.RawMessage) (any, error) {
		return capstan.Content{Structured: map[string]int{"rows": 3}}, nil
	}})
	r := execOne(t, reg, call("1", "stats", `{}`))
	if r.Outcome != capstan.OutcomeOK || r.Content != `{"rows":3}` || string(r.Structured) != `{"rows":3}` {
		t.Fatalf("%+v", r)
	}
	msgs, err := capstan.FormatResults(capstan.FormatMCP, []capstan.Result{r})
	if err != nil || !bytes.Contains(msgs, []byte(`"structuredContent":{"rows":3}`)) {
		t.Fatalf("mcp %s (%v)", msgs, err)
	}
}

// Result.Parts are capstan's parts (capstan_result.parts_json), capped as
// the text capstan made of them: Content must equal their text parts
// joined.
func TestPartsTextIsCappedAsCapstanCapsIt(t *testing.T) {
	texts := []string{"short", "exactly8", "abcdefghij", strings.Repeat("ü", 12), "€€€€€€€€€\u00e9x", "日本語のテキストです"}
	tool := capstan.Tool{Name: "long", MaxOutputChars: 8, Func: func(context.Context, json.RawMessage) (any, error) {
		var p capstan.Parts
		for _, s := range texts {
			p = append(p, capstan.Text(s))
		}
		return p, nil
	}}
	reg := newRegistry(t, tool)
	r := execOne(t, reg, call("1", "long", `{}`))
	var kept []string
	for _, b := range blocks(t, r.Parts) {
		kept = append(kept, b.Text)
	}
	if r.Outcome != capstan.OutcomeOK || r.Content != strings.Join(kept, "\n") {
		t.Fatalf("capstan's text:\n%q\nthe parts' text:\n%q", r.Content, strings.Join(kept, "\n"))
	}
	if !strings.Contains(r.Content, "abcdefgh\n[truncated: 2 more characters]") {
		t.Fatalf("no cap at all? %q", r.Content)
	}
}

// Each result gets its own call's parts, whichever thread completes it:
// goroutines (a batch within its limit), pool threads (a bigger batch),
// the caller's thread (a lone call).
func TestEachResultGetsItsOwnParts(t *testing.T) {
	reg := newRegistry(t, capstan.Func("picture", "", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (capstan.Parts, error) {
		return capstan.Parts{capstan.Text(strconvItoa(in.N)), capstan.Image(bytes.Repeat([]byte{byte(in.N)}, in.N+1), "image/png")}, nil
	}))
	for _, n := range []int{1, 8, 64} {
		calls := make([]capstan.Call, n)
		for i := range calls {
			calls[i] = call("c"+strconvItoa(i), "picture", `{"n":`+strconvItoa(i)+`}`)
		}
		res, err := reg.Execute(context.Background(), calls, capstan.WithLimit(8))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			b := blocks(t, r.Parts)
			if r.Outcome != capstan.OutcomeOK || len(b) != 2 || b[0].Text != strconvItoa(i) ||
				b[1].Data != base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(i)}, i+1)) {
				t.Fatalf("batch of %d, call %d: %+v", n, i, r)
			}
		}
	}
}

func TestPartsAreMCPContentBlocks(t *testing.T) {
	for _, tc := range []struct {
		part capstan.Part
		want string
	}{
		{capstan.Text("hé \"x\""), `{"type":"text","text":"hé \"x\""}`},
		{capstan.Image([]byte{1, 2}, "image/gif"), `{"type":"image","data":"AQI=","mimeType":"image/gif"}`},
		{capstan.Audio([]byte{3}, "audio/wav"), `{"type":"audio","data":"Aw==","mimeType":"audio/wav"}`},
		{capstan.File([]byte{3}, "audio/mpeg", "a.mp3"), `{"type":"audio","data":"Aw==","mimeType":"audio/mpeg"}`},
		{capstan.File([]byte("%PDF"), "application/pdf", "r.pdf"),
			`{"type":"resource","resource":{"uri":"file:///r.pdf","mimeType":"application/pdf","blob":"JVBERg=="}}`},
	} {
		got, err := json.Marshal(tc.part)
		if err != nil || string(got) != tc.want {
			t.Errorf("got %s (%v), want %s", got, err, tc.want)
		}
	}
}

// A submitted batch's results carry the tool's parts and structured content
// as capstan hands them over with the result (capstan_result.parts_json,
// structured_json), on the Results channel and from Wait.
func TestSubmittedBatchResultCarriesTheImagePart(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	reg := newRegistry(t, capstan.Tool{Name: "shot", Func: func(context.Context, json.RawMessage) (any, error) {
		return capstan.Content{Parts: capstan.Parts{capstan.Text("a screen"), capstan.Image(png, "image/png")},
			Structured: map[string]int{"w": 640}}, nil
	}})
	b, err := reg.Submit(context.Background(), []capstan.Call{call("s1", "shot", `{}`), call("s2", "shot", `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for r := range b.Results() {
		bl := blocks(t, r.Parts)
		if r.Outcome != capstan.OutcomeOK || len(bl) != 2 || bl[1].Type != "image" ||
			bl[1].Data != base64.StdEncoding.EncodeToString(png) || bl[1].MimeType != "image/png" ||
			string(r.Structured) != `{"w":640}` {
			t.Fatalf("result %+v (parts %s)", r, r.Parts)
		}
		if got++; got == 2 {
			break
		}
	}
	res, err := b.Wait(context.Background())
	if err != nil || len(res) != 2 || len(blocks(t, res[0].Parts)) != 2 {
		t.Fatalf("Wait: %+v (%v)", res, err)
	}
}
