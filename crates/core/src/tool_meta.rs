//! What MCP says about a tool beside its name, description and input
//! schema: `title`, `annotations`, `outputSchema`, `icons` and
//! `execution.taskSupport`, in the shapes of the MCP schema's `Tool`
//! (2025-11-25; unchanged in 2026-07-28, where task support is the
//! server's choice per request: see `TaskSupport`). They
//! are fields of the tool itself: `tools/list` of capstan's MCP server sends
//! them, `describe` exports them, and a mounted server's tools keep what
//! that server said (untrusted hints: nothing capstan enforces).
//!
//! The one rule capstan enforces: a tool with an `outputSchema` whose
//! successful result carries structured content (the `structuredContent` of
//! its content parts, or text that is a JSON object, which MCP sends as
//! `structuredContent`) must match it; a result that does not ends the call
//! as a tool error naming each JSON Pointer that failed.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::Error;
use crate::schema::Schema;

/// The four hints of MCP's `ToolAnnotations` (booleans), besides its `title`.
const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// Icons past this many are refused (a tool list is sent on every `tools/list`).
/// cbindgen:ignore
pub const MAX_ICONS: usize = 16;

/// Whether a tool may run as an MCP task (the MCP schema's
/// `ToolExecution.taskSupport`, 2025-11-25). Absent means `Forbidden`, the
/// schema's default. capstan's server runs a tool as a task only for a
/// request that declares the Tasks extension (`io.modelcontextprotocol/tasks`):
/// `Optional` then always makes a task, `Required` refuses a request that
/// does not declare it (-32021).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

impl TaskSupport {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    fn parse(text: &str) -> Option<TaskSupport> {
        [
            TaskSupport::Forbidden,
            TaskSupport::Optional,
            TaskSupport::Required,
        ]
        .into_iter()
        .find(|t| t.as_str() == text)
    }
}

/// MCP metadata of a tool. `Default` is none of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpMeta {
    /// A human-readable name for UIs (`Tool.title`).
    pub title: Option<String>,
    /// `ToolAnnotations`: `title` (string) and the boolean hints
    /// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`.
    pub annotations: Option<Map<String, Value>>,
    /// JSON Schema of the result's `structuredContent`; its root is
    /// `"type": "object"`, as MCP requires.
    pub output_schema: Option<Value>,
    /// `Icon` objects: `{"src", "mimeType"?, "sizes"?: [..], "theme"?: "light"|"dark"}`.
    pub icons: Option<Vec<Value>>,
    /// `execution.taskSupport`: whether the tool may run as a task (`None`:
    /// forbidden, the MCP default).
    pub task_support: Option<TaskSupport>,
}

impl McpMeta {
    pub fn is_empty(&self) -> bool {
        *self == McpMeta::default()
    }

    /// Whether the tool may run as a task (`Forbidden` when unsaid).
    pub fn task_support(&self) -> TaskSupport {
        self.task_support.unwrap_or(TaskSupport::Forbidden)
    }

    /// Reads `{"title"?, "annotations"?, "outputSchema"?, "icons"?,
    /// "execution"?: {"taskSupport"?}}` (the
    /// MCP `Tool` field names), checking each field's shape. `what` names the
    /// object in error messages. Errors: `InvalidArgument` naming the field
    /// and what it should be; `InvalidSchema` for an `outputSchema` that does
    /// not compile.
    pub fn from_value(value: &Value, what: &str) -> Result<McpMeta, Error> {
        let bad = |why: String| Error::InvalidArgument(format!("{what}{why}"));
        let Value::Object(fields) = value else {
            return Err(bad(
                " must be a JSON object with \"title\", \"annotations\", \"outputSchema\", \"icons\" or \"execution\"".into(),
            ));
        };
        let mut meta = McpMeta::default();
        for (key, v) in fields {
            match key.as_str() {
                "title" => match v {
                    Value::String(s) => meta.title = Some(s.clone()),
                    _ => return Err(bad(".title must be a string".into())),
                },
                "annotations" => meta.annotations = Some(annotations(v, &bad)?),
                "outputSchema" => meta.output_schema = Some(v.clone()),
                "icons" => meta.icons = Some(icons(v, &bad)?),
                "execution" => meta.task_support = execution(v, &bad)?,
                other => {
                    return Err(bad(format!(
                        ": unknown field {other:?} (expected \"title\", \"annotations\", \"outputSchema\", \"icons\" or \"execution\")"
                    )))
                }
            }
        }
        meta.compile_output_schema(what)?;
        Ok(meta)
    }

