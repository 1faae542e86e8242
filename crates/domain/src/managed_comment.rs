//! Managed comments: the PR comments Handoff owns, each found by a hidden marker
//! on its first line. This file builds their bodies and reads them back; it knows
//! nothing of HTTP or SQLite.
//!
//! A body is laid out as the existing workflow lays it out, so both can share a PR:
//!
//! ```text
//! <!-- sandbox-qa-review -->
//! ### 🔍 QA code review (AI — edit freely; plan builds on your edits)
//!
//! _2026-11-30 03:44 UTC · Handoff run 12 · branch `feedback/f2c-fb-x`_
//! <!-- handoff-content sha256:9f86d081… -->
//!
//! …the content…
//! ```
//!
//! Reading back strips the marker, the header, the time line and the content digest,
//! so the next stage gets only the content, including every correction the owner made.
//!
//! The digest line (invisible on GitHub) is the SHA-256 of the content as Handoff
//! posted it. It lets Handoff tell its own text from an edit without any local history:
//! on a fresh installation, or after a post whose answer was lost, a body whose content
//! still matches its digest is the agent's; one whose content differs was edited.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use super::ids::RunId;
use super::untrusted_text::visible_part;

crate::stored_text_enum! {
    /// Which managed comment: one per QA stage, and the follow-ups thread.
    pub enum CommentKind as "comment kind" {
        Review => "review",
        Plan => "plan",
        Results => "results",
        FollowUps => "followups",
    }
}

impl CommentKind {
    /// The hidden first line that identifies the comment.
    pub fn marker(self) -> &'static str {
        match self {
            CommentKind::Review => "<!-- sandbox-qa-review -->",
            CommentKind::Plan => "<!-- sandbox-qa-plan -->",
            CommentKind::Results => "<!-- sandbox-qa-results -->",
            CommentKind::FollowUps => "<!-- f2c-followups -->",
        }
    }

    /// The visible header under the marker.
    pub fn header(self) -> &'static str {
        match self {
            CommentKind::Review => {
                "### 🔍 QA code review (AI — edit freely; plan builds on your edits)"
            }
            CommentKind::Plan => "### 🧪 QA test plan (AI — edit freely; test runs exactly this)",
            CommentKind::Results => "### 🧪 QA review — test results",
            CommentKind::FollowUps => "### 💬 Follow-ups (the thread the agent works from)",
        }
    }

    /// The kind whose marker is the first line of `body` a reader would see (blank
    /// lines and characters that take no room before it do not count), if any. A marker
    /// anywhere else (a quoted reply, a mention in prose) does not count.
    pub fn of_body(body: &str) -> Option<CommentKind> {
        let first_line = body
            .lines()
            .map(visible_part)
            .find(|line| !line.is_empty())?;
        CommentKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.marker() == first_line)
    }
}

/// GitHub refuses comments over 65,536 characters; content is cut well below that so
/// the marker, header and time line always fit.
pub const CONTENT_LIMIT_CHARS: usize = 60_000;
const _: () = assert!(
    CONTENT_LIMIT_CHARS == 60_000,
    "truncation_notice names the limit in words"
);

/// What the time line of a body says besides the time.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct BodyContext {
    pub run_id: Option<RunId>,
    pub branch: Option<String>,
}

/// A body ready to send, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltBody {
    /// The whole body, as it goes to GitHub.
    pub body: String,
    /// The content as it stands in the body (cut, with its notice, when too long).
    pub content: String,
    /// The untruncated content, when it had to be cut.
    pub full_content: Option<String>,
}

/// The notice that ends cut content; it says where the whole text is.
pub fn truncation_notice(context: &BodyContext) -> String {
    let place = match context.run_id {
        Some(run) => format!("in Handoff, with run {run}"),
        None => "in Handoff's history of this comment".to_owned(),
    };
    format!("\n\n---\n_…cut at 60,000 characters to fit on GitHub; the full text is kept {place}._")
}

