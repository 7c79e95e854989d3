//! What OAuth error text may not carry: authorization codes, tokens,
//! secrets, assertions and keys. Every error a flow returns, and every
//! server refusal it quotes, passes through `redact` before it reaches a
//! mount's error or event: a redirect URL is quoted with its `code`
//! replaced, a server that echoes the secret it was sent is quoted without
//! it.

/// Written in place of what was removed.
const REDACTED: &str = "[REDACTED]";

/// Parameters (query, form or JSON members) whose values are credentials.
const SENSITIVE: [&str; 13] = [
    "code",
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "client_secret",
    "client_assertion",
    "assertion",
    "subject_token",
    "actor_token",
    "code_verifier",
    "password",
    "state",
];

/// Authorization schemes whose credentials follow them.
const SCHEMES: [&str; 3] = ["bearer ", "dpop ", "basic "];

/// `text` without credentials: every one of `secrets` (values the flow
/// knows it sent: a client secret, an assertion, a key), the values of
/// `SENSITIVE` parameters, the credentials after an authorization scheme,
/// JWTs and PEM blocks.
pub(super) fn redact(text: &str, secrets: &[&str]) -> String {
    let mut text = text.to_owned();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        text = text.replace(secret, REDACTED);
        let encoded: String = url::form_urlencoded::byte_serialize(secret.as_bytes()).collect();
        if encoded != *secret {
            text = text.replace(&encoded, REDACTED);
        }
    }
    let text = pem_blocks(&text);
    let text = parameters(&text);
    let text = schemes(&text);
    jwts(&text)
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Where a parameter's value ends (in a URL, a form, a header, a sentence).
fn ends_value(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '&' | '"' | '\'' | '#' | '<' | '>' | ',' | ';' | ')' | ']' | '}' | '\\'
        )
}

/// `name=value` and `"name": "value"` of a `SENSITIVE` name.
fn parameters(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut i = 0;
    while i < text.len() {
        let rest = &lower[i..];
        let before = text[..i].chars().next_back();
        let starts_word = !before.is_some_and(is_word);
        // A JSON member's name is quoted.
        let quoted = before == Some('"');
        let name = SENSITIVE.iter().find(|n| {
            starts_word
                && rest.starts_with(*n)
                && !rest[n.len()..].chars().next().is_some_and(is_word)
        });
        let Some(name) = name else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let after = i + name.len();
        let value_at = if quoted {
            // "name" : "value"
            let tail = &text[after..];
            let Some(t) = tail.strip_prefix('"') else {
                i = after;
                continue;
            };
            let t2 = t.trim_start();
            let Some(t3) = t2.strip_prefix(':') else {
                i = after;
                continue;
            };
            let t4 = t3.trim_start();
            let Some(t5) = t4.strip_prefix('"') else {
                i = after;
                continue;
            };
            text.len() - t5.len()
        } else if text[after..].starts_with('=') {
            after + 1
        } else {
            i = after;
            continue;
        };
        if text[value_at..].starts_with(REDACTED) {
            i = value_at + REDACTED.len();
            continue;
        }
        let len = text[value_at..]
            .find(|c: char| if quoted { c == '"' } else { ends_value(c) })
            .unwrap_or(text.len() - value_at);
        if len > 0 {
            out.push_str(&text[at..value_at]);
            out.push_str(REDACTED);
            at = value_at + len;
        }
        i = value_at + len.max(1).min(text.len() - value_at);
    }
    out.push_str(&text[at..]);
    out
}

/// Token68 characters (RFC 9110), what follows an authorization scheme.
fn is_token68(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/' | '=')
}

/// `Bearer <token>`, `DPoP <token>`, `Basic <credentials>`; a challenge's
/// parameters (`Bearer error="..."`) stay.
fn schemes(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut i = 0;
    while i < text.len() {
        let starts_word = !text[..i].chars().next_back().is_some_and(is_word);
        let scheme = SCHEMES
            .iter()
            .find(|s| starts_word && lower[i..].starts_with(*s));
        let Some(scheme) = scheme else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let from = i + scheme.len();
        let len = text[from..]
            .find(|c: char| !is_token68(c))
            .unwrap_or(text.len() - from);
        let token = &text[from..from + len];
        let parameter = token.contains('=') && text[from + len..].starts_with('"');
        // A word after the scheme's name ("Basic authentication") is text.
        let word = token.chars().all(|c| c.is_ascii_lowercase());
        let done = text[from..].starts_with(REDACTED);
        if len > 0 && !parameter && !word && !done {
            out.push_str(&text[at..from]);
            out.push_str(REDACTED);
            at = from + len;
        }
        i = from + len.max(1).min(text.len() - from);
    }
    out.push_str(&text[at..]);
    out
}