    /// The compiled `outputSchema`, if any. Errors: `InvalidSchema` naming
    /// the problem (a root that is not `"type": "object"` included).
    pub(crate) fn compile_output_schema(&self, what: &str) -> Result<Option<Arc<Schema>>, Error> {
        let Some(schema) = &self.output_schema else {
            return Ok(None);
        };
        if schema.get("type") != Some(&Value::String("object".into())) {
            return Err(Error::InvalidSchema(format!(
                "{what}.outputSchema must be an object schema with \"type\": \"object\" (MCP's rule for structuredContent)"
            )));
        }
        Schema::compile_any(schema)
            .map(|s| Some(Arc::new(s)))
            .map_err(|e| Error::InvalidSchema(format!("{what}.outputSchema: {e}")))
    }

    /// The fields as MCP's `Tool` has them, added to `tool`.
    pub fn write_mcp(&self, tool: &mut Map<String, Value>) {
        if let Some(t) = &self.title {
            tool.insert("title".into(), Value::String(t.clone()));
        }
        if let Some(a) = &self.annotations {
            tool.insert("annotations".into(), Value::Object(a.clone()));
        }
        if let Some(s) = &self.output_schema {
            tool.insert("outputSchema".into(), s.clone());
        }
        if let Some(i) = &self.icons {
            tool.insert("icons".into(), Value::Array(i.clone()));
        }
        if let Some(t) = self.task_support {
            let execution = serde_json::json!({"taskSupport": t.as_str()});
            tool.insert("execution".into(), execution);
        }
    }

    /// The MCP fields of a tool as a mounted server listed it (its
    /// `tools/list` entry as JSON), leaving out those of the wrong shape.
    pub fn from_listed(tool: &Value) -> McpMeta {
        let mut meta = McpMeta::default();
        let ignore = |_: String| Error::InvalidArgument(String::new());
        meta.title = tool.get("title").and_then(Value::as_str).map(str::to_owned);
        meta.annotations = tool
            .get("annotations")
            .and_then(|a| annotations(a, &ignore).ok());
        meta.output_schema = tool
            .get("outputSchema")
            .filter(|s| {
                let probe = McpMeta {
                    output_schema: Some((*s).clone()),
                    ..McpMeta::default()
                };
                probe.compile_output_schema("").is_ok()
            })
            .cloned();
        meta.icons = tool.get("icons").and_then(|i| icons(i, &ignore).ok());
        meta.task_support = tool
            .get("execution")
            .and_then(|e| execution(e, &ignore).ok())
            .flatten();
        meta
    }
}

fn annotations(value: &Value, bad: &dyn Fn(String) -> Error) -> Result<Map<String, Value>, Error> {
    let Value::Object(a) = value else {
        return Err(bad(".annotations must be an object".into()));
    };
    for (key, v) in a {
        let ok = match key.as_str() {
            "title" => v.is_string(),
            k if HINTS.contains(&k) => v.is_boolean(),
            _ => {
                return Err(bad(format!(
                    ".annotations: unknown field {key:?} (expected \"title\", {})",
                    HINTS.map(|h| format!("{h:?}")).join(", ")
                )))
            }
        };
        if !ok {
            let want = if key == "title" {
                "a string"
            } else {
                "true or false"
            };
            return Err(bad(format!(".annotations.{key} must be {want}")));
        }
    }
    Ok(a.clone())
}

/// `ToolExecution`: `{"taskSupport"?: "forbidden" | "optional" | "required"}`.
fn execution(value: &Value, bad: &dyn Fn(String) -> Error) -> Result<Option<TaskSupport>, Error> {
    let Value::Object(fields) = value else {
        return Err(bad(".execution must be an object".into()));
    };
    let mut support = None;
    for (key, v) in fields {
        if key != "taskSupport" {
            return Err(bad(format!(
                ".execution: unknown field {key:?} (expected \"taskSupport\")"
            )));
        }
        support = Some(v.as_str().and_then(TaskSupport::parse).ok_or_else(|| {
            bad(".execution.taskSupport must be \"forbidden\", \"optional\" or \"required\"".into())
        })?);
    }
    Ok(support)
}

fn icons(value: &Value, bad: &dyn Fn(String) -> Error) -> Result<Vec<Value>, Error> {
    let Value::Array(list) = value else {
        return Err(bad(".icons must be an array of Icon objects".into()));
    };
    if list.len() > MAX_ICONS {
        return Err(bad(format!(
            ".icons has {} icons, more than {MAX_ICONS}",
            list.len()
        )));
    }
    for (i, icon) in list.iter().enumerate() {
        let Value::Object(fields) = icon else {
            return Err(bad(format!(".icons[{i}] must be an object")));
        };
        if !fields.get("src").is_some_and(Value::is_string) {
            return Err(bad(format!(".icons[{i}].src must be a string (a URI)")));
        }
        for (key, v) in fields {
            let ok = match key.as_str() {
                "src" | "mimeType" => v.is_string(),
                "sizes" => v
                    .as_array()
                    .is_some_and(|s| s.iter().all(Value::is_string)),
                "theme" => v.as_str().is_some_and(|t| t == "light" || t == "dark"),
                _ => {
                    return Err(bad(format!(
                        ".icons[{i}]: unknown field {key:?} (expected \"src\", \"mimeType\", \"sizes\", \"theme\")"
                    )))
                }
            };
            if !ok {
                return Err(bad(format!(
                    ".icons[{i}].{key} has the wrong type (mimeType: string, sizes: array of strings such as \"48x48\", theme: \"light\" or \"dark\")"
                )));
            }
        }
    }
    Ok(list.clone())
}

