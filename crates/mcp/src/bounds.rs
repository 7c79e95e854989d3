//! What a mounted server's answers may make capstan hold (issue #29): the
//! content blocks of a tool result, and the tools of a `tools/list`.
//!
//! A tool result is bounded before rmcp reads it whole: rmcp reads every
//! answer through an untagged enum, which buffers the whole message as a
//! tree and tries each result type in turn (a 15 MB result of 500,000 empty
//! text blocks held ~350 MB). Here the blocks are first seen as borrowed
//! slices of the line: past `MAX_RESULT_BLOCKS` blocks or the registry's
//! `max_result_bytes` of text, the answer is rewritten with the blocks that
//! fit and a last text block saying what was cut.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use capstan_core::text::json_len;

/// Content blocks a mounted server's tool result keeps at most (the last of
/// them the note saying what was cut).
pub const MAX_RESULT_BLOCKS: usize = 1000;

/// Pages of `tools/list` followed at most in one listing.
pub const MAX_LIST_PAGES: usize = 1000;

/// Tools one listing may hold.
pub const MAX_LISTED_TOOLS: usize = 10_000;

/// Bytes of kept tool definitions (names, descriptions, schemas as JSON)
/// one listing may hold.
pub const MAX_LISTING_BYTES: usize = 16 * 1024 * 1024;

/// A tool's description (or title) is cut to this many characters.
pub const MAX_DESCRIPTION_CHARS: u32 = 16 * 1024;

/// A tool's `inputSchema`, as JSON, is at most this long: past it the tool
/// is not mounted.
pub const MAX_SCHEMA_BYTES: usize = 1024 * 1024;

/// A tool name (remote) longer than this is refused without being kept
/// whole: no registry name is longer than 64 characters.
const MAX_NAME_BYTES: usize = 256;

/// How the note capstan adds to a result it cut starts (so a result cut
/// once is not cut again).
const CUT_NOTE: &str = "[capstan cut this result: ";

/// The first `MAX_RESULT_BLOCKS` blocks as slices of the input, and how
/// many there were in all.
#[derive(Default)]
struct Blocks<'a> {
    kept: Vec<&'a RawValue>,
    total: usize,
}

impl<'de: 'a, 'a> Deserialize<'de> for Blocks<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Seq<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Seq<'a> {
            type Value = Blocks<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of content blocks")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Blocks<'a>, A::Error> {
                let mut blocks = Blocks::default();
                while blocks.kept.len() <= MAX_RESULT_BLOCKS {
                    match seq.next_element::<&'de RawValue>()? {
                        Some(block) => blocks.kept.push(block),
                        None => {
                            blocks.total = blocks.kept.len();
                            return Ok(blocks);
                        }
                    }
                }
                blocks.total = blocks.kept.len();
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    blocks.total += 1;
                }
                Ok(blocks)
            }
        }
        deserializer.deserialize_seq(Seq(std::marker::PhantomData))
    }
}

/// A `CallToolResult` as far as bounding needs it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolResult<'a> {
    #[serde(borrow)]
    content: Option<Blocks<'a>>,
    #[serde(borrow)]
    structured_content: Option<&'a RawValue>,
    #[serde(borrow)]
    is_error: Option<&'a RawValue>,
    #[serde(borrow, rename = "_meta")]
    meta: Option<&'a RawValue>,
    #[serde(borrow)]
    result_type: Option<&'a RawValue>,
}

/// One block, as far as its text goes.
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    resource: Option<Resource<'a>>,
}

#[derive(Deserialize)]
struct Resource<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    blob: Option<IgnoredAny>,
}

/// What a block costs against `max_result_bytes` here: a text block its
/// text, an embedded text resource its text, image, audio and blob parts
/// nothing (their decoded data is bounded by the same `max_result_bytes` when
/// the parts are checked, `capstan_core::parts`), anything else its JSON.
fn cost(raw: &RawValue) -> (usize, Option<Cow<'_, str>>) {
    let Ok(block) = serde_json::from_str::<Block>(raw.get()) else {
        return (raw.get().len(), None);
    };
    match block.kind.as_deref() {
        Some("text") => match block.text {
            Some(text) => (text.len(), Some(text)),
            None => (raw.get().len(), None),
        },
        Some("image") | Some("audio") => (0, None),
        Some("resource") => match block.resource {
            Some(Resource {
                text: Some(text), ..
            }) => (text.len(), None),
            Some(Resource { blob: Some(_), .. }) => (0, None),
            _ => (raw.get().len(), None),
        },
        _ => (raw.get().len(), None),
    }
}

