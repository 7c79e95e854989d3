//! The text of an "unknown tool" result: the closest registered name ("Did
//! you mean ...?") and the names available.
//!
//! Bounded cost whatever the model sends: the names are indexed once per
//! change of the tool set (sorted, lowercased, and sorted again by their
//! reversed spelling), and one unknown name is compared with at most
//! [`CANDIDATES`] of them, on at most [`COMPARED_CHARS`] characters.

use std::collections::HashMap;

/// Characters of the unknown name that are compared (tool names have at most 64).
/// cbindgen:ignore
pub const COMPARED_CHARS: usize = 96;
/// Registered names compared with one unknown name: the neighbours of its
/// place in the sorted names (a shared start) and in the names sorted by
/// their reversed spelling (a shared end, for a typo near the start).
/// cbindgen:ignore
pub const CANDIDATES: usize = 8;
/// Characters of the unknown name repeated in the text.
const ECHOED_CHARS: usize = 100;
/// Names listed as available.
const SHOWN: usize = 50;
/// Similarity (Jaro-Winkler) below which nothing is suggested.
const CLOSE_ENOUGH: f64 = 0.7;

/// The tool names of one generation of a registry, ready for suggestions.
#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    /// Lowercased names, sorted, each with its index in `names`.
    forward: Vec<(String, usize)>,
    /// Lowercased names spelled backwards, sorted, each with its index in `names`.
    backward: Vec<(String, usize)>,
    /// Lowercased name -> index in `names`.
    exact: HashMap<String, usize>,
    /// The registered names, sorted, and lowercased.
    names: Vec<String>,
    lower: Vec<String>,
    /// " Available tools: a, b, c (and 12 more)."
    available: String,
}

impl NameIndex {
    pub(crate) fn new(mut names: Vec<String>) -> NameIndex {
        names.sort();
        let mut forward: Vec<(String, usize)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_lowercase(), i))
            .collect();
        let exact = forward.iter().cloned().collect();
        let lower = forward.iter().map(|(n, _)| n.clone()).collect();
        let mut backward: Vec<(String, usize)> = forward
            .iter()
            .map(|(n, i)| (n.chars().rev().collect(), *i))
            .collect();
        forward.sort();
        backward.sort();
        let mut available = format!(
            " Available tools: {}",
            names
                .iter()
                .take(SHOWN)
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        );
        if names.len() > SHOWN {
            available.push_str(&format!(" (and {} more)", names.len() - SHOWN));
        }
        available.push('.');
        NameIndex {
            forward,
            backward,
            exact,
            names,
            lower,
            available,
        }
    }

    /// "Unknown tool "x". Did you mean "y"? Available tools: ...".
    pub fn unknown_tool_text(&self, name: &str) -> String {
        let mut echoed = cut(name, ECHOED_CHARS).to_owned();
        if echoed.len() < name.len() {
            echoed.push('…');
        }
        if self.names.is_empty() {
            return format!("Unknown tool \"{echoed}\": no tools are available.");
        }
        let mut text = format!("Unknown tool \"{echoed}\".");
        if let Some(closest) = self.closest(name) {
            text.push_str(&format!(" Did you mean \"{closest}\"?"));
        }
        text.push_str(&self.available);
        text
    }

    /// The registered name most like `name`, if any is close enough.
    pub(crate) fn closest(&self, name: &str) -> Option<&str> {
        let wanted: String = cut(name, COMPARED_CHARS).to_lowercase();
        if let Some(&i) = self.exact.get(&wanted) {
            return self.names.get(i).map(String::as_str);
        }
        let reversed: String = wanted.chars().rev().collect();
        let half = CANDIDATES / 4;
        let mut candidates: Vec<usize> = neighbours(&self.forward, &wanted, half)
            .chain(neighbours(&self.backward, &reversed, half))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates
            .into_iter()
            .filter_map(|i| {
                let lower = self.lower.get(i)?;
                Some((strsim::jaro_winkler(lower, &wanted), i))
            })
            .filter(|(score, _)| *score >= CLOSE_ENOUGH)
            // Highest score; among equals, the first name in sorted order.
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .and_then(|(_, i)| self.names.get(i).map(String::as_str))
    }
}

/// Up to `2 * half` entries of `sorted` around where `key` would go.
fn neighbours<'a>(
    sorted: &'a [(String, usize)],
    key: &str,
    half: usize,
) -> impl Iterator<Item = usize> + 'a {
    let at = sorted.partition_point(|(n, _)| n.as_str() < key);
    let from = at.saturating_sub(half);
    let to = (at + half).min(sorted.len());
    sorted[from..to].iter().map(|(_, i)| *i)
}

