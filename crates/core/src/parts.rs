//! Content parts: a tool result made of MCP content blocks (text, image,
//! audio, resource_link, resource), optionally with `structuredContent`.
//!
//! A tool hands them in as JSON (`ContentKind::Parts`): an array of blocks,
//! or an object `{"content": [...], "structuredContent": {...}}`. They are
//! checked here, once, when the call completes; a result that fails the
//! check becomes a tool error naming the part and what is wrong, and the
//! providers' renderers (`capstan_formats::providers::parts`) may then rely on every
//! block having the fields its type requires.

use base64::Engine;
use serde_json::{Map, Value};

use crate::error::Error;

/// The default bound on a result's decoded binary data (image, audio and
/// `blob` bytes together): 10 MiB (`RegistryOptions::max_result_bytes` 0).
/// cbindgen:ignore
pub const DEFAULT_MAX_RESULT_BYTES: u64 = 10 * 1024 * 1024;

/// What a block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    Text,
    Image,
    Audio,
    ResourceLink,
    Resource,
}

impl PartKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PartKind::Text => "text",
            PartKind::Image => "image",
            PartKind::Audio => "audio",
            PartKind::ResourceLink => "resource_link",
            PartKind::Resource => "resource",
        }
    }
}

/// One checked content block, kept as given (annotations and `_meta` too).
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    kind: PartKind,
    block: Value,
    /// Decoded size of its base64 data (image, audio, resource blob); 0 else.
    bytes: usize,
}

impl Part {
    pub fn kind(&self) -> PartKind {
        self.kind
    }

    /// The MCP content block as given.
    pub fn block(&self) -> &Value {
        &self.block
    }

    /// Decoded size of the part's base64 data, 0 for parts without data.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn str_at(&self, path: &[&str]) -> Option<&str> {
        let mut v = &self.block;
        for key in path {
            v = v.get(*key)?;
        }
        v.as_str()
    }

    /// A text part's text, or an embedded text resource's text.
    pub fn text(&self) -> Option<&str> {
        match self.kind {
            PartKind::Text => self.str_at(&["text"]),
            PartKind::Resource => self.str_at(&["resource", "text"]),
            _ => None,
        }
    }

    /// The base64 data of an image, audio or blob resource part.
    pub fn data(&self) -> Option<&str> {
        match self.kind {
            PartKind::Image | PartKind::Audio => self.str_at(&["data"]),
            PartKind::Resource => self.str_at(&["resource", "blob"]),
            _ => None,
        }
    }

    /// The part's MIME type (always set for image and audio parts).
    pub fn mime(&self) -> Option<&str> {
        match self.kind {
            PartKind::Resource => self.str_at(&["resource", "mimeType"]),
            _ => self.str_at(&["mimeType"]),
        }
    }

    /// The URI of a resource_link or resource part.
    pub fn uri(&self) -> Option<&str> {
        match self.kind {
            PartKind::ResourceLink => self.str_at(&["uri"]),
            PartKind::Resource => self.str_at(&["resource", "uri"]),
            _ => None,
        }
    }

    /// A resource_link's name (required by MCP), else None.
    pub fn name(&self) -> Option<&str> {
        self.str_at(&["name"])
    }

    /// How the part reads as one line of text: a text part is its text; any
    /// other part a bracketed note (see `Parts::text`).
    pub fn describe(&self) -> String {
        let mime = self.mime().unwrap_or("no MIME type");
        match self.kind {
            PartKind::Text => self.text().unwrap_or("").to_owned(),
            PartKind::Image | PartKind::Audio => {
                format!("[{}: {mime}, {} bytes]", self.kind.as_str(), self.bytes)
            }
            PartKind::ResourceLink => format!(
                "[resource_link: {} {} ({mime})]",
                self.name().unwrap_or(""),
                self.uri().unwrap_or("")
            ),
            PartKind::Resource => match self.text() {
                Some(text) => format!("[resource: {} ({mime})]\n{text}", self.uri().unwrap_or("")),
                None => format!(
                    "[resource: {} ({mime}), {} bytes]",
                    self.uri().unwrap_or(""),
                    self.bytes
                ),
            },
        }
    }

    fn cap_text(&mut self, max_chars: u32) {
        let key = match self.kind {
            PartKind::Text => "text",
            _ => return,
        };
        if let Some(Value::String(s)) = self.block.get_mut(key) {
            let text = std::mem::take(s);
            *s = crate::text::cap(text, max_chars);
        }
    }
}

/// A result's content parts and structured content, checked.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Parts {
    parts: Vec<Part>,
    structured: Option<Value>,
}