/// Why `structured` fails `schema`, as text for the model naming each JSON
/// Pointer (`None` if it matches).
pub fn structured_problem(tool: &str, schema: &Schema, structured: &Value) -> Option<String> {
    let errors = schema.validate(structured.clone(), false).err()?;
    let mut text =
        format!("Tool \"{tool}\" returned structuredContent that does not match its outputSchema:");
    for e in errors.0.iter().take(20) {
        let at = if e.pointer.is_empty() {
            "/"
        } else {
            &e.pointer
        };
        text.push_str(&format!("\n- at {at}: {}", e.message));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_field_of_mcp_tool_metadata_is_read_and_written_back() {
        let v = json!({
            "title": "Add",
            "annotations": {"title": "Adder", "readOnlyHint": true, "destructiveHint": false,
                            "idempotentHint": true, "openWorldHint": false},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}},
            "icons": [{"src": "https://x/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}],
            "execution": {"taskSupport": "optional"},
        });
        let meta = McpMeta::from_value(&v, "meta").unwrap();
        assert_eq!(meta.task_support(), TaskSupport::Optional);
        let mut out = Map::new();
        meta.write_mcp(&mut out);
        assert_eq!(Value::Object(out), v);
    }

    #[test]
    fn task_support_is_forbidden_unless_said_as_mcp_defaults_it() {
        assert_eq!(McpMeta::default().task_support(), TaskSupport::Forbidden);
        let empty = McpMeta::from_value(&json!({"execution": {}}), "m").unwrap();
        assert_eq!(empty.task_support(), TaskSupport::Forbidden);
        for level in [
            TaskSupport::Forbidden,
            TaskSupport::Optional,
            TaskSupport::Required,
        ] {
            let v = json!({"execution": {"taskSupport": level.as_str()}});
            assert_eq!(McpMeta::from_value(&v, "m").unwrap().task_support(), level);
            assert_eq!(McpMeta::from_listed(&v).task_support(), level);
        }
    }

    #[test]
    fn wrong_shapes_are_refused_naming_the_field() {
        for (v, names) in [
            (json!({"title": 3}), ".title"),
            (
                json!({"annotations": {"readOnlyHint": "yes"}}),
                ".annotations.readOnlyHint",
            ),
            (
                json!({"annotations": {"readonlyHint": true}}),
                "\"readonlyHint\"",
            ),
            (
                json!({"icons": [{"mimeType": "image/png"}]}),
                ".icons[0].src",
            ),
            (
                json!({"icons": [{"src": "a", "theme": "blue"}]}),
                ".icons[0].theme",
            ),
            (json!({"colour": "red"}), "\"colour\""),
            (
                json!({"execution": {"taskSupport": "sometimes"}}),
                ".execution.taskSupport",
            ),
            (json!({"execution": {"ttl": 5}}), "\"ttl\""),
            (json!({"execution": true}), ".execution"),
            (json!({"outputSchema": {"type": "array"}}), ".outputSchema"),
            (
                json!({"outputSchema": {"type": "object", "properties": {"a": {"type": 5}}}}),
                ".outputSchema",
            ),
        ] {
            let e = McpMeta::from_value(&v, "def.mcp_meta")
                .unwrap_err()
                .to_string();
            assert!(e.contains(names) && e.contains("def.mcp_meta"), "{v}: {e}");
        }
    }

    #[test]
    fn structured_content_failing_the_output_schema_names_the_pointer() {
        let meta = McpMeta::from_value(
            &json!({"outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}},
                                      "required": ["sum"]}}),
            "m",
        )
        .unwrap();
        let schema = meta.compile_output_schema("m").unwrap().unwrap();
        assert!(structured_problem("add", &schema, &json!({"sum": 3})).is_none());
        let why = structured_problem("add", &schema, &json!({"sum": "3"})).unwrap();
        assert!(
            why.contains("at /sum") && why.contains("outputSchema"),
            "{why}"
        );
    }

    #[test]
    fn a_listed_tool_keeps_its_well_formed_fields_only() {
        let meta = McpMeta::from_listed(&json!({
            "name": "x", "title": "X", "annotations": {"readOnlyHint": true},
            "outputSchema": {"type": "string"}, "icons": "nope"
        }));
        assert_eq!(meta.title.as_deref(), Some("X"));
        assert!(meta.annotations.is_some());
        assert!(meta.output_schema.is_none() && meta.icons.is_none());
    }
}