fn is_base64url(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// Compact JWS/JWE: `eyJ` then dot-separated base64url parts.
fn jwts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("eyJ") {
        let tail = &rest[start..];
        let len = tail
            .find(|c: char| !(is_base64url(c) || c == '.'))
            .unwrap_or(tail.len());
        let candidate = &tail[..len];
        out.push_str(&rest[..start]);
        if candidate.matches('.').count() >= 1 && len >= 16 {
            out.push_str(REDACTED);
        } else {
            out.push_str(candidate);
        }
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// `-----BEGIN ...-----` to the matching end line (or the text's end).
fn pem_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN") {
        out.push_str(&rest[..start]);
        out.push_str(REDACTED);
        let tail = &rest[start..];
        rest = match tail.find("-----END") {
            Some(end) => {
                let after = &tail[end + "-----END".len()..];
                match after.find("-----") {
                    Some(close) => &after[close + 5..],
                    None => "",
                }
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn a_redirect_keeps_its_address_and_loses_its_code() {
        let text = redact(
            "redirect \"http://127.0.0.1:9/callback?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz123&iss=http%3A%2F%2Fas\" was refused",
            &[],
        );
        assert!(!text.contains("SplxlOBeZQQYbYS6WxSbIA"), "{text}");
        assert!(!text.contains("xyz123"), "{text}");
        assert!(
            text.contains("http://127.0.0.1:9/callback?code=[REDACTED]"),
            "{text}"
        );
        assert!(text.contains("iss=http%3A%2F%2Fas"), "{text}");
        let twice = redact("callback?code=c0de-1234&state=s", &["c0de-1234"]);
        assert_eq!(twice, "callback?code=[REDACTED]&state=[REDACTED]");
    }

    #[test]
    fn tokens_secrets_assertions_and_keys_are_removed_wherever_they_appear() {
        let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
        let cases = [
            (
                "{\"access_token\": \"at-1234abcd\", \"token_type\": \"Bearer\"}",
                "at-1234abcd",
            ),
            ("{\"refresh_token\":\"rt-99887766\"}", "rt-99887766"),
            (
                "grant_type=refresh_token&refresh_token=rt-55443322&resource=x",
                "rt-55443322",
            ),
            ("client_id=m&client_secret=hunter22&x=1", "hunter22"),
            (
                "sent Authorization: Bearer at-0badc0de0badc0de",
                "at-0badc0de0badc0de",
            ),
            (
                "sent DPoP at-feedfacefeedface and a proof",
                "at-feedfacefeedface",
            ),
            (
                "Basic bWFjaGluZS0xOnMzY3JldA== was refused",
                "bWFjaGluZS0xOnMzY3JldA",
            ),
            (&format!("bad client assertion {jwt}"), "c2lnbmF0dXJl"),
            (
                "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMG\n-----END PRIVATE KEY-----\n",
                "MIGHAgEAMBMG",
            ),
            ("the secret s3cr3t-value is wrong", "s3cr3t-value"),
        ];
        for (text, secret) in cases {
            let out = redact(text, &["s3cr3t-value"]);
            assert!(!out.contains(secret), "{text} -> {out}");
            assert!(out.contains("[REDACTED]"), "{text} -> {out}");
        }
    }

    #[test]
    fn a_challenge_and_plain_words_are_left_as_they_are() {
        for text in [
            "Bearer error=\"invalid_token\", resource_metadata=\"http://a/.well-known/x\"",
            "the token endpoint http://a/token refused: invalid_grant",
            "a refresh token was refused",
            "OAuth authorization was refused: the user said no",
            "HTTP Basic authentication failed",
        ] {
            assert_eq!(redact(text, &[]), text);
        }
    }
}
