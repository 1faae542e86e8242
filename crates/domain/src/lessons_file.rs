//! The lessons file: a marked section of AGENTS.md (or the file the repository names,
//! CLAUDE.md for one) that holds the accepted lessons, so that every agent and every
//! person on the project reads them under version control. Only the section between
//! the markers is Handoff's; the owner's own text around it is never touched.

use super::lesson::Lesson;

/// The line that opens Handoff's section.
pub const SECTION_START: &str = "<!-- handoff:lessons:start -->";
/// The line that closes it.
pub const SECTION_END: &str = "<!-- handoff:lessons:end -->";

/// The section's text (between the markers, markers excluded) for `lessons`: those the
/// next run carries, newest accepted first.
pub fn lessons_section(lessons: &[Lesson]) -> String {
    let mut carried: Vec<&Lesson> = lessons.iter().filter(|l| l.is_carried()).collect();
    carried.sort_by_key(|lesson| std::cmp::Reverse((lesson.decided_at, lesson.id)));
    let mut text = String::from(
        "## Lessons from the owner's corrections\n\n\
         Rules the repository owner drew from their own corrections of AI agents' work, \
         kept by Handoff. Follow them.\n\n",
    );
    if carried.is_empty() {
        text.push_str("(None yet.)\n");
    }
    for lesson in carried {
        match lesson.paths.as_slice() {
            [] => text.push_str(&format!("- {}\n", lesson.rule)),
            paths => text.push_str(&format!(
                "- {} (concerns: {})\n",
                lesson.rule,
                paths.join(", ")
            )),
        }
    }
    text
}

/// The section as it stands in `file` (between the markers), if the file has one.
pub fn section_of(file: &str) -> Option<&str> {
    let start = file.find(SECTION_START)? + SECTION_START.len();
    let end = file[start..].find(SECTION_END)? + start;
    Some(file[start..end].trim_matches('\n'))
}

/// `file` (or a new file, for `None`) with its section holding `section`: replaced in
/// place when the markers are there, else added at the end after the owner's text.
pub fn with_section(file: Option<&str>, section: &str) -> String {
    let block = format!(
        "{SECTION_START}\n{}\n{SECTION_END}",
        section.trim_matches('\n')
    );
    let Some(file) = file else {
        return format!("{block}\n");
    };
    if let Some(start) = file.find(SECTION_START) {
        if let Some(end) = file[start..].find(SECTION_END).map(|end| end + start) {
            return format!(
                "{}{block}{}",
                &file[..start],
                &file[end + SECTION_END.len()..]
            );
        }
    }
    if file.trim().is_empty() {
        return format!("{block}\n");
    }
    format!("{}\n\n{block}\n", file.trim_end_matches('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owners_own_text_around_the_section_is_kept_as_it_is() {
        let owners = "# Agents\n\nRun `cargo test` before you push.\n";
        let first = with_section(Some(owners), "- one");
        assert!(first.starts_with(owners.trim_end()), "{first}");
        assert_eq!(section_of(&first), Some("- one"));
        let mut edited = first.clone();
        edited.push_str("\nA line the owner added below.\n");
        let second = with_section(Some(&edited), "- one\n- two");
        assert!(second.starts_with(owners.trim_end()));
        assert!(
            second.ends_with("\nA line the owner added below.\n"),
            "{second}"
        );
        assert_eq!(section_of(&second), Some("- one\n- two"));
        assert_eq!(
            with_section(None, "- one"),
            format!("{SECTION_START}\n- one\n{SECTION_END}\n")
        );
    }

    #[test]
    fn a_file_without_both_markers_has_no_section() {
        assert_eq!(section_of("no markers"), None);
        assert_eq!(section_of(&format!("{SECTION_START}\n- open only")), None);
    }
}
