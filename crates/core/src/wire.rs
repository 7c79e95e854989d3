//! Writing the JSON capstan hands out on every call (the results array, a
//! host batch's handed-out calls) by hand: fixed keys as literal bytes,
//! strings copied as they are when nothing in them needs escaping.
//!
//! The text is byte for byte what serde_json writes for the same values
//! (the tests compare them): serde_json escapes exactly the control
//! characters, `"` and `\`, writes everything else, non-ASCII included, as
//! it is, and so does this. What it saves is serde_json's per-byte escape
//! loop and its key writing, a quarter of a lone call's work in the core
//! (issue #46, item 6), and it is the part of a big batch that runs on one
//! thread.

use serde_json::Value;

/// Bytes of 8 copies of `b`.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

const LOW: u64 = splat(0x01);
const HIGH: u64 = splat(0x80);

/// A byte of `w` is zero (the classic SWAR test: exact, no false positive
/// once combined with `!w`).
#[inline]
fn has_zero(w: u64) -> bool {
    (w.wrapping_sub(LOW) & !w & HIGH) != 0
}

/// A byte of `w` is below 0x20 (a control character).
#[inline]
fn has_control(w: u64) -> bool {
    (w.wrapping_sub(splat(0x20)) & !w & HIGH) != 0
}

/// Whether `s` has a byte JSON must escape: below 0x20, `"` or `\`.
pub fn needs_escape(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        let w = u64::from_ne_bytes(word);
        if has_control(w) || has_zero(w ^ splat(b'"')) || has_zero(w ^ splat(b'\\')) {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Writes `s` as a JSON string.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    if needs_escape(s.as_bytes()) {
        // Writing a `str` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    } else {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// Writes `v` as JSON (compact).
pub fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::String(s) => write_str(out, s),
        // Writing a `Value` into a `Vec` cannot fail.
        _ => {
            let _ = serde_json::to_writer(&mut *out, v);
        }
    }
}

/// Writes `items`, each by `write`, separated by commas (no brackets: the
/// caller writes them, or joins halves written apart, see `bulk`).
pub fn write_items<T>(out: &mut Vec<u8>, items: &[T], mut write: impl FnMut(&mut Vec<u8>, &T)) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
}

/// Writes `n` in decimal.
pub fn write_u64(out: &mut Vec<u8>, n: u64) {
    let mut buf = itoa::Buffer::new();
    out.extend_from_slice(buf.format(n).as_bytes());
}

/// The text written, as a `String` (everything written came from `&str`s,
/// literal ASCII and serde_json, so it is UTF-8).
pub fn into_string(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut cases: Vec<String> = [
            "",
            "ok",
            "c\"1",
            "back\\slash",
            "tab\there",
            "ünï\n\"x\"",
            "\u{7f} del is not escaped",
            "emoji 🙂 and 日本語",
            "exactly8",
            "sixteen bytes!!!",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every byte that needs escaping, at every position of an 8-byte word
        // and in the tail, and the bytes around the control range's edge.
        for special in [
            '\0', '\u{1f}', '"', '\\', '\n', ' ', '!', '#', '[', ']', '\u{7f}',
        ] {
            for pos in 0..19 {
                let mut s: String = "abcdefghijklmnopqr".chars().take(pos).collect();
                s.push(special);
                s.push_str("tail");
                cases.push(s);
            }
        }
        for s in &cases {
            let mut out = Vec::new();
            write_str(&mut out, s);
            assert_eq!(into_string(out), serde(s), "{s:?}");
            let expected = s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
            assert_eq!(needs_escape(s.as_bytes()), expected, "{s:?}");
        }
    }

    #[test]
    fn values_and_numbers_are_written_as_serde_json_writes_them() {
        let v = serde_json::json!({"a": [1, "x\"y", null, {"b": 2.5}], "c": "plain"});
        for value in [v.clone(), v["c"].clone(), Value::Null] {
            let mut out = Vec::new();
            write_value(&mut out, &value);
            assert_eq!(into_string(out), value.to_string());
        }
        for n in [0, 7, 1_000, u64::MAX] {
            let mut out = Vec::new();
            write_u64(&mut out, n);
            assert_eq!(into_string(out), n.to_string());
        }
    }
}
