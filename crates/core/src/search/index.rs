//! The inverted index: per word, the tools that hold it and how often
//! (weighted by field); ranked with BM25. Adding a tool costs its words;
//! removing one costs its distinct words (a binary search and a shift in each
//! word's list), not the size of the index.

use std::collections::HashMap;
use std::sync::Arc;

use super::tokens;

/// Weights of a word by where it appears in the tool.
const W_NAME: u16 = 3;
const W_PARAM_NAME: u16 = 2;
const W_TEXT: u16 = 1;
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// Text kept per tool for regex search (name, description, parameters).
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// Depth of nested parameter schemas whose names and descriptions are indexed.
const MAX_SCHEMA_DEPTH: usize = 8;

#[derive(Clone, Copy)]
struct Posting {
    doc: u32,
    /// Weighted count of the word in the tool.
    tf: u16,
}

struct Doc {
    name: Arc<str>,
    /// Name, description, then one `param: description` line per parameter.
    text: Box<str>,
    /// Weighted word count.
    len: u32,
    /// Its distinct word ids (for removal).
    terms: Box<[u32]>,
}

/// A tool as the index reads it.
pub struct ToolText<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a serde_json::Value,
}

#[derive(Default)]
pub struct Index {
    term_ids: HashMap<Box<str>, u32>,
    /// Per word id: its word (for removal from `term_ids`) and its postings,
    /// sorted by doc.
    terms: Vec<(Box<str>, Vec<Posting>)>,
    free_terms: Vec<u32>,
    docs: Vec<Option<Doc>>,
    free_docs: Vec<u32>,
    by_name: HashMap<Arc<str>, u32>,
    total_len: u64,
}

/// One ranked match.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub name: Arc<str>,
    pub score: f32,
}