/// The longest prefix of `text` of at most `bytes` bytes on a character boundary.
fn prefix(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Bounds a tool result given as JSON text (the `result` of a `tools/call`
/// answer): None if it is within the bounds (or is not a tool result with
/// content), else the result rewritten: at most `MAX_RESULT_BLOCKS` blocks
/// and `max_bytes` bytes of text (see `cost`; `structuredContent` counted
/// as its JSON), the last block a note saying what was cut.
pub fn bound_tool_result(result: &str, max_bytes: u64) -> Option<String> {
    bound_parsed(serde_json::from_str(result).ok()?, max_bytes)
}

fn bound_parsed(parsed: ToolResult, max_bytes: u64) -> Option<String> {
    let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut blocks = parsed.content.unwrap_or_default();
    // A note of capstan's own from an earlier cut does not count.
    let noted = blocks.kept.last().is_some_and(|b| {
        serde_json::from_str::<Block>(b.get())
            .ok()
            .and_then(|b| b.text)
            .is_some_and(|t| t.starts_with(CUT_NOTE))
    });
    if noted && blocks.total == blocks.kept.len() && blocks.total <= MAX_RESULT_BLOCKS {
        blocks.kept.pop();
        blocks.total -= 1;
    }
    let structured = parsed.structured_content.map_or(0, |s| s.get().len());
    let mut budget = max_bytes;
    let structured_kept = structured <= budget;
    if structured_kept {
        budget -= structured;
    }
    // Walk the blocks while they fit; the first text block that does not is
    // cut to what is left, and the walk stops.
    let room = if blocks.total > MAX_RESULT_BLOCKS {
        MAX_RESULT_BLOCKS - 1
    } else {
        blocks.total
    };
    let mut kept = Vec::new();
    let mut cut_text: Option<(String, usize)> = None;
    for raw in blocks.kept.iter().take(room) {
        let (size, text) = cost(raw);
        if size <= budget {
            budget -= size;
            kept.push(*raw);
            continue;
        }
        if let Some(text) = text {
            let head = prefix(&text, budget);
            if !head.is_empty() {
                cut_text = Some((head.to_string(), text.len() - head.len()));
            }
        }
        break;
    }
    let dropped = blocks.total - kept.len() - usize::from(cut_text.is_some());
    if dropped == 0 && cut_text.is_none() && structured_kept {
        return None;
    }
    let mut note = format!(
        "{CUT_NOTE}{} of {} content blocks kept",
        kept.len() + usize::from(cut_text.is_some()),
        blocks.total
    );
    if let Some((_, cut)) = &cut_text {
        let _ = write!(note, ", {cut} bytes of text cut");
    }
    if !structured_kept {
        let _ = write!(note, ", structuredContent ({structured} bytes) dropped");
    }
    let _ = write!(
        note,
        "; a mounted server's result is bounded at {MAX_RESULT_BLOCKS} blocks and \
         {max_bytes} bytes of text (max_result_bytes)]"
    );
    let mut out = String::with_capacity(budget_used(&kept) + note.len() + 256);
    out.push_str("{\"content\":[");
    for raw in &kept {
        out.push_str(raw.get());
        out.push(',');
    }
    if let Some((text, _)) = cut_text {
        out.push_str(&json!({"type": "text", "text": text}).to_string());
        out.push(',');
    }
    out.push_str(&json!({"type": "text", "text": note}).to_string());
    out.push(']');
    let members = [
        (
            "structuredContent",
            parsed.structured_content.filter(|_| structured_kept),
        ),
        ("isError", parsed.is_error),
        ("_meta", parsed.meta),
        ("resultType", parsed.result_type),
    ];
    for (key, raw) in members {
        if let Some(raw) = raw {
            let _ = write!(out, ",\"{key}\":{}", raw.get());
        }
    }
    out.push('}');
    Some(out)
}

fn budget_used(kept: &[&RawValue]) -> usize {
    kept.iter().map(|raw| raw.get().len() + 1).sum()
}

/// A JSON-RPC answer's members, as far as bounding needs them (the result
/// read as a tool result in the same pass: one scan of the message).
#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<ToolResult<'a>>,
}

/// Bounds the tool result in a server's message (one stdio line, one event's
/// data): None if there is nothing to cut (another kind of message, or a
/// result within the bounds), else the message rewritten with the result
/// `bound_tool_result` gives.
pub fn bound_message(message: &str, max_bytes: u64) -> Option<String> {
    let answer: Answer = serde_json::from_str(message).ok()?;
    let bounded = bound_parsed(answer.result?, max_bytes)?;
    let mut out = String::with_capacity(bounded.len() + 64);
    out.push('{');
    if let Some(jsonrpc) = answer.jsonrpc {
        let _ = write!(out, "\"jsonrpc\":{},", jsonrpc.get());
    }
    if let Some(id) = answer.id {
        let _ = write!(out, "\"id\":{},", id.get());
    }
    let _ = write!(out, "\"result\":{bounded}}}");
    Some(out)
}

/// One remote tool, read from a `tools/list` page and bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The remote name, whole if it is at most 256 bytes (else cut, and
    /// `problem` says so).
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// Why the tool cannot be mounted, if it cannot.
    pub problem: Option<String>,
    /// What was cut (the description, an outputSchema past
    /// `MAX_SCHEMA_BYTES`), if anything.
    pub warning: Option<String>,
    /// What the server says of its tool (title, annotations, outputSchema,
    /// icons): untrusted hints, kept for the host.
    pub mcp: capstan_core::tool_meta::McpMeta,
    /// What the tool costs against `MAX_LISTING_BYTES`.
    pub bytes: usize,
}

