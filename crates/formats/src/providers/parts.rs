//! Content parts (`capstan_core::parts`) as each provider takes them in a tool
//! result. A part a provider cannot take becomes a text part saying what was
//! left out and why: never a silent drop, never a request it would refuse.
//!
//! | part | openai_responses | openai_chat | anthropic | gemini | mcp |
//! |---|---|---|---|---|---|
//! | text | input_text | tool message text | text block | in response.output | as given |
//! | image png/jpeg/gif/webp | input_image (data URL) | image_url in the user message after the tool messages | image block (base64) | parts[].inlineData (gif: note) | as given |
//! | audio | note | wav/mp3: input_audio in that user message; else note | note | note | as given |
//! | PDF (resource blob) | input_file (data URL) | file in that user message | document block (base64) | parts[].inlineData | as given |
//! | text resource | input_text | tool message text | text block | in response.output | as given |
//! | resource_link | input_text naming it | tool message text | text block | in response.output | as given |

use serde_json::{json, Map, Value};

use capstan_core::call::ToolResult;
use capstan_core::parts::{Part, PartKind};

/// Images the OpenAI APIs and Anthropic take.
const WEB_IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// What Gemini 3 takes in a multimodal function response.
const GEMINI_MEDIA: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "application/pdf",
    "text/plain",
];

fn essence(mime: Option<&str>) -> String {
    mime.unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn data_url(part: &Part) -> String {
    format!(
        "data:{};base64,{}",
        essence(part.mime()),
        part.data().unwrap_or("")
    )
}

/// The text that replaces a part `provider` cannot take.
pub(crate) fn left_out(part: &Part, provider: &str, why: &str) -> String {
    let mime = part.mime().unwrap_or("no MIME type");
    let what = match part.kind() {
        PartKind::Image | PartKind::Audio => {
            format!("{} ({mime}, {} bytes)", part.kind().as_str(), part.bytes())
        }
        _ => format!(
            "{} {} ({mime}, {} bytes)",
            part.kind().as_str(),
            part.uri().unwrap_or(""),
            part.bytes()
        ),
    };
    format!("[left out: {what}: {provider} {why}]")
}

/// How a part reads as text for a provider that takes it as text.
fn as_text(part: &Part) -> String {
    part.describe()
}

/// What a provider does with one part.
enum Rendered {
    Text(String),
    Media(Value),
}

fn render_each(r: &ToolResult, mut each: impl FnMut(&Part) -> Rendered) -> Vec<Rendered> {
    match &r.parts {
        Some(parts) if !parts.parts().is_empty() => parts.parts().iter().map(&mut each).collect(),
        // No parts (structuredContent alone): the content text, its JSON.
        _ => vec![Rendered::Text(r.content.clone())],
    }
}

/// OpenAI Responses: `function_call_output.output` as an array of
/// `input_text` / `input_image` / `input_file` (the OpenAPI spec's
/// `FunctionCallOutputItemParam`). Results without parts keep a string.
pub(crate) fn openai_responses_output(r: &ToolResult) -> Value {
    let Some(parts) = &r.parts else {
        return json!(r.content);
    };
    let mut out = Vec::with_capacity(parts.parts().len());
    for part in parts.parts() {
        let mime = essence(part.mime());
        let item = match part.kind() {
            PartKind::Image if WEB_IMAGES.contains(&mime.as_str()) => {
                json!({"type": "input_image", "image_url": data_url(part), "detail": "auto"})
            }
            PartKind::Resource if part.data().is_some() && mime == "application/pdf" => {
                json!({"type": "input_file", "filename": file_name(part, &r.id), "file_data": data_url(part)})
            }
            PartKind::Image => input_text(left_out(
                part,
                "OpenAI",
                "takes PNG, JPEG, GIF and WebP images only",
            )),
            PartKind::Audio => input_text(left_out(
                part,
                "OpenAI Responses",
                "takes no audio in a function call output",
            )),
            PartKind::Resource if part.data().is_some() => input_text(left_out(
                part,
                "OpenAI Responses",
                "takes PDF files only in a function call output",
            )),
            _ => input_text(as_text(part)),
        };
        out.push(item);
    }
    if out.is_empty() {
        out.push(input_text(r.content.clone()));
    }
    Value::Array(out)
}

fn input_text(text: String) -> Value {
    json!({"type": "input_text", "text": text})
}

/// A file name for a part: the last segment of its URI, else `<call id>.pdf`.
fn file_name(part: &Part, call_id: &str) -> String {
    part.uri()
        .and_then(|u| u.rsplit('/').next())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{call_id}.pdf"))
}

/// OpenAI Chat: the text of each tool message (parts sent in the user
/// message named as such), and the content of the one `user` message that
/// follows the tool messages with the media, if any.
pub(crate) fn openai_chat(results: &[ToolResult]) -> (Vec<String>, Option<Value>) {
    let mut texts = Vec::with_capacity(results.len());
    let mut media: Vec<Value> = Vec::new();
    for r in results {
        let mut mine: Vec<Value> = Vec::new();
        let lines = render_each(r, |part| {
            let mime = essence(part.mime());
            let media = match part.kind() {
                PartKind::Image if WEB_IMAGES.contains(&mime.as_str()) => {
                    Some(json!({"type": "image_url", "image_url": {"url": data_url(part)}}))
                }
                PartKind::Audio => audio_format(&mime).map(|format| {
                    json!({"type": "input_audio", "input_audio": {"data": part.data().unwrap_or(""), "format": format}})
                }),
                PartKind::Resource if part.data().is_some() && mime == "application/pdf" => Some(
                    json!({"type": "file", "file": {"filename": file_name(part, &r.id), "file_data": data_url(part)}}),
                ),
                _ => None,
            };
            match media {
                Some(m) => Rendered::Media(m),
                None => match part.kind() {
                    PartKind::Image => Rendered::Text(left_out(
                        part,
                        "OpenAI",
                        "takes PNG, JPEG, GIF and WebP images only",
                    )),
                    PartKind::Audio => Rendered::Text(left_out(
                        part,
                        "OpenAI Chat",
                        "takes WAV and MP3 audio only",
                    )),
                    PartKind::Resource if part.data().is_some() => {
                        Rendered::Text(left_out(part, "OpenAI Chat", "takes PDF files only"))
                    }
                    _ => Rendered::Text(as_text(part)),
                },
            }
        });
        let mut text = Vec::new();
        for item in lines {
            match item {
                Rendered::Text(t) => text.push(t),
                Rendered::Media(m) => {
                    mine.push(m);
                    text.push(format!(
                        "[{} sent in the next user message]",
                        mine.last()
                            .and_then(|m| m.get("type"))
                            .and_then(Value::as_str)
                            .unwrap_or("part")
                    ));
                }
            }
        }
        if !mine.is_empty() {
            media.push(json!({"type": "text", "text": format!(
                "Content returned by tool call {} ({}):", r.id, r.name
            )}));
            media.append(&mut mine);
        }
        texts.push(text.join("\n"));
    }
    let user = (!media.is_empty()).then(|| json!({"role": "user", "content": media}));
    (texts, user)
}

fn audio_format(mime: &str) -> Option<&'static str> {
    match mime {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

/// Anthropic: `tool_result.content` blocks (text, image with a base64
/// source, document for a PDF), or the string for a result without parts.
pub(crate) fn anthropic_content(r: &ToolResult) -> Value {
    if r.parts.is_none() {
        return json!(r.content);
    }
    let blocks: Vec<Value> = render_each(r, |part| {
        let mime = essence(part.mime());
        match part.kind() {
            PartKind::Image if WEB_IMAGES.contains(&mime.as_str()) => Rendered::Media(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime, "data": part.data().unwrap_or("")}
            })),
            PartKind::Resource if part.data().is_some() && mime == "application/pdf" => {
                Rendered::Media(json!({
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": part.data().unwrap_or("")}
                }))
            }
            PartKind::Image => Rendered::Text(left_out(
                part,
                "Anthropic",
                "takes JPEG, PNG, GIF and WebP images only",
            )),
            PartKind::Audio => Rendered::Text(left_out(
                part,
                "Anthropic",
                "takes no audio in a tool result",
            )),
            PartKind::Resource if part.data().is_some() => Rendered::Text(left_out(
                part,
                "Anthropic",
                "takes PDF documents only in a tool result",
            )),
            _ => Rendered::Text(as_text(part)),
        }
    })
    .into_iter()
    .filter_map(|item| match item {
        Rendered::Text(t) if t.is_empty() => None,
        Rendered::Text(t) => Some(json!({"type": "text", "text": t})),
        Rendered::Media(m) => Some(m),
    })
    .collect();
    if blocks.is_empty() {
        return json!(r.content);
    }
    Value::Array(blocks)
}