impl Index {
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Adds `tool`, replacing a tool of the same name.
    pub fn insert(&mut self, tool: &ToolText) {
        self.remove(tool.name);
        let mut counts: HashMap<String, u16> = HashMap::new();
        let mut add = |w: &str, weight: u16| {
            let c = counts.entry(w.to_string()).or_insert(0);
            *c = c.saturating_add(weight);
        };
        let mut text = String::new();
        text.push_str(tool.name);
        text.push('\n');
        text.push_str(tool.description);
        tokens::words(tool.name, |w| add(w, W_NAME));
        tokens::words(tool.description, |w| add(w, W_TEXT));
        let mut params = Vec::new();
        collect_params(tool.parameters, 0, &mut params);
        for (name, description) in &params {
            tokens::words(name, |w| add(w, W_PARAM_NAME));
            tokens::words(description, |w| add(w, W_TEXT));
            text.push('\n');
            text.push_str(name);
            if !description.is_empty() {
                text.push_str(": ");
                text.push_str(description);
            }
        }
        truncate(&mut text, MAX_TEXT_BYTES);
        let slot = match self.free_docs.pop() {
            Some(slot) => slot,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let mut len = 0u32;
        let mut terms = Vec::with_capacity(counts.len());
        for (word, tf) in counts {
            len += u32::from(tf);
            let id = self.term_id(word);
            let postings = &mut self.terms[id as usize].1;
            let at = postings.partition_point(|p| p.doc < slot);
            postings.insert(at, Posting { doc: slot, tf });
            terms.push(id);
        }
        let name: Arc<str> = tool.name.into();
        self.total_len += u64::from(len);
        self.by_name.insert(name.clone(), slot);
        self.docs[slot as usize] = Some(Doc {
            name,
            text: text.into_boxed_str(),
            len,
            terms: terms.into_boxed_slice(),
        });
    }

    /// Removes the tool named `name`, if indexed.
    pub fn remove(&mut self, name: &str) {
        let Some(slot) = self.by_name.remove(name) else {
            return;
        };
        let Some(doc) = self.docs.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        self.total_len -= u64::from(doc.len);
        for &id in doc.terms.iter() {
            let Some((word, postings)) = self.terms.get_mut(id as usize) else {
                continue;
            };
            if let Ok(at) = postings.binary_search_by_key(&slot, |p| p.doc) {
                postings.remove(at);
            }
            if postings.is_empty() {
                self.term_ids.remove(&**word);
                *word = Box::from("");
                *postings = Vec::new();
                self.free_terms.push(id);
            }
        }
        self.free_docs.push(slot);
    }

    fn term_id(&mut self, word: String) -> u32 {
        if let Some(&id) = self.term_ids.get(word.as_str()) {
            return id;
        }
        let word: Box<str> = word.into_boxed_str();
        let id = match self.free_terms.pop() {
            Some(id) => {
                self.terms[id as usize] = (word.clone(), Vec::new());
                id
            }
            None => {
                self.terms.push((word.clone(), Vec::new()));
                (self.terms.len() - 1) as u32
            }
        };
        self.term_ids.insert(word, id);
        id
    }

    /// The best `limit` tools for `query` by BM25, best first; ties by name.
    pub fn search_words(&self, query: &str, limit: usize) -> Vec<Hit> {
        let n = self.len() as f32;
        if n == 0.0 || limit == 0 {
            return Vec::new();
        }
        let avg_len = (self.total_len as f32 / n).max(1.0);
        let mut query_terms: Vec<u32> = Vec::new();
        tokens::words(query, |w| {
            if let Some(&id) = self.term_ids.get(w) {
                if !query_terms.contains(&id) {
                    query_terms.push(id);
                }
            }
        });
        let mut scores = vec![0f32; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for id in query_terms {
            let postings = &self.terms[id as usize].1;
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for p in postings {
                let Some(Some(doc)) = self.docs.get(p.doc as usize) else {
                    continue;
                };
                let tf = f32::from(p.tf);
                let norm = K1 * (1.0 - B + B * doc.len as f32 / avg_len);
                let s = idf * tf * (K1 + 1.0) / (tf + norm);
                let slot = &mut scores[p.doc as usize];
                if *slot == 0.0 {
                    touched.push(p.doc);
                }
                *slot += s;
            }
        }
        let hits = touched.into_iter().filter_map(|d| {
            let doc = self.docs.get(d as usize)?.as_ref()?;
            Some(Hit {
                name: doc.name.clone(),
                score: scores[d as usize],
            })
        });
        best(hits, limit)
    }

    /// The tools whose text (see `Doc::text`) `re` matches: a match in the
    /// name first, then in the description or parameters; by name within each.
    pub fn search_regex(&self, re: &regex::Regex, limit: usize) -> Vec<Hit> {
        let hits = self.docs.iter().flatten().filter_map(|doc| {
            if re.is_match(&doc.name) {
                Some(Hit {
                    name: doc.name.clone(),
                    score: 2.0,
                })
            } else if re.is_match(&doc.text) {
                Some(Hit {
                    name: doc.name.clone(),
                    score: 1.0,
                })
            } else {
                None
            }
        });
        best(hits, limit)
    }

    /// Bytes held on the heap by the index (capacities, not lengths), for
    /// the Limits section and the benchmark.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let map_entry = |k: usize, v: usize| k + v + 1; // hashbrown: one control byte per bucket
        let mut bytes = self.term_ids.capacity() * map_entry(size_of::<Box<str>>(), 4)
            + self.by_name.capacity() * map_entry(size_of::<Arc<str>>(), 4)
            + self.terms.capacity() * size_of::<(Box<str>, Vec<Posting>)>()
            + self.free_terms.capacity() * 4
            + self.docs.capacity() * size_of::<Option<Doc>>()
            + self.free_docs.capacity() * 4;
        for (word, postings) in &self.terms {
            // The word twice: here and as the key of `term_ids`.
            bytes += 2 * word.len() + postings.capacity() * size_of::<Posting>();
        }
        for doc in self.docs.iter().flatten() {
            // The name's Arc header (two counts) and text.
            bytes += 16 + doc.name.len() + doc.text.len() + doc.terms.len() * 4;
        }
        bytes
    }
}

/// The `limit` best hits, best first, ties by name.
fn best(hits: impl Iterator<Item = Hit>, limit: usize) -> Vec<Hit> {
    let mut hits: Vec<Hit> = hits.collect();
    let order = |a: &Hit, b: &Hit| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.name.cmp(&b.name))
    };
    if hits.len() > limit {
        hits.select_nth_unstable_by(limit - 1, order);
        hits.truncate(limit);
    }
    hits.sort_by(order);
    hits
}

/// Parameter names and descriptions of an object schema, nested objects and
/// array items included, to `MAX_SCHEMA_DEPTH`.
fn collect_params<'a>(
    schema: &'a serde_json::Value,
    depth: usize,
    out: &mut Vec<(&'a str, &'a str)>,
) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
        for (name, sub) in props {
            let description = sub
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or("");
            out.push((name, description));
            collect_params(sub, depth + 1, out);
        }
    }
    if let Some(items) = schema.get("items") {
        collect_params(items, depth + 1, out);
    }
}

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn add(ix: &mut Index, name: &str, description: &str) {
        ix.insert(&ToolText {
            name,
            description,
            parameters: &json!({"properties": {"path": {"description": "file path"}}}),
        });
    }

    #[test]
    fn removing_every_tool_leaves_no_words_behind() {
        let mut ix = Index::default();
        add(&mut ix, "read_file", "Reads a file");
        add(&mut ix, "send_mail", "Sends an email");
        add(&mut ix, "read_file", "Reads a whole file"); // replaced
        assert_eq!(ix.len(), 2);
        ix.remove("read_file");
        ix.remove("send_mail");
        assert_eq!(ix.len(), 0);
        assert!(ix.term_ids.is_empty(), "every word was dropped");
        assert!(ix.terms.iter().all(|(_, p)| p.is_empty()));
        assert_eq!(ix.total_len, 0);
        // Slots and word ids are reused.
        add(&mut ix, "list_dir", "Lists a directory");
        assert_eq!(ix.docs.len(), 2);
        assert_eq!(ix.search_words("directory", 5)[0].name.as_ref(), "list_dir");
    }
}