impl Parts {
    /// Reads parts as a tool returns them: JSON text of an array of MCP
    /// content blocks or of `{"content": [...], "structuredContent": {...}}`.
    /// `max_bytes` bounds the decoded base64 data of the whole result (0 =
    /// `DEFAULT_MAX_RESULT_BYTES`). Errors are `InvalidContent`, worded for
    /// the model.
    pub fn parse(text: &str, max_bytes: u64) -> Result<Parts, Error> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidContent(format!("content parts are not valid JSON: {e}")))?;
        Parts::from_value(value, max_bytes)
    }

    /// `parse` on a JSON value.
    pub fn from_value(value: Value, max_bytes: u64) -> Result<Parts, Error> {
        let bad = |m: String| Error::InvalidContent(m);
        let (blocks, structured) = match value {
            Value::Array(blocks) => (blocks, None),
            Value::Object(mut obj) => {
                let blocks = match obj.remove("content") {
                    Some(Value::Array(b)) => b,
                    None | Some(Value::Null) => Vec::new(),
                    Some(_) => {
                        return Err(bad("\"content\" must be an array of content parts".into()))
                    }
                };
                let structured = match obj.remove("structuredContent") {
                    None | Some(Value::Null) => None,
                    Some(v @ Value::Object(_)) => Some(v),
                    Some(_) => {
                        return Err(bad("\"structuredContent\" must be a JSON object".into()))
                    }
                };
                if let Some(key) = obj.keys().next() {
                    return Err(bad(format!(
                        "unknown key \"{key}\": content parts are an array of MCP content blocks \
                         or an object with \"content\" and \"structuredContent\""
                    )));
                }
                (blocks, structured)
            }
            _ => {
                return Err(bad(
                    "content parts must be an array of MCP content blocks or an object with \
                     \"content\" and \"structuredContent\""
                        .into(),
                ))
            }
        };
        let limit = if max_bytes == 0 {
            DEFAULT_MAX_RESULT_BYTES
        } else {
            max_bytes
        };
        let mut total: u64 = 0;
        let mut parts = Vec::with_capacity(blocks.len());
        for (i, block) in blocks.into_iter().enumerate() {
            let part = check_block(block, limit.saturating_sub(total))
                .map_err(|m| bad(format!("part {i}: {m}")))?;
            total += part.bytes as u64;
            parts.push(part);
        }
        Ok(Parts { parts, structured })
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The `structuredContent` object, if the tool gave one.
    pub fn structured(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    /// True if every part is a text part (or there are none).
    pub fn text_only(&self) -> bool {
        self.parts.iter().all(|p| p.kind == PartKind::Text)
    }

    /// The result's `content` text, for a consumer that reads text only:
    /// each part's `Part::describe` in order, joined by "\n" (a text part is
    /// its text; an image is `[image: image/png, 1234 bytes]`, audio
    /// `[audio: audio/wav, 1234 bytes]`, a link `[resource_link: name uri
    /// (mime)]`, an embedded resource `[resource: uri (mime)]` then its text
    /// on the next line, or `[resource: uri (mime), N bytes]` for a blob).
    /// With no parts: the structured content as compact JSON, else "".
    pub fn text(&self) -> String {
        if self.parts.is_empty() {
            return self
                .structured
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default();
        }
        let lines: Vec<String> = self.parts.iter().map(Part::describe).collect();
        lines.join("\n")
    }

    /// Caps each text part at `max_chars` characters (0 = none), as
    /// `text::cap` caps a text result. Other parts are bounded by bytes.
    pub fn cap_text(&mut self, max_chars: u32) {
        if max_chars == 0 {
            return;
        }
        for part in &mut self.parts {
            part.cap_text(max_chars);
        }
    }

    /// The blocks as MCP content (`CallToolResult.content`).
    pub fn blocks_json(&self) -> Value {
        Value::Array(self.parts.iter().map(|p| p.block.clone()).collect())
    }
}

/// The parts of an MCP `CallToolResult` (as JSON) that holds anything but
/// text blocks: `{"content", "structuredContent"}` as the server sent them,
/// for `Call::complete_parts`. None when its content is text only (the
/// result is then text, as it always was).
pub fn from_call_tool_result(value: &Value) -> Option<Value> {
    let blocks = value.get("content")?.as_array()?;
    let media = blocks
        .iter()
        .any(|b| b.get("type").and_then(Value::as_str) != Some("text"));
    if !media {
        return None;
    }
    let mut whole = Map::new();
    whole.insert("content".into(), Value::Array(blocks.clone()));
    if let Some(s @ Value::Object(_)) = value.get("structuredContent") {
        whole.insert("structuredContent".into(), s.clone());
    }
    Some(Value::Object(whole))
}

/// The MIME top-level types IANA registers.
const TOP_LEVEL: [&str; 10] = [
    "application",
    "audio",
    "font",
    "haptics",
    "image",
    "message",
    "model",
    "multipart",
    "text",
    "video",
];

/// Checks a MIME type: `type/subtype` with a registered top-level type and
/// RFC 6838 name characters, parameters allowed after `;`.
fn check_mime(mime: &str, want_top: Option<&str>) -> Result<(), String> {
    if mime.trim().is_empty() {
        return Err("\"mimeType\" is empty: give the data's MIME type, e.g. \"image/png\"".into());
    }
    let essence = mime.split(';').next().unwrap_or("").trim();
    let (top, sub) = essence.split_once('/').unwrap_or((essence, ""));
    let name_ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 127
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let top_lower = top.to_ascii_lowercase();
    if !name_ok(sub) || !TOP_LEVEL.contains(&top_lower.as_str()) {
        return Err(format!(
            "\"mimeType\" \"{mime}\" is not a known MIME type (type/subtype, e.g. \"image/png\")"
        ));
    }
    if let Some(want) = want_top {
        if top_lower != want {
            return Err(format!(
                "\"mimeType\" \"{mime}\" is not an {want} type (expected \"{want}/...\")"
            ));
        }
    }
    Ok(())
}

/// Decodes standard base64 (RFC 4648, padding optional) and returns the
/// decoded size; refuses data past `room` bytes before decoding it.
fn check_base64(data: &str, field: &str, room: u64) -> Result<usize, String> {
    let estimate = (data.len() as u64 / 4) * 3;
    if estimate > room.saturating_add(3) {
        return Err(too_big(estimate, room));
    }
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let decoded = engine
        .decode(data.trim_end_matches(['\n', '\r']))
        .map_err(|e| {
            format!("\"{field}\" is not valid base64 ({e}): encode the bytes with standard base64")
        })?;
    if decoded.len() as u64 > room {
        return Err(too_big(decoded.len() as u64, room));
    }
    Ok(decoded.len())
}

fn too_big(bytes: u64, room: u64) -> String {
    format!(
        "its data ({bytes} bytes decoded) is past the size limit of this result ({room} bytes \
         left of the registry's max_result_bytes): return a smaller or compressed file, or fewer parts"
    )
}

fn check_block(block: Value, room: u64) -> Result<Part, String> {
    let Value::Object(obj) = &block else {
        return Err("a content part must be a JSON object with a \"type\"".into());
    };
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err("\"type\" must be a string".into()),
        None => {
            return Err(
                "has no \"type\" (one of text, image, audio, resource_link, resource)".into(),
            )
        }
    };
    let string = |obj: &Map<String, Value>, key: &str, what: &str| -> Result<(), String> {
        match obj.get(key) {
            Some(Value::String(_)) => Ok(()),
            Some(_) => Err(format!("{what}: \"{key}\" must be a string")),
            None => Err(format!("{what} has no \"{key}\"")),
        }
    };
    let str_of = |obj: &Map<String, Value>, key: &str| -> String {
        obj.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (kind, bytes) = match ty {
        "text" => {
            string(obj, "text", "a text part")?;
            (PartKind::Text, 0)
        }
        "image" | "audio" => {
            let what = format!("an {ty} part");
            string(obj, "data", &what)?;
            string(obj, "mimeType", &what)?;
            check_mime(&str_of(obj, "mimeType"), Some(ty))?;
            let n = check_base64(&str_of(obj, "data"), "data", room)?;
            let kind = if ty == "image" {
                PartKind::Image
            } else {
                PartKind::Audio
            };
            (kind, n)
        }
        "resource_link" => {
            string(obj, "uri", "a resource_link part")?;
            string(obj, "name", "a resource_link part")?;
            if obj.contains_key("mimeType") {
                string(obj, "mimeType", "a resource_link part")?;
                check_mime(&str_of(obj, "mimeType"), None)?;
            }
            (PartKind::ResourceLink, 0)
        }
        "resource" => {
            let Some(Value::Object(res)) = obj.get("resource") else {
                return Err("a resource part needs a \"resource\" object with \"uri\" and \"text\" or \"blob\"".into());
            };
            string(res, "uri", "the resource")?;
            if res.contains_key("mimeType") {
                string(res, "mimeType", "the resource")?;
                check_mime(&str_of(res, "mimeType"), None)?;
            }
            let n = match (res.get("text"), res.get("blob")) {
                (Some(Value::String(_)), None) => 0,
                (None, Some(Value::String(blob))) => check_base64(blob, "resource.blob", room)?,
                _ => return Err(
                    "the resource needs exactly one of \"text\" (a string) or \"blob\" (base64)"
                        .into(),
                ),
            };
            (PartKind::Resource, n)
        }
        other => {
            return Err(format!(
                "unknown part type \"{other}\" (one of text, image, audio, resource_link, resource)"
            ))
        }
    };
    Ok(Part { kind, block, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PNG: &str = "iVBORw0KGgo="; // 8 bytes: the PNG signature

    fn err(v: Value) -> String {
        match Parts::from_value(v, 0) {
            Err(Error::InvalidContent(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parts_read_from_an_array_or_an_object() {
        let p = Parts::parse(
            &json!([{"type": "text", "text": "hi"}, {"type": "image", "data": PNG, "mimeType": "image/png"}])
                .to_string(),
            0,
        )
        .unwrap();
        assert_eq!(p.parts().len(), 2);
        assert_eq!(p.parts()[1].bytes(), 8);
        assert_eq!(p.text(), "hi\n[image: image/png, 8 bytes]");
        let p =
            Parts::from_value(json!({"content": [], "structuredContent": {"a": 1}}), 0).unwrap();
        assert_eq!(p.text(), r#"{"a":1}"#);
        assert_eq!(p.structured(), Some(&json!({"a": 1})));
    }

    #[test]
    fn text_describes_every_kind() {
        let p = Parts::from_value(
            json!([
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "mem://x", "text": "body", "mimeType": "text/plain"}},
                {"type": "resource", "resource": {"uri": "mem://y", "blob": "AAAA", "mimeType": "application/pdf"}}
            ]),
            0,
        )
        .unwrap();
        assert_eq!(
            p.text(),
            "[audio: audio/wav, 3 bytes]\n[resource_link: a file:///a.txt (text/plain)]\n\
             [resource: mem://x (text/plain)]\nbody\n[resource: mem://y (application/pdf), 3 bytes]"
        );
    }

    #[test]
    fn bad_parts_say_which_and_why() {
        let e = err(
            json!([{"type": "text", "text": "a"}, {"type": "image", "data": "!!", "mimeType": "image/png"}]),
        );
        assert!(e.starts_with("part 1: \"data\" is not valid base64"), "{e}");
        let e = err(json!([{"type": "image", "data": PNG, "mimeType": ""}]));
        assert!(e.contains("\"mimeType\" is empty"), "{e}");
        let e = err(json!([{"type": "image", "data": PNG, "mimeType": "picture/png"}]));
        assert!(e.contains("not a known MIME type"), "{e}");
        let e = err(json!([{"type": "image", "data": PNG, "mimeType": "audio/wav"}]));
        assert!(e.contains("not an image type"), "{e}");
        let e = err(json!([{"type": "video", "data": PNG}]));
        assert!(e.contains("unknown part type \"video\""), "{e}");
        let e = err(json!([{"text": "x"}]));
        assert!(e.contains("has no \"type\""), "{e}");
        let e = err(json!(["x"]));
        assert!(e.contains("must be a JSON object"), "{e}");
        let e = err(json!([{"type": "resource_link", "uri": "x"}]));
        assert!(e.contains("has no \"name\""), "{e}");
        let e = err(
            json!([{"type": "resource", "resource": {"uri": "x", "text": "a", "blob": "AAAA"}}]),
        );
        assert!(e.contains("exactly one of"), "{e}");
        let e = err(json!({"content": [], "extra": 1}));
        assert!(e.contains("unknown key \"extra\""), "{e}");
        let e = err(json!({"structuredContent": [1]}));
        assert!(e.contains("must be a JSON object"), "{e}");
        assert!(err(json!("x")).contains("must be an array"));
        assert!(matches!(
            Parts::parse("[", 0),
            Err(Error::InvalidContent(_))
        ));
    }

    #[test]
    fn decoded_bytes_are_bounded_per_result() {
        let four = json!({"type": "image", "data": "AAAAAA==", "mimeType": "image/png"}); // 4 bytes
        assert!(Parts::from_value(json!([four.clone(), four.clone()]), 8).is_ok());
        let e = match Parts::from_value(json!([four.clone(), four.clone(), four]), 8) {
            Err(Error::InvalidContent(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(
            e.starts_with("part 2:") && e.contains("past the size limit"),
            "{e}"
        );
        // Refused before decoding when the text alone says it is too big.
        let big = "A".repeat(4000);
        let e = Parts::from_value(
            json!([{"type": "audio", "data": big, "mimeType": "audio/wav"}]),
            100,
        )
        .unwrap_err();
        assert!(e.to_string().contains("3000 bytes decoded"), "{e}");
    }

    #[test]
    fn the_cap_applies_to_text_parts_only() {
        let mut p = Parts::from_value(
            json!([{"type": "text", "text": "abcdef"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]),
            0,
        )
        .unwrap();
        p.cap_text(3);
        assert_eq!(
            p.text(),
            "abc\n[truncated: 3 more characters]\n[image: image/png, 8 bytes]"
        );
        assert_eq!(p.parts()[1].data(), Some(PNG));
    }

    #[test]
    fn mime_parameters_and_case_are_accepted() {
        assert!(check_mime("text/plain; charset=utf-8", None).is_ok());
        assert!(check_mime("Image/PNG", Some("image")).is_ok());
        assert!(check_mime("image/", Some("image")).is_err());
    }
}