/// The first `max` characters of `text`.
fn cut(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(names: &[&str]) -> NameIndex {
        NameIndex::new(names.iter().map(|n| (*n).to_owned()).collect())
    }

    #[test]
    fn unknown_tool_text_suggests_the_closest_name_and_lists_the_tools() {
        let tools = index(&["set_alarm", "get_weather", "get_time"]);
        assert_eq!(
            tools.unknown_tool_text("get_wether"),
            "Unknown tool \"get_wether\". Did you mean \"get_weather\"? \
             Available tools: get_time, get_weather, set_alarm."
        );
    }

    #[test]
    fn nothing_is_suggested_when_no_name_is_close() {
        let tools = index(&["get_weather"]);
        assert_eq!(
            tools.unknown_tool_text("zzz"),
            "Unknown tool \"zzz\". Available tools: get_weather."
        );
    }

    #[test]
    fn no_tools_says_so() {
        assert_eq!(
            index(&[]).unknown_tool_text("x"),
            "Unknown tool \"x\": no tools are available."
        );
    }

    #[test]
    fn a_name_differing_only_in_case_suggests_the_registered_spelling() {
        let tools = index(&["Get_Weather", "get_time"]);
        assert_eq!(tools.closest("GET_WEATHER"), Some("Get_Weather"));
        assert_eq!(tools.closest("get_weather"), Some("Get_Weather"));
    }

    #[test]
    fn a_typo_in_the_first_letter_is_still_found() {
        // Far from "get_weather" in sorted order: found by its shared end.
        let names: Vec<String> = (0..200)
            .map(|i| format!("tool_{i:03}"))
            .chain(["aaa_1", "aaa_2", "get_weather"].map(String::from))
            .collect();
        let tools = NameIndex::new(names);
        assert_eq!(tools.closest("xet_weather"), Some("get_weather"));
        assert_eq!(tools.closest("get_weathxr"), Some("get_weather"));
    }

    #[test]
    fn a_name_missing_its_last_letter_is_found_when_it_sorts_first() {
        // Its place is the very start of the sorted names; xf and xg sit
        // between it and "get_weather" in reversed order.
        let tools = index(&["get_weather", "xf", "xg"]);
        assert_eq!(tools.closest("get_weathe"), Some("get_weather"));
    }

    #[test]
    fn among_equally_close_names_the_first_in_sorted_order_is_suggested() {
        let tools = index(&["tool_b", "tool_a"]);
        assert_eq!(tools.closest("tool_c"), Some("tool_a"));
    }

    #[test]
    fn only_the_neighbours_in_sorted_order_are_compared() {
        // "aittem" is close to "kitten" but sits two names away from it both
        // in sorted order (b1, b2) and in reversed order (mz1, mz2 spelled
        // backwards): the bound on comparisons leaves it out.
        assert!(strsim::jaro_winkler("aittem", "kitten") >= CLOSE_ENOUGH);
        let tools = index(&["aittem", "b1", "b2", "kz", "kzz", "1zm", "2zm", "zn", "zzn"]);
        assert_eq!(tools.closest("kitten"), None);
        // One name fewer between them in each order: it is compared, and suggested.
        let tools = index(&["aittem", "b1", "kz", "kzz", "1zm", "zn", "zzn"]);
        assert_eq!(tools.closest("kitten"), Some("aittem"));
    }

    #[test]
    fn the_echoed_name_is_cut_at_100_characters() {
        let tools = index(&["get_weather"]);
        let exactly = "é".repeat(100);
        assert_eq!(
            tools.unknown_tool_text(&exactly),
            format!("Unknown tool \"{exactly}\". Available tools: get_weather.")
        );
        let over = "é".repeat(101);
        assert_eq!(
            tools.unknown_tool_text(&over),
            format!("Unknown tool \"{exactly}…\". Available tools: get_weather.")
        );
    }

    #[test]
    fn only_the_first_96_characters_of_an_unknown_name_are_compared() {
        let long = "a".repeat(COMPARED_CHARS);
        let tools = index(&[long.as_str(), "b"]);
        let sent = format!("{long}{}", "z".repeat(10_000));
        assert_eq!(tools.closest(&sent), Some(long.as_str()));
    }

    #[test]
    fn fifty_tools_are_listed_and_the_rest_counted() {
        let names = |n: usize| (0..n).map(|i| format!("t{i:02}")).collect::<Vec<_>>();
        let fifty = names(50).join(", ");
        assert_eq!(
            NameIndex::new(names(50)).unknown_tool_text("zzz"),
            format!("Unknown tool \"zzz\". Available tools: {fifty}.")
        );
        assert_eq!(
            NameIndex::new(names(51)).unknown_tool_text("zzz"),
            format!("Unknown tool \"zzz\". Available tools: {fifty} (and 1 more).")
        );
    }
}