/// Gemini: the text for `response.output` (text parts, and a note for
/// each part sent in `parts` or left out) and the `functionResponse.parts`
/// (`inlineData` blobs, Gemini 3's multimodal function response).
pub(crate) fn gemini(r: &ToolResult) -> (String, Vec<Value>) {
    let mut blobs = Vec::new();
    let mut text = Vec::new();
    for item in render_each(r, |part| {
        let mime = essence(part.mime());
        let has_data = part.data().is_some();
        if has_data && GEMINI_MEDIA.contains(&mime.as_str()) {
            return Rendered::Media(
                json!({"inlineData": {"mimeType": mime, "data": part.data().unwrap_or("")}}),
            );
        }
        if has_data {
            return Rendered::Text(left_out(
                part,
                "Gemini",
                "takes PNG, JPEG and WebP images, PDF and plain text only in a function response",
            ));
        }
        Rendered::Text(as_text(part))
    }) {
        match item {
            Rendered::Text(t) => text.push(t),
            Rendered::Media(m) => {
                let mime = m["inlineData"]["mimeType"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                blobs.push(m);
                text.push(format!("[{mime} attached as part {}]", blobs.len() - 1));
            }
        }
    }
    (text.join("\n"), blobs)
}

/// MCP: the blocks as given, and the structured content.
pub(crate) fn mcp(r: &ToolResult, m: &mut Map<String, Value>) -> bool {
    let Some(parts) = &r.parts else {
        return false;
    };
    let blocks = parts.blocks_json();
    m.insert("content".into(), blocks);
    if let Some(s) = parts.structured() {
        m.insert("structuredContent".into(), s.clone());
    }
    true
}
