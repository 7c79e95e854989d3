//! What a record says ran: the tool, a hash of its schema, a hash of the
//! validated arguments. Hashes are SHA-256 of canonical JSON (object keys
//! sorted, no spaces), so key order and formatting never count as a change.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The tool and the hashes of its schema and arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub tool: String,
    pub schema: String,
    pub arguments: String,
}

impl Fingerprint {
    pub fn new(tool: &str, schema: &Value, arguments: &Value) -> Fingerprint {
        Fingerprint {
            tool: tool.to_string(),
            schema: hash_json(schema),
            arguments: hash_json(arguments),
        }
    }

    /// What differs between the recorded fingerprint (`self`) and `now`,
    /// as a sentence for the model and the host; `None` if nothing does.
    pub fn changes(&self, now: &Fingerprint) -> Option<String> {
        if self.tool != now.tool {
            return Some(format!(
                "it was recorded as a call of tool \"{}\", not \"{}\"",
                self.tool, now.tool
            ));
        }
        let mut what = Vec::new();
        if self.schema != now.schema {
            what.push(format!(
                "the schema of tool \"{}\" changed (recorded {}, now {})",
                now.tool,
                short(&self.schema),
                short(&now.schema)
            ));
        }
        if self.arguments != now.arguments {
            what.push(format!(
                "its arguments changed (recorded {}, now {})",
                short(&self.arguments),
                short(&now.arguments)
            ));
        }
        (!what.is_empty()).then(|| what.join(" and "))
    }
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// SHA-256 of `value`'s canonical JSON, in lowercase hex.
pub fn hash_json(value: &Value) -> String {
    let digest = Sha256::digest(canonical_json(value).as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// `value` as JSON text with every object's keys sorted.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_a_hash() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": null}});
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(hash_json(&a), hash_json(&b));
        assert_ne!(hash_json(&a), hash_json(&json!({"b": 2, "a": {}})));
    }
}
