//! JSON text edited in place: the pieces of a value as slices of its source
//! text, and one member set by splicing, so that what an edit does not touch
//! comes back byte for byte (numbers past 64 bits, `1.10`, `1E2`, key order,
//! spacing). The text must be valid JSON (it was parsed before).

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The elements of the array `text`, as slices of it; `None` when `text` is
/// not an array.
pub(crate) fn elements(text: &str) -> Option<Vec<&str>> {
    if !text.starts_with('[') {
        return None;
    }
    let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
    Some(items.into_iter().map(RawValue::get).collect())
}

/// The members of the object `text`, in order (a repeated key each time),
/// their values as slices of it; `None` when `text` is not an object.
pub(crate) fn members(text: &str) -> Option<Vec<(String, &str)>> {
    if !text.starts_with('{') {
        return None;
    }
    let Members(list) = serde_json::from_str(text).ok()?;
    Some(list.into_iter().map(|(k, v)| (k, v.get())).collect())
}

/// The value of member `key` of the object `text` (the last, when the key
/// repeats: what a parser keeps).
pub(crate) fn member<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    members(text)?
        .into_iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// Element `index` of the array `text`.
pub(crate) fn element(text: &str, index: usize) -> Option<&str> {
    elements(text)?.get(index).copied()
}

/// Where `part` (a slice of `whole`) starts in `whole`.
fn offset(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

/// `whole` with its slice `part` replaced by `with`.
pub(crate) fn splice(whole: &str, part: &str, with: &str) -> String {
    let start = offset(whole, part).min(whole.len());
    let end = (start + part.len()).min(whole.len());
    let mut out = String::with_capacity(whole.len() - (end - start) + with.len());
    out.push_str(&whole[..start]);
    out.push_str(with);
    out.push_str(&whole[end..]);
    out
}

/// `whole` with each of its slices `edits[i].0` (not overlapping) replaced
/// by `edits[i].1`.
pub(crate) fn splice_all(whole: &str, edits: &[(&str, &str)]) -> String {
    let mut edits: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|(part, with)| {
            let start = offset(whole, part).min(whole.len());
            (start, (start + part.len()).min(whole.len()), *with)
        })
        .collect();
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(whole.len());
    let mut last = 0;
    for (start, end, with) in edits {
        if start < last {
            continue;
        }
        out.push_str(&whole[last..start]);
        out.push_str(with);
        last = end;
    }
    out.push_str(&whole[last..]);
    out
}

/// The object `text` with member `key` set to the JSON `value`: its value
/// replaced where it is (the last, when repeated), or the member added
/// first. Unchanged when `text` is not an object.
pub(crate) fn set_member(text: &str, key: &str, value: &str) -> String {
    let Some(list) = members(text) else {
        return text.to_owned();
    };
    if let Some((_, old)) = list.iter().rev().find(|(k, _)| k == key) {
        return splice(text, old, value);
    }
    let key = serde_json::to_string(key).unwrap_or_default();
    let sep = if list.is_empty() { "" } else { "," };
    format!("{{{key}:{value}{sep}{}", &text[1..])
}

/// One step into a JSON value: a member or an element.
#[derive(Clone, Copy)]
pub(crate) enum Step<'k> {
    Key(&'k str),
    Index(usize),
}

/// The value at `path` in `text`.
pub(crate) fn at<'a>(text: &'a str, path: &[Step]) -> Option<&'a str> {
    let mut cur = text;
    for step in path {
        cur = match step {
            Step::Key(k) => member(cur, k)?,
            Step::Index(i) => element(cur, *i)?,
        };
    }
    Some(cur)
}

/// `text` with member `key` of the object at `path` set to the JSON `value`
/// (see [`set_member`]); only that object's text and the slices around it
/// change. Unchanged when `path` leads nowhere or not to an object.
pub(crate) fn set_at(text: &str, path: &[Step], key: &str, value: &str) -> String {
    let Some((first, rest)) = path.split_first() else {
        return set_member(text, key, value);
    };
    let child = match first {
        Step::Key(k) => member(text, k),
        Step::Index(i) => element(text, *i),
    };
    match child {
        Some(child) => splice(text, child, &set_at(child, rest, key, value)),
        None => text.to_owned(),
    }
}

/// One member to set: in element `index` of an array, at `path` in that
/// element, `key` to the JSON `value`.
pub(crate) struct ElementEdit<'p> {
    pub index: usize,
    pub path: &'p [Step<'p>],
    pub key: &'p str,
    pub value: String,
}

/// `text` with every edit of `edits` made in the array at member
/// `array_key` (see [`set_at`]): the array is read once, so many edits of
/// one entry (10,000 renamed calls of one message) cost one pass, and only
/// the edited elements change.
pub(crate) fn set_in_elements(text: &str, array_key: &str, edits: &[ElementEdit]) -> String {
    let Some(list) = member(text, array_key).and_then(elements) else {
        return text.to_owned();
    };
    let changed: Vec<(&str, String)> = edits
        .iter()
        .filter_map(|e| {
            let element = list.get(e.index)?;
            Some((*element, set_at(element, e.path, e.key, &e.value)))
        })
        .collect();
    let changed: Vec<(&str, &str)> = changed.iter().map(|(o, n)| (*o, n.as_str())).collect();
    splice_all(text, &changed)
}

/// `[a,b,...]` of JSON texts.
pub(crate) fn array<S: AsRef<str>>(items: &[S]) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item.as_ref());
    }
    out.push(']');
    out
}

/// A JSON string for `s`.
pub(crate) fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut list = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    list.push((k, v));
                }
                Ok(Members(list))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_member_leaves_its_neighbours_byte_for_byte() {
        let text = r#"{"a": 1.10, "b" : [1E2, 123456789012345678901234567890], "id":"x" }"#;
        assert_eq!(
            set_member(text, "id", "\"y\""),
            r#"{"a": 1.10, "b" : [1E2, 123456789012345678901234567890], "id":"y" }"#
        );
        assert_eq!(set_member("{ }", "id", "1"), "{\"id\":1 }");
        assert_eq!(set_member(r#"{"a":1}"#, "id", "1"), r#"{"id":1,"a":1}"#);
        let nested = r#"{"c": [ {"k": 1.0}, {"id": "a", "n": 1e5} ]}"#;
        assert_eq!(
            set_at(nested, &[Step::Key("c"), Step::Index(1)], "id", "\"b\""),
            r#"{"c": [ {"k": 1.0}, {"id": "b", "n": 1e5} ]}"#
        );
        assert_eq!(member(r#"{"a":1,"a":2}"#, "a"), Some("2"));
    }
}
