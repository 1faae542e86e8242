//! JSON with comments (JSONC), as `devcontainer.json` is written: `//` and `/* */`
//! comments and a trailing comma before `}` or `]` are allowed; anything else must be
//! JSON. A broken file is refused with the line and column where it broke, counted in
//! the file as the owner wrote it.

use thiserror::Error;

/// Why a JSONC text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, column {column}: {reason}")]
pub struct JsoncError {
    pub line: usize,
    pub column: usize,
    pub reason: String,
}

/// Reads `text` as JSONC into a JSON value.
pub fn parse_jsonc(text: &str) -> Result<serde_json::Value, JsoncError> {
    let plain = without_comments_and_trailing_commas(text)?;
    // Comments become spaces and a trailing comma one space, line breaks stay: a line and
    // column serde_json names are the same in the owner's file.
    serde_json::from_str(&plain).map_err(|error| JsoncError {
        line: error.line(),
        column: error.column(),
        reason: error
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or("")
            .to_owned(),
    })
}

/// `text` with each comment and trailing comma replaced by spaces (line breaks kept).
fn without_comments_and_trailing_commas(text: &str) -> Result<String, JsoncError> {
    let characters: Vec<char> = text.chars().collect();
    let mut plain = String::with_capacity(text.len());
    // Where the last comma outside a string was written, until something other than
    // space or a comment follows it; and the last character that was neither.
    let mut open_comma: Option<usize> = None;
    let mut last_significant: Option<char> = None;
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        match character {
            '"' => {
                open_comma = None;
                last_significant = Some('"');
                index = copy_string(&characters, index, &mut plain)?;
                continue;
            }
            '/' if characters.get(index + 1) == Some(&'/') => {
                while index < characters.len() && characters[index] != '\n' {
                    plain.push(' ');
                    index += 1;
                }
                continue;
            }
            '/' if characters.get(index + 1) == Some(&'*') => {
                index = blank_block_comment(&characters, index, &mut plain)?;
                continue;
            }
            // Only a comma after a value can be a trailing one: `{,}` and `[1,,]` stay
            // errors.
            ',' => {
                open_comma = match last_significant {
                    None | Some('{' | '[' | ',') => None,
                    Some(_) => Some(plain.len()),
                };
            }
            '}' | ']' => {
                if let Some(at) = open_comma.take() {
                    plain.replace_range(at..at + 1, " ");
                }
            }
            space if space.is_whitespace() => {}
            _ => open_comma = None,
        }
        if !character.is_whitespace() {
            last_significant = Some(character);
        }
        plain.push(character);
        index += 1;
    }
    Ok(plain)
}

/// Copies the string starting at `start` (its opening quote) into `plain`; returns the
/// index after its closing quote.
fn copy_string(characters: &[char], start: usize, plain: &mut String) -> Result<usize, JsoncError> {
    plain.push('"');
    let mut index = start + 1;
    while index < characters.len() {
        let character = characters[index];
        plain.push(character);
        index += 1;
        match character {
            '\\' => {
                if let Some(escaped) = characters.get(index) {
                    plain.push(*escaped);
                    index += 1;
                }
            }
            '"' => return Ok(index),
            _ => {}
        }
    }
    Err(error_at(characters, start, "a string is never closed"))
}

/// Replaces the block comment starting at `start` with spaces (keeping its line breaks);
/// returns the index after it.
fn blank_block_comment(
    characters: &[char],
    start: usize,
    plain: &mut String,
) -> Result<usize, JsoncError> {
    let mut index = start + 2;
    plain.push_str("  ");
    while index < characters.len() {
        if characters[index] == '*' && characters.get(index + 1) == Some(&'/') {
            plain.push_str("  ");
            return Ok(index + 2);
        }
        plain.push(if characters[index] == '\n' { '\n' } else { ' ' });
        index += 1;
    }
    Err(error_at(characters, start, "a /* comment is never closed"))
}

/// The error `reason` at character `index` of `characters`, with its line and column.
fn error_at(characters: &[char], index: usize, reason: &str) -> JsoncError {
    let before = &characters[..index];
    let line = before
        .iter()
        .filter(|character| **character == '\n')
        .count()
        + 1;
    let column = index
        - before
            .iter()
            .rposition(|character| *character == '\n')
            .map_or(0, |at| at + 1)
        + 1;
    JsoncError {
        line,
        column,
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_read_as_json() {
        let text = r#"{
            // The image the owner's project builds with.
            "image": "debian:12", /* a block
               over two lines */
            "runArgs": ["--init", ],
            "containerEnv": { "URL": "http://example.test/a//b", "STAR": "/*not a comment*/", },
        }"#;
        let value = parse_jsonc(text).unwrap();
        assert_eq!(value["image"], "debian:12");
        assert_eq!(value["runArgs"], serde_json::json!(["--init"]));
        assert_eq!(value["containerEnv"]["URL"], "http://example.test/a//b");
        assert_eq!(value["containerEnv"]["STAR"], "/*not a comment*/");
    }

    #[test]
    fn a_quote_escaped_in_a_string_does_not_end_it() {
        let value = parse_jsonc(r#"{ "say": "a \"quoted\" // word", }"#).unwrap();
        assert_eq!(value["say"], "a \"quoted\" // word");
    }

    #[test]
    fn broken_json_is_refused_with_its_line_and_column_in_the_owners_file() {
        let text = "{\n  // a comment\n  \"image\": \"debian:12\"\n  \"build\": {}\n}";
        let error = parse_jsonc(text).unwrap_err();
        assert_eq!((error.line, error.column), (4, 3), "{error}");
        assert!(error.reason.contains("expected"), "{error}");
    }

    #[test]
    fn an_unclosed_string_or_comment_is_refused_where_it_opened() {
        let string = parse_jsonc("{\n  \"image\": \"debian:12\n}").unwrap_err();
        assert_eq!((string.line, string.column), (2, 12), "{string}");
        assert!(string.reason.contains("never closed"), "{string}");
        let comment = parse_jsonc("{ \"a\": 1 }\n  /* left open").unwrap_err();
        assert_eq!((comment.line, comment.column), (2, 3), "{comment}");
    }

    #[test]
    fn two_commas_in_a_row_stay_an_error() {
        assert!(parse_jsonc("[1,,]").is_err());
        assert!(parse_jsonc("{,}").is_err());
    }
}
