package capstan

// Content parts (CAPSTAN_CONTENT_PARTS): a tool returns text, images, audio
// and files, and capstan sends them to the model as each provider takes
// them.

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// Part is one piece of a tool's result: made by Text, Image, Audio or
// File. It is an MCP content block in JSON.
type Part struct {
	kind string // "text", "image", "audio", "resource"
	text string
	data []byte
	mime string
	name string
}

// Text is a text part.
func Text(s string) Part { return Part{kind: "text", text: s} }

// Image is an image part: its bytes and MIME type (image/png, image/jpeg,
// image/gif and image/webp reach every provider).
func Image(data []byte, mime string) Part { return Part{kind: "image", data: data, mime: mime} }

// Audio is an audio part (audio/wav, audio/mpeg: OpenAI Chat and MCP take
// them; for a provider that does not, the model reads a line saying it was
// left out).
func Audio(data []byte, mime string) Part { return Part{kind: "audio", data: data, mime: mime} }

// File is a file part, an embedded resource file:///name with its bytes
// (application/pdf reaches every provider as a document). A MIME type
// audio/... makes it an Audio part.
func File(data []byte, mime, name string) Part {
	if strings.HasPrefix(mime, "audio/") {
		return Audio(data, mime)
	}
	return Part{kind: "resource", data: data, mime: mime, name: name}
}

// MarshalJSON writes the part as an MCP content block.
func (p Part) MarshalJSON() ([]byte, error) {
	b := []byte(`{"type":`)
	b = strconv.AppendQuote(b, p.kind) // kinds are ASCII
	switch p.kind {
	case "text":
		b = append(b, `,"text":`...)
		b = appendString(b, p.text)
	case "resource":
		b = append(b, `,"resource":{"uri":`...)
		b = appendString(b, "file:///"+p.name)
		b = append(b, `,"mimeType":`...)
		b = appendString(b, p.mime)
		b = append(b, `,"blob":"`...)
		b = base64.StdEncoding.AppendEncode(b, p.data)
		b = append(b, `"}`...)
	default:
		b = append(b, `,"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, p.data)
		b = append(b, `","mimeType":`...)
		b = appendString(b, p.mime)
	}
	return append(b, '}'), nil
}

// Parts is a tool result made of parts, e.g.
//
//	return capstan.Parts{capstan.Text("the screen, 640x480"), capstan.Image(png, "image/png")}, nil
//
// capstan checks them when the call completes (base64, MIME types, the
// registry's bound on their bytes, 10 MiB by default): parts that fail end
// the call as a tool error naming the part and why. The result's Content is
// their text (each text part, and a line such as [image: image/png, 1234
// bytes] for the others); its Parts holds the blocks, which FormatResults
// and RunTurn send as the provider takes them. A tool's MaxOutputChars caps
// each text part.
type Parts []Part

// Content is a result of parts with structured content (MCP's
// structuredContent, for a tool with an output schema): Structured is
// encoded with encoding/json and must be a JSON object. With no Parts the
// result's text is Structured as compact JSON.
type Content struct {
	Parts      []Part
	Structured any
}

// partsJSON renders a tool's Parts or Content as what capstan_call_return
// takes.
func partsJSON(v any) (send []byte, err error) {
	var parts []Part
	var structured json.RawMessage
	switch c := v.(type) {
	case Parts:
		parts = c
	case Content:
		parts = c.Parts
		if c.Structured != nil {
			if structured, err = json.Marshal(c.Structured); err != nil {
				return nil, err
			}
		}
	}
	if parts == nil {
		parts = []Part{}
	}
	blocks, err := json.Marshal(parts)
	if err != nil {
		return nil, err
	}
	if structured == nil {
		return blocks, nil
	}
	send = append([]byte(`{"content":`), blocks...)
	send = append(send, `,"structuredContent":`...)
	send = append(send, structured...)
	return append(send, '}'), nil
}
