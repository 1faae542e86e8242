//! Text from elsewhere (an agent's output, a visitor's comment, an issue body) made safe
//! to print on a terminal: control characters other than newline and tab are dropped,
//! so no escape sequence in it can move the cursor, rewrite what was printed, change the
//! window's title or hide lines.

/// `text` without control characters, newlines and tabs kept.
pub fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| *c == '\n' || *c == '\t' || !c.is_control())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_carriage_returns_are_dropped() {
        let hostile = "ok\r\x1b[2Kfake line\x1b]0;title\x07\n\tindented\u{9b}31m\u{7f}";
        assert_eq!(printable(hostile), "ok[2Kfake line]0;title\n\tindented31m");
    }
}
