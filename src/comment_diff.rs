//! Comparing two versions of a managed comment: a unified diff for the command
//! line and a line-by-line list for the app's side-by-side view.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use crate::domain::CommentVersion;

crate::stored_text_enum! {
    /// What happened to a line between two versions.
    pub enum LineChange as "line change" {
        Same => "same",
        Added => "added",
        Removed => "removed",
    }
}

/// One line of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    pub change: LineChange,
    pub text: String,
}

/// How a version is named in a diff header: `version 2 (owner_in_handoff, 2026-11-30 03:44)`.
pub fn version_label(version: &CommentVersion) -> String {
    format!(
        "version {} ({}, {})",
        version.number,
        version.origin,
        version.created_at.format("%Y-%m-%d %H:%M")
    )
}

/// The content as lines, each ending in a newline (stored content has no final one).
fn as_lines(version: &CommentVersion) -> String {
    format!("{}\n", version.whole_content().trim_end_matches('\n'))
}

/// A unified diff of the whole contents (uncut) of `from` and `to`; empty when equal.
pub fn unified_diff(from: &CommentVersion, to: &CommentVersion) -> String {
    let (old, new) = (as_lines(from), as_lines(to));
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(&version_label(from), &version_label(to))
        .to_string()
}

/// Every line of both contents, marked same, added or removed.
pub fn line_changes(from: &CommentVersion, to: &CommentVersion) -> Vec<DiffLine> {
    text_line_changes(from.whole_content(), to.whole_content())
}

/// Every line of two texts, marked same, added or removed (a text being edited against
/// a stored version, for example).
pub fn text_line_changes(from: &str, to: &str) -> Vec<DiffLine> {
    let lines = |text: &str| format!("{}\n", text.trim_end_matches('\n'));
    let (old, new) = (lines(from), lines(to));
    TextDiff::from_lines(&old, &new)
        .iter_all_changes()
        .map(|change| DiffLine {
            change: match change.tag() {
                ChangeTag::Equal => LineChange::Same,
                ChangeTag::Insert => LineChange::Added,
                ChangeTag::Delete => LineChange::Removed,
            },
            text: change.value().trim_end_matches('\n').to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{CommentVersionId, ManagedCommentId, VersionOrigin};

    fn version(number: u32, content: &str, origin: VersionOrigin) -> CommentVersion {
        CommentVersion {
            id: CommentVersionId(number as i64),
            managed_comment_id: ManagedCommentId(1),
            number,
            body: content.to_owned(),
            content: content.to_owned(),
            full_content: None,
            origin,
            author_login: None,
            run_id: None,
            based_on: None,
            created_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            edited_by_other: false,
            approved_at: None,
        }
    }

    #[test]
    fn the_diff_shows_what_the_owner_changed() {
        let agent = version(1, "1. open the page\n2. click\n", VersionOrigin::Agent);
        let owner = version(
            2,
            "1. open the page\n2. click twice\n3. check the colour\n",
            VersionOrigin::OwnerInHandoff,
        );
        let diff = unified_diff(&agent, &owner);
        assert!(diff.starts_with("--- version 1 (agent, "), "{diff}");
        assert!(
            diff.contains("\n-2. click\n+2. click twice\n+3. check the colour\n"),
            "{diff}"
        );
        let lines = line_changes(&agent, &owner);
        assert_eq!(lines[0].change, LineChange::Same);
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.change == LineChange::Added)
                .count(),
            2
        );
        assert_eq!(unified_diff(&agent, &agent), "");
    }
}