/// Builds the body of a `kind` comment holding `content`.
pub fn build_body(
    kind: CommentKind,
    content: &str,
    at: DateTime<Utc>,
    context: &BodyContext,
) -> BuiltBody {
    let (shown, full_content) = cut_to_limit(content.trim_end(), context);
    let mut meta = vec![at.format("%Y-%m-%d %H:%M UTC").to_string()];
    if let Some(run) = context.run_id {
        meta.push(format!("Handoff run {run}"));
    }
    if let Some(branch) = &context.branch {
        meta.push(format!("branch `{branch}`"));
    }
    let body = [
        kind.marker(),
        kind.header(),
        "",
        &format!("_{}_", meta.join(" · ")),
        &content_digest_line(&shown),
        "",
        &shown,
    ]
    .join("\n");
    BuiltBody {
        body,
        content: shown,
        full_content,
    }
}

/// Is `line` a time line as [`build_body`] writes it (or as the seed workflow did)?
fn is_time_line(line: &str) -> bool {
    let line = line.trim();
    let Some(inner) = line
        .strip_prefix('_')
        .and_then(|rest| rest.strip_suffix('_'))
    else {
        return false;
    };
    // It begins with a date: `2026-11-30 03:44 UTC` or `2026-11-30T03:44:00Z`.
    let bytes = inner.as_bytes();
    bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[5..7].iter().all(u8::is_ascii_digit)
        && bytes[7] == b'-'
}

const DIGEST_PREFIX: &str = "<!-- handoff-content sha256:";
const DIGEST_SUFFIX: &str = " -->";