/// `text` cut to `max` bytes on a character boundary, with how many bytes
/// it had, for a message.
pub fn shown(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}... ({} bytes)", prefix(text, max), text.len())
}

/// Reads one tool of a `tools/list` page (its JSON object) into what a
/// mount registers: the name, the description (or title) cut to
/// `MAX_DESCRIPTION_CHARS`, the input schema if it is at most
/// `MAX_SCHEMA_BYTES` as JSON.
pub fn listed_tool(tool: &Map<String, Value>) -> Listed {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let mut problem = None;
    let name = if name.len() > MAX_NAME_BYTES {
        problem = Some(format!(
            "its name is {} bytes long; a tool name is at most 64 characters",
            name.len()
        ));
        shown(name, 100)
    } else {
        name.to_string()
    };
    let described = tool
        .get("description")
        .and_then(Value::as_str)
        .or_else(|| tool.get("title").and_then(Value::as_str))
        .unwrap_or("");
    let mut warning = None;
    let description = if described.chars().count() > MAX_DESCRIPTION_CHARS as usize {
        warning = Some(format!(
            "its description was cut to {MAX_DESCRIPTION_CHARS} characters, capstan's limit"
        ));
        capstan_core::text::cap(described.to_string(), MAX_DESCRIPTION_CHARS)
    } else {
        described.to_string()
    };
    let schema_bytes = tool.get("inputSchema").map_or(0, json_len);
    let parameters = if schema_bytes > MAX_SCHEMA_BYTES {
        problem.get_or_insert(format!(
            "its inputSchema is {schema_bytes} bytes as JSON; capstan's limit is {MAX_SCHEMA_BYTES}"
        ));
        Value::Null
    } else if problem.is_some() {
        Value::Null
    } else {
        tool.get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}))
    };
    // The metadata the tool is registered with; an outputSchema is bounded
    // as an inputSchema is, and the rest counts against the listing.
    let mut meta = Map::new();
    for key in ["title", "annotations", "icons"] {
        if let Some(v) = tool.get(key) {
            meta.insert(key.into(), v.clone());
        }
    }
    if let Some(out) = tool.get("outputSchema") {
        let n = json_len(out);
        if n > MAX_SCHEMA_BYTES {
            let dropped = format!(
                "its outputSchema ({n} bytes as JSON; capstan's limit is {MAX_SCHEMA_BYTES}) was left out"
            );
            warning = Some(match warning {
                Some(w) => format!("{w}; {dropped}"),
                None => dropped,
            });
        } else {
            meta.insert("outputSchema".into(), out.clone());
        }
    }
    let meta = Value::Object(meta);
    let meta_bytes = json_len(&meta);
    let mcp = capstan_core::tool_meta::McpMeta::from_listed(&meta);
    let bytes = name.len()
        + description.len()
        + meta_bytes
        + if problem.is_some() { 0 } else { schema_bytes };
    Listed {
        name,
        description,
        parameters,
        problem,
        warning,
        mcp,
        bytes,
    }
}

