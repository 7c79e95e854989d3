//! Text helpers below every module that renders output: the character cap
//! that a text result and each text part get (`max_output_chars`).

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
