//! A secret value, and scrubbing it out of text: the GitHub token, the E2B key, agents'
//! API keys, which the OS keyring alone keeps (the store's `secrets`).
//!
//! Nothing else in Handoff stores a secret: not the database, not a log, not an error
//! message. A [`Secret`] prints as `[redacted]` in `Debug` and has no `Display`, so it
//! cannot slip into text by accident; [`redact`] scrubs one out of text that came from
//! elsewhere (an HTTP library's error, a process's output).

use std::fmt;

/// A secret value. Read it with [`Secret::expose`], only where it is sent.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Replaces every occurrence of `secret` in `text` with `[redacted]`.
pub fn redact(text: &str, secret: &Secret) -> String {
    if secret.0.len() < 4 {
        return text.to_owned();
    }
    text.replace(&secret.0, "[redacted]")
}

/// The openings of the tokens and keys Handoff handles: GitHub's token kinds, the agent
/// providers' API keys and E2B's keys.
const TOKEN_OPENINGS: &[&str] = &[
    "github_pat_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "sk-ant-",
    "sk-proj-",
    "sk-",
    "e2b_",
];

/// The fewest characters after an opening for a word to count as a token.
const TOKEN_BODY_MIN: usize = 16;

/// Replaces every word that looks like a token or key (one of the known openings,
/// then at least 16 letters, digits, `_` or `-`) with its opening and `[redacted]`.
/// For text whose secrets are not known one by one, like the log file.
pub fn redact_token_shapes(text: &str) -> std::borrow::Cow<'_, str> {
    let is_body =
        |character: char| character.is_ascii_alphanumeric() || matches!(character, '_' | '-');
    let mut out: Option<String> = None;
    let mut copied_up_to = 0;
    let mut position = 0;
    while position < text.len() {
        let rest = &text[position..];
        let starts_a_word = text[..position]
            .chars()
            .next_back()
            .is_none_or(|before| !is_body(before));
        let opening = starts_a_word
            .then(|| {
                TOKEN_OPENINGS
                    .iter()
                    .find(|opening| rest.starts_with(**opening))
            })
            .flatten();
        if let Some(opening) = opening {
            let body_length = rest[opening.len()..]
                .find(|character: char| !is_body(character))
                .unwrap_or(rest.len() - opening.len());
            if body_length >= TOKEN_BODY_MIN {
                let buffer = out.get_or_insert_with(|| String::with_capacity(text.len()));
                buffer.push_str(&text[copied_up_to..position]);
                buffer.push_str(opening);
                buffer.push_str(REDACTED);
                position += opening.len() + body_length;
                copied_up_to = position;
                continue;
            }
        }
        position += rest.chars().next().map_or(1, char::len_utf8);
    }
    match out {
        Some(mut buffer) => {
            buffer.push_str(&text[copied_up_to..]);
            std::borrow::Cow::Owned(buffer)
        }
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// Every secret a run knows (the GitHub token, the agent's key, the E2B key) and the
/// encoded forms they travel in, scrubbed out of whatever a run stores or shows: its
/// log, its output, its failure message. An agent that prints its environment leaves
/// `[redacted]` in the log, not its key.
#[derive(Clone, Default)]
pub struct Redactor {
    /// The secret texts, longest first (so a secret inside another goes with it).
    texts: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.texts.len())
    }
}

/// What takes a secret's place.
pub const REDACTED: &str = "[redacted]";

impl Redactor {
    /// A redactor for `secrets`, each with the forms it may take on the way: as is, and
    /// as the base64 of git's `x-access-token:` basic authorization.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        use base64::Engine as _;
        let mut texts = Vec::new();
        for secret in secrets {
            let value = secret.expose();
            if value.len() < 4 {
                continue;
            }
            texts.push(value.to_owned());
            texts.push(
                base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{value}")),
            );
            texts.push(base64::engine::general_purpose::STANDARD.encode(value));
        }
        texts.sort_by_key(|text| std::cmp::Reverse(text.len()));
        texts.dedup();
        Redactor { texts }
    }

    /// `text` with every secret replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.texts {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }

    /// [`Redactor::redact`] over bytes (output that may not be UTF-8).
    pub fn redact_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut bytes = bytes.to_vec();
        for secret in &self.texts {
            bytes = replace_bytes(&bytes, secret.as_bytes(), REDACTED.as_bytes());
        }
        bytes
    }

    /// How many bytes at the end of `bytes` could be the start of a secret that the
    /// next piece of output completes: output to hold back, so that a secret split
    /// between two pieces of output is still found (and nothing else waits).
    pub fn possible_secret_start(&self, bytes: &[u8]) -> usize {
        self.texts
            .iter()
            .filter_map(|secret| {
                let secret = secret.as_bytes();
                (1..secret.len())
                    .rev()
                    .find(|length| bytes.ends_with(&secret[..*length]))
            })
            .max()
            .unwrap_or(0)
    }
}

fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut index = 0;
    while index < haystack.len() {
        if haystack[index..].starts_with(needle) {
            out.extend_from_slice(with);
            index += needle.len();
        } else {
            out.push(haystack[index]);
            index += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shaped_words_are_scrubbed_and_ordinary_words_kept() {
        let text = "token=ghp_0123456789abcdefABCDEF, key sk-ant-api03-abcdefghijklmnopqrstu \
                    and e2b_0123456789abcdef0123; but ghp_short, task-ant-x, desk-0123456789abcdefghij";
        let clean = redact_token_shapes(text);
        assert_eq!(
            clean,
            "token=ghp_[redacted], key sk-ant-[redacted] \
                    and e2b_[redacted]; but ghp_short, task-ant-x, desk-0123456789abcdefghij"
        );
        assert!(matches!(
            redact_token_shapes("nothing here"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn every_form_of_a_secret_is_scrubbed() {
        use base64::Engine as _;
        let token = Secret::new("ghp_abcdefghijklmnop");
        let key = Secret::new("sk-ant-0123456789");
        let redactor = Redactor::new([&token, &key]);
        let header =
            base64::engine::general_purpose::STANDARD.encode("x-access-token:ghp_abcdefghijklmnop");
        let text = format!(
            "ANTHROPIC_API_KEY=sk-ant-0123456789\nAuthorization: Basic {header}\nghp_abcdefghijklmnop"
        );
        let clean = redactor.redact(&text);
        assert_eq!(
            clean,
            "ANTHROPIC_API_KEY=[redacted]\nAuthorization: Basic [redacted]\n[redacted]"
        );
        assert_eq!(
            redactor.redact_bytes(b"\xff key=sk-ant-0123456789 \x00"),
            b"\xff key=[redacted] \x00".to_vec()
        );
        assert_eq!(Redactor::default().redact("nothing"), "nothing");
    }

    #[test]
    fn a_secret_never_prints() {
        let token = Secret::new("ghp_abcdefghijklmnop");
        assert_eq!(format!("{token:?}"), "[redacted]");
        assert_eq!(
            redact("Authorization: token ghp_abcdefghijklmnop failed", &token),
            "Authorization: token [redacted] failed"
        );
    }
}