/// The SHA-256 of `content` as the next stage reads it, in lowercase hex.
pub fn content_digest(content: &str) -> String {
    let normalized = content.replace("\r\n", "\n");
    let digest = Sha256::digest(normalized.trim_end().as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The hidden line that records the digest of the content Handoff posted.
fn content_digest_line(content: &str) -> String {
    format!("{DIGEST_PREFIX}{}{DIGEST_SUFFIX}", content_digest(content))
}

/// The digest recorded on `line`, if it is a digest line.
fn digest_of_line(line: &str) -> Option<&str> {
    let digest = line
        .trim()
        .strip_prefix(DIGEST_PREFIX)?
        .strip_suffix(DIGEST_SUFFIX)?;
    (digest.len() == 64 && digest.bytes().all(|byte| byte.is_ascii_hexdigit())).then_some(digest)
}

/// The run a time line names (`Handoff run 12`), if it names one.
fn run_of_time_line(line: &str) -> Option<RunId> {
    let after = line.split("Handoff run ").nth(1)?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().map(RunId)
}

/// A managed comment's body split in two: the chrome (marker, header, time line, content
/// digest, and the blank lines around them) and the content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitBody {
    pub chrome: String,
    pub content: String,
    /// The digest of the content Handoff posted, when the chrome records one.
    pub posted_digest: Option<String>,
    /// The run the time line names, when it names one.
    pub run_id: Option<RunId>,
}

impl SplitBody {
    /// Whether the content is still exactly what Handoff posted: `None` when the body
    /// records no digest (it was not posted by this version of Handoff).
    pub fn content_as_posted(&self) -> Option<bool> {
        self.posted_digest
            .as_deref()
            .map(|digest| digest == content_digest(&self.content))
    }
}

/// Splits `body` into chrome and content (what the next stage reads). Anything the
/// owner wrote stays in the content, even above a header they moved. `None` when
/// `body` is not a `kind` comment (its first line is not the marker).
pub fn split_body(kind: CommentKind, body: &str) -> Option<SplitBody> {
    if CommentKind::of_body(body) != Some(kind) {
        return None;
    }
    let normalized = body.replace("\r\n", "\n");
    let lines: Vec<&str> = normalized.split('\n').collect();
    // The marker is the first line a reader sees; the chrome starts after it.
    let marker_line = lines
        .iter()
        .position(|line| !visible_part(line).is_empty())
        .unwrap_or(0);
    let mut index = marker_line + 1;
    let skip_blank = |index: &mut usize| {
        while lines.get(*index).is_some_and(|line| line.trim().is_empty()) {
            *index += 1;
        }
    };
    skip_blank(&mut index);
    if lines
        .get(index)
        .is_some_and(|line| line.trim() == kind.header())
    {
        index += 1;
        skip_blank(&mut index);
    }
    let mut run_id = None;
    if lines.get(index).is_some_and(|line| is_time_line(line)) {
        run_id = run_of_time_line(lines[index]);
        index += 1;
        skip_blank(&mut index);
    }
    let mut posted_digest = None;
    if let Some(digest) = lines.get(index).and_then(|line| digest_of_line(line)) {
        posted_digest = Some(digest.to_ascii_lowercase());
        index += 1;
        skip_blank(&mut index);
    }
    let content_lines = lines.get(index..).unwrap_or_default();
    let mut chrome = lines[..index].join("\n");
    chrome.push('\n');
    Some(SplitBody {
        chrome,
        content: content_lines.join("\n").trim_end().to_owned(),
        posted_digest,
        run_id,
    })
}

/// The content of a managed comment's body, as the next stage reads it: without the
/// marker, the header and the time line. `None` when `body` is not a `kind` comment.
pub fn read_content(kind: CommentKind, body: &str) -> Option<String> {
    split_body(kind, body).map(|split| split.content)
}

/// The content of a comment Handoff found by its stored id: like [`read_content`], but a
/// body whose marker line the owner removed still counts as the comment's, and text the
/// owner typed above the marker (a note) is theirs and comes first, while Handoff's own
/// marker, header, time line and digest never do.
pub fn read_content_of_known_comment(kind: CommentKind, body: &str) -> String {
    if let Some(content) = read_content(kind, body) {
        return content;
    }
    let normalized = body.replace("\r\n", "\n");
    let lines: Vec<&str> = normalized.split('\n').collect();
    if let Some(at) = lines
        .iter()
        .position(|line| visible_part(line) == kind.marker())
    {
        let above = lines[..at].join("\n").trim().to_owned();
        let below = read_content(kind, &lines[at..].join("\n")).unwrap_or_default();
        return match (above.is_empty(), below.is_empty()) {
            (true, _) => below,
            (false, true) => above,
            (false, false) => format!("{above}\n\n{below}"),
        };
    }
    read_content(kind, &format!("{}\n{body}", kind.marker())).unwrap_or_default()
}

/// The body after the owner replaced the content of `base_body` with `new_content`: the
/// chrome stays as it was (a missing marker is put back), the content is cut at the
/// limit like an agent's.
pub fn replace_content(
    kind: CommentKind,
    base_body: &str,
    new_content: &str,
    context: &BodyContext,
) -> BuiltBody {
    let chrome = split_body(kind, base_body)
        .map(|split| split.chrome)
        .unwrap_or_else(|| format!("{}\n{}\n\n", kind.marker(), kind.header()));
    let new_content = new_content.trim_end();
    let (shown, full_content) = cut_to_limit(new_content, context);
    BuiltBody {
        body: format!("{chrome}{shown}"),
        content: shown,
        full_content,
    }
}

/// `content`, cut at [`CONTENT_LIMIT_CHARS`] with the notice when longer, and the whole
/// content when it was cut.
fn cut_to_limit(content: &str, context: &BodyContext) -> (String, Option<String>) {
    if content.chars().count() > CONTENT_LIMIT_CHARS {
        let cut: String = content.chars().take(CONTENT_LIMIT_CHARS).collect();
        (
            format!("{cut}{}", truncation_notice(context)),
            Some(content.to_owned()),
        )
    } else {
        (content.to_owned(), None)
    }
}

/// Bodies as GitHub may hand them back: `\r\n` line ends and trailing space differ
/// without the text differing.
pub fn same_body(first: &str, second: &str) -> bool {
    first.replace("\r\n", "\n").trim_end() == second.replace("\r\n", "\n").trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_the_owner_typed_above_the_marker_is_theirs_and_the_chrome_is_not() {
        let posted = build_body(
            CommentKind::Review,
            "Looks fine.",
            Utc::now(),
            &BodyContext::default(),
        )
        .body;
        let edited = format!("Owner's note: also check the footer.\n\n{posted}");
        let content = read_content_of_known_comment(CommentKind::Review, &edited);
        assert_eq!(
            content,
            "Owner's note: also check the footer.\n\nLooks fine."
        );
        assert!(!content.contains("<!--"), "{content}");
        assert!(!content.contains("QA code review"), "{content}");
    }

    #[test]
    fn blank_lines_or_characters_that_take_no_room_before_the_marker_still_find_it() {
        let posted = build_body(
            CommentKind::Plan,
            "1. Log in.",
            Utc::now(),
            &BodyContext::default(),
        )
        .body;
        for before in ["\n\n", "\u{feff}", "\u{200b}\n \n", "\r\n"] {
            let body = format!("{before}{posted}");
            assert_eq!(
                CommentKind::of_body(&body),
                Some(CommentKind::Plan),
                "{before:?}"
            );
            assert_eq!(
                read_content(CommentKind::Plan, &body).as_deref(),
                Some("1. Log in.")
            );
        }
        // A quoted reply or a note above it is not a marker on the first line.
        assert_eq!(CommentKind::of_body(&format!("> {posted}")), None);
        assert_eq!(CommentKind::of_body(&format!("a note\n{posted}")), None);
    }
    use chrono::TimeZone as _;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 3, 44, 0).unwrap()
    }

    fn context() -> BodyContext {
        BodyContext {
            run_id: Some(RunId(12)),
            branch: Some("feedback/f2c-fb-x".to_owned()),
        }
    }

    #[test]
    fn body_has_marker_header_time_line_and_content() {
        let built = build_body(CommentKind::Review, "Looks fine.\n", at(), &context());
        assert_eq!(
            built.body,
            "<!-- sandbox-qa-review -->\n\
             ### 🔍 QA code review (AI — edit freely; plan builds on your edits)\n\
             \n\
             _2026-11-30 03:44 UTC · Handoff run 12 · branch `feedback/f2c-fb-x`_\n\
             <!-- handoff-content sha256:f56b5c106d7efae1f1893cb5e07827eaa46ddfef0d64f87a4a908f6ca2e60208 -->\n\
             \n\
             Looks fine."
        );
        assert_eq!(built.full_content, None);
    }

    #[test]
    fn reading_back_gives_only_the_content() {
        let content = "## Findings\n\n- the button is 20px\n\n_emphasis stays_";
        let built = build_body(CommentKind::Plan, content, at(), &context());
        assert_eq!(
            read_content(CommentKind::Plan, &built.body).as_deref(),
            Some(content)
        );
    }

    #[test]
    fn the_digest_tells_handoffs_own_text_from_an_edit() {
        let built = build_body(CommentKind::Review, "agent text\r\n", at(), &context());
        let split = split_body(CommentKind::Review, &built.body).unwrap();
        assert_eq!(split.content, "agent text");
        assert_eq!(split.content_as_posted(), Some(true));
        assert_eq!(split.run_id, Some(RunId(12)));

        let on_github = built.body.replace('\n', "\r\n") + "\r\n";
        let split = split_body(CommentKind::Review, &on_github).unwrap();
        assert_eq!(
            split.content_as_posted(),
            Some(true),
            "line ends GitHub changed are no edit"
        );

        let edited = built.body.replace("agent text", "owner text");
        let split = split_body(CommentKind::Review, &edited).unwrap();
        assert_eq!(split.content, "owner text");
        assert_eq!(split.content_as_posted(), Some(false));

        let owner_edit = replace_content(CommentKind::Review, &built.body, "mine", &context());
        let split = split_body(CommentKind::Review, &owner_edit.body).unwrap();
        assert_eq!(split.content_as_posted(), Some(false));

        let seed = "<!-- sandbox-qa-review -->\n### 🔍 QA code review (AI — edit freely; plan builds on your edits)\n\n_2026-01-02T03:04:05Z · [run](https://x) · branch `main`_\n\nold";
        let split = split_body(CommentKind::Review, seed).unwrap();
        assert_eq!(split.content_as_posted(), None, "no digest, no verdict");
        assert_eq!(split.run_id, None);
    }

    #[test]
    fn a_time_line_without_run_or_branch_is_stripped_too() {
        let built = build_body(
            CommentKind::Review,
            "just this",
            at(),
            &BodyContext::default(),
        );
        assert!(built.body.contains("\n_2026-11-30 03:44 UTC_\n"));
        assert_eq!(
            read_content(CommentKind::Review, &built.body).as_deref(),
            Some("just this")
        );
        let emphasis = "<!-- sandbox-qa-review -->\n_not a date, but emphasis_\nrest";
        assert_eq!(
            read_content(CommentKind::Review, emphasis).as_deref(),
            Some("_not a date, but emphasis_\nrest")
        );
    }

    #[test]
    fn reading_back_the_seed_workflows_layout_strips_its_chrome_too() {
        let body = "<!-- sandbox-qa-plan -->\n### 🧪 QA test plan (AI — edit freely; test runs exactly this)\n\n_2026-01-02T03:04:05Z · [run](https://github.com/o/r/actions/runs/1) · branch `main`_\n\n1. Open the page";
        assert_eq!(
            read_content(CommentKind::Plan, body).as_deref(),
            Some("1. Open the page")
        );
    }

    #[test]
    fn owner_edits_above_and_below_survive_reading_back() {
        let body = "<!-- sandbox-qa-review -->\nOwner's note first.\n### 🔍 QA code review (AI — edit freely; plan builds on your edits)\n\nrest";
        assert_eq!(
            read_content(CommentKind::Review, body).as_deref(),
            Some("Owner's note first.\n### 🔍 QA code review (AI — edit freely; plan builds on your edits)\n\nrest")
        );
    }

    #[test]
    fn a_marker_counts_only_on_the_first_line() {
        let quoted = "> <!-- sandbox-qa-review -->\n> ### 🔍 QA code review\n\nI disagree";
        assert_eq!(CommentKind::of_body(quoted), None);
        let mentioned = "see below\n<!-- sandbox-qa-review -->";
        assert_eq!(CommentKind::of_body(mentioned), None);
        assert_eq!(read_content(CommentKind::Review, quoted), None);
        assert_eq!(
            CommentKind::of_body("  <!-- sandbox-qa-results -->  \r\nx"),
            Some(CommentKind::Results)
        );
    }

    #[test]
    fn an_owner_edit_keeps_the_chrome_and_replaces_the_content() {
        let built = build_body(CommentKind::Review, "agent text", at(), &context());
        let edited = replace_content(CommentKind::Review, &built.body, "owner text\n", &context());
        assert_eq!(edited.body, built.body.replace("agent text", "owner text"));
        assert_eq!(edited.content, "owner text");
        let without_marker = replace_content(CommentKind::Plan, "just text", "new", &context());
        assert!(without_marker
            .body
            .starts_with("<!-- sandbox-qa-plan -->\n### 🧪"));
        assert_eq!(
            read_content(CommentKind::Plan, &without_marker.body).as_deref(),
            Some("new")
        );
    }

    #[test]
    fn a_known_comment_without_its_marker_still_reads() {
        assert_eq!(
            read_content_of_known_comment(CommentKind::Plan, "owner removed the marker\n1. step"),
            "owner removed the marker\n1. step"
        );
        assert!(same_body("a\r\nb\n", "a\nb"));
    }

    #[test]
    fn long_content_is_cut_with_a_notice_and_kept_whole() {
        let long = "é".repeat(70_000);
        let built = build_body(CommentKind::Review, &long, at(), &context());
        assert_eq!(built.full_content.as_deref(), Some(long.as_str()));
        assert!(built.content.starts_with(&"é".repeat(CONTENT_LIMIT_CHARS)));
        assert!(built.content.contains("cut at 60,000 characters"));
        assert!(built.content.contains("run 12"));
        assert!(built.body.chars().count() < 65_536);
        let read = read_content(CommentKind::Review, &built.body).unwrap();
        assert_eq!(
            read, built.content,
            "the next stage gets what the comment says"
        );
    }
}
