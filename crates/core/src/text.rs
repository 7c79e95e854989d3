//! Text helpers below every module that renders output: the character cap
//! that a text result and each text part get (`max_output_chars`), and the
//! length of a value as JSON text, counted without making the text.

/// Caps `text` at `max_chars` characters (0 = no cap). Cuts on a character
/// boundary and appends a marker that says how many characters were cut.
pub fn cap(mut text: String, max_chars: u32) -> String {
    if max_chars == 0 || text.len() <= max_chars as usize {
        return text;
    }
    let Some((cut_at, _)) = text.char_indices().nth(max_chars as usize) else {
        return text; // fewer characters than bytes: under the cap after all
    };
    let cut = text[cut_at..].chars().count();
    text.truncate(cut_at);
    text.push_str(&format!("\n[truncated: {cut} more characters]"));
    text
}

/// The length of `value` as compact JSON text, counted without making the
/// text (bounds on what a listing, a task or a turn writes). 0 for a value
/// that does not serialize.
pub fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod json_len_tests {
    #[test]
    fn a_values_size_is_the_length_of_its_json_text() {
        let value = serde_json::json!({"text": "caf\u{e9} \"quoted\"\n", "n": [1, 2.5, null]});
        let text = serde_json::to_vec(&value).unwrap_or_default();
        assert_eq!(super::json_len(&value), text.len());
    }
}