/// A listing in progress: the tools of the pages read so far, bounded.
#[derive(Default)]
pub struct Listing {
    pub tools: Vec<Listed>,
    bytes: usize,
    pages: usize,
    /// Hashes of the cursors followed, to see a loop.
    cursors: std::collections::HashSet<u64>,
}

impl Listing {
    /// Adds one page (its tools as JSON and its `nextCursor`); returns the
    /// cursor of the next page to ask for, or None when the listing is done.
    /// Fails, naming the bound, past `MAX_LIST_PAGES`, `MAX_LISTED_TOOLS`
    /// or `MAX_LISTING_BYTES`, or when a cursor repeats.
    pub fn page<'t>(
        &mut self,
        tools: impl IntoIterator<Item = &'t Map<String, Value>>,
        next: Option<&str>,
    ) -> Result<Option<String>, String> {
        self.pages += 1;
        for tool in tools {
            if self.tools.len() == MAX_LISTED_TOOLS {
                return Err(format!(
                    "tools/list: the server lists more than {MAX_LISTED_TOOLS} tools, \
                     capstan's limit for one mount"
                ));
            }
            let listed = listed_tool(tool);
            self.bytes = self.bytes.saturating_add(listed.bytes);
            if self.bytes > MAX_LISTING_BYTES {
                return Err(format!(
                    "tools/list: the server's tools take more than {MAX_LISTING_BYTES} bytes \
                     (names, descriptions and schemas), capstan's limit for one mount"
                ));
            }
            self.tools.push(listed);
        }
        let Some(next) = next else {
            return Ok(None);
        };
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        next.hash(&mut hasher);
        if !self.cursors.insert(hasher.finish()) {
            return Err(format!(
                "tools/list: the server's nextCursor {:?} repeats an earlier one (its pages \
                 loop), after {} pages",
                shown(next, 64),
                self.pages
            ));
        }
        if self.pages >= MAX_LIST_PAGES {
            return Err(format!(
                "tools/list: the server has more than {MAX_LIST_PAGES} pages of tools, \
                 capstan's limit"
            ));
        }
        Ok(Some(next.to_string()))
    }
}

/// The members of an rmcp `Tool` a mount reads, as JSON (`listed_tool`).
pub fn tool_map(tool: rmcp::model::Tool) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("name".into(), Value::String(tool.name.into_owned()));
    if let Some(title) = tool.title {
        map.insert("title".into(), Value::String(title));
    }
    if let Some(description) = tool.description {
        map.insert(
            "description".into(),
            Value::String(description.into_owned()),
        );
    }
    let schema = std::sync::Arc::unwrap_or_clone(tool.input_schema);
    map.insert("inputSchema".into(), Value::Object(schema));
    // The tool's MCP metadata (#33), bounded by `listed_tool` like the rest.
    if let Some(out) = tool.output_schema {
        map.insert(
            "outputSchema".into(),
            Value::Object(std::sync::Arc::unwrap_or_clone(out)),
        );
    }
    if let Some(annotations) = tool.annotations.and_then(|a| serde_json::to_value(a).ok()) {
        map.insert("annotations".into(), annotations);
    }
    if let Some(icons) = tool.icons.and_then(|i| serde_json::to_value(i).ok()) {
        map.insert("icons".into(), icons);
    }
    map
}

