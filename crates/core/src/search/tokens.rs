//! Words of a tool or a query, as the index compares them: identifiers split
//! at `_`, `-`, `.`, case changes and letter/digit boundaries
//! (`getWeatherHTTPv2` -> get, weather, http, v, 2), lower-cased, common
//! English words dropped, plural and verb endings stripped.

/// At most this many words are taken from one text (a description, a query).
pub const MAX_WORDS_PER_TEXT: usize = 4096;

/// Words too common to tell tools apart.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "in", "is", "it", "its",
    "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with",
];

/// Calls `f` with each word of `text`, at most `MAX_WORDS_PER_TEXT` of them.
pub fn words(text: &str, mut f: impl FnMut(&str)) {
    let mut count = 0usize;
    let mut word = String::new();
    let mut emit = |w: &mut String| {
        if !w.is_empty() {
            if count < MAX_WORDS_PER_TEXT {
                let stem = stem(w);
                if !STOP.contains(&stem) {
                    f(stem);
                    count += 1;
                }
            }
            w.clear();
        }
    };
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            emit(&mut word);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next = chars.get(i + 1).copied();
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic())
                // "HTTPServer": a new word starts at the S.
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(|n| n.is_lowercase()));
            if boundary {
                emit(&mut word);
            }
        }
        word.extend(c.to_lowercase());
    }
    emit(&mut word);
}

/// A light English stemmer (plural and -ing/-ed endings): enough to match
/// "files" with "file" and "searching" with "search" without the
/// over-reach of a full Porter stemmer on identifiers.
fn stem(w: &str) -> &str {
    let s = strip_ending(w);
    // "create", "created", "creating" all end up "creat".
    match s.strip_suffix('e') {
        Some(t) if t.len() >= 4 => t,
        _ => s,
    }
}

fn strip_ending(w: &str) -> &str {
    let n = w.len();
    if !w.is_ascii() || n <= 3 {
        return w;
    }
    let consonant_before = |s: &str| s.bytes().last().is_some_and(|b| !b"aeiou".contains(&b));
    if let Some(s) = w.strip_suffix("ies") {
        if n > 4 {
            return s; // "queries" -> "quer", as "query" -> "quer" below
        }
    }
    if let Some(s) = w.strip_suffix('y') {
        if consonant_before(s) {
            return s;
        }
    }
    if let Some(s) = w.strip_suffix("ing") {
        if s.len() >= 3 {
            return s;
        }
    }
    if let Some(s) = w.strip_suffix("ed") {
        if s.len() >= 3 {
            return s;
        }
    }
    if w.ends_with("ss") || w.ends_with("us") || w.ends_with("is") {
        return w;
    }
    if let Some(s) = w.strip_suffix("es") {
        if s.ends_with("sh") || s.ends_with("ch") || s.ends_with('x') || s.ends_with("ss") {
            return s;
        }
    }
    if let Some(s) = w.strip_suffix('s') {
        return s;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        words(text, |w| v.push(w.to_string()));
        v
    }

    #[test]
    fn identifiers_split_at_case_underscores_and_digits() {
        assert_eq!(all("get_weatherForecast"), ["get", "weather", "forecast"]);
        assert_eq!(
            all("HTTPServer.v2-list"),
            ["http", "server", "v", "2", "list"]
        );
    }

    #[test]
    fn plurals_and_verb_forms_meet_their_stem() {
        assert_eq!(
            all("files searching boxes queries created"),
            all("file search box query create")
        );
        assert_eq!(all("the status of a class"), ["status", "class"]);
    }

    #[test]
    fn a_text_gives_at_most_the_word_cap() {
        let text = "word ".repeat(MAX_WORDS_PER_TEXT + 10);
        assert_eq!(all(&text).len(), MAX_WORDS_PER_TEXT);
    }
}