/// Adds a `tools/list` page to `listing` (see `Listing::page`).
pub fn list_page(
    listing: &mut Listing,
    page: rmcp::model::ListToolsResult,
) -> Result<Option<String>, String> {
    let tools: Vec<Map<String, Value>> = page.tools.into_iter().map(tool_map).collect();
    listing.page(&tools, page.next_cursor.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_blocks(n: usize, text: &str) -> String {
        let block = json!({"type": "text", "text": text}).to_string();
        format!("{{\"content\":[{}]}}", vec![block; n].join(","))
    }

    fn content(result: &str) -> Vec<Value> {
        let v: Value = serde_json::from_str(result).unwrap();
        v["content"].as_array().unwrap().clone()
    }

    #[test]
    fn a_result_within_the_bounds_is_left_as_it_is() {
        assert_eq!(bound_tool_result(&text_blocks(1000, "x"), 1000), None);
        assert_eq!(
            bound_tool_result(r#"{"structuredContent":{"a":1}}"#, 100),
            None
        );
        assert_eq!(
            bound_message(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#, 10),
            None
        );
    }

    #[test]
    fn blocks_past_the_cap_are_cut_and_the_note_says_how_many() {
        let cut = bound_tool_result(&text_blocks(5000, "x"), 1 << 20).unwrap();
        let blocks = content(&cut);
        assert_eq!(blocks.len(), MAX_RESULT_BLOCKS);
        let note = blocks.last().unwrap()["text"].as_str().unwrap();
        assert!(note.contains("999 of 5000 content blocks kept"), "{note}");
        // Cut once, it is within the bounds.
        assert_eq!(bound_tool_result(&cut, 1 << 20), None);
    }

    #[test]
    fn text_past_max_result_bytes_is_cut_on_a_character_boundary() {
        let result = json!({"content": [{"type": "text", "text": "ab"},
            {"type": "text", "text": "\u{e9}".repeat(100)}, {"type": "text", "text": "zz"}],
            "isError": false})
        .to_string();
        let cut = bound_tool_result(&result, 11).unwrap();
        let v: Value = serde_json::from_str(&cut).unwrap();
        assert_eq!(v["isError"], false);
        let blocks = v["content"].as_array().unwrap();
        assert_eq!(blocks[0]["text"], "ab");
        assert_eq!(blocks[1]["text"], "\u{e9}".repeat(4));
        let note = blocks[2]["text"].as_str().unwrap();
        assert!(
            note.contains("2 of 3 content blocks kept, 192 bytes of text cut"),
            "{note}"
        );
        assert!(note.contains("11 bytes"), "{note}");
    }

    #[test]
    fn images_count_nothing_here_and_structured_content_counts_its_json() {
        let image = json!({"type": "image", "data": "A".repeat(1000), "mimeType": "image/png"});
        let result = json!({"content": [image], "structuredContent": {"k": "v".repeat(100)}});
        let cut = bound_tool_result(&result.to_string(), 50).unwrap();
        let v: Value = serde_json::from_str(&cut).unwrap();
        assert!(v.get("structuredContent").is_none());
        assert_eq!(v["content"][0]["type"], "image");
        assert!(v["content"][1]["text"]
            .as_str()
            .unwrap()
            .contains("structuredContent (108 bytes) dropped"));
    }

    #[test]
    fn a_message_keeps_its_id_when_its_result_is_cut() {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}}",
            text_blocks(2000, "y")
        );
        let cut: Value = serde_json::from_str(&bound_message(&line, 1 << 20).unwrap()).unwrap();
        assert_eq!(cut["id"], "a");
        assert_eq!(cut["content"], Value::Null);
        assert_eq!(cut["result"]["content"].as_array().unwrap().len(), 1000);
    }

    fn tool(name: &str) -> Map<String, Value> {
        json!({"name": name, "inputSchema": {"type": "object"}})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_listing_stops_at_a_repeated_cursor_and_past_the_page_cap() {
        let mut listing = Listing::default();
        assert_eq!(
            listing.page([&tool("a")], Some("c1")),
            Ok(Some("c1".into()))
        );
        let err = listing.page([&tool("b")], Some("c1")).unwrap_err();
        assert!(err.contains("repeats an earlier one"), "{err}");
        let mut listing = Listing::default();
        for n in 0..MAX_LIST_PAGES - 1 {
            assert!(listing.page([], Some(&n.to_string())).is_ok());
        }
        let err = listing.page([], Some("last")).unwrap_err();
        assert!(err.contains("more than 1000 pages"), "{err}");
    }

    #[test]
    fn long_names_and_schemas_are_refused_and_long_descriptions_cut() {
        let long = "n".repeat(10_000);
        let listed = listed_tool(&tool(&long));
        assert!(listed.problem.unwrap().contains("10000 bytes long"));
        assert!(listed.name.len() < 200);
        let mut big = tool("big");
        big.insert(
            "inputSchema".into(),
            json!({"description": "d".repeat(MAX_SCHEMA_BYTES)}),
        );
        let listed = listed_tool(&big);
        assert!(listed.problem.unwrap().contains("inputSchema is"));
        assert_eq!(listed.parameters, Value::Null);
        let mut wordy = tool("wordy");
        wordy.insert("description".into(), json!("w".repeat(20_000)));
        let listed = listed_tool(&wordy);
        assert!(listed.warning.unwrap().contains("cut to 16384"));
        assert!(listed
            .description
            .contains("[truncated: 3616 more characters]"));
    }
}
