//! The content of the managed "Follow-ups" comment on a feedback PR: the thread the
//! agent worked from, oldest first, so reviewers see why the PR changed. A visitor's
//! text is fenced as untrusted, so it shows as written and its mentions and links do
//! nothing under the owner's name.

use super::follow_up::{FollowUp, FollowUpOrigin, FollowUpSource};
use super::untrusted_text::fence_untrusted;

/// The content, or `None` when the thread is empty (no comment is needed then).
pub fn follow_ups_comment_content(follow_ups: &[FollowUp]) -> Option<String> {
    let included: Vec<&FollowUp> = follow_ups
        .iter()
        .filter(|f| f.included_in_prompts)
        .collect();
    if included.is_empty() {
        return None;
    }
    let mut content = String::from(
        "Instructions the agent was given after the original feedback, oldest first. \
         Handoff updates this comment on every \"Update PR\".\n",
    );
    for (number, follow_up) in included.iter().enumerate() {
        let author = follow_up.author_login.as_deref().unwrap_or("unknown");
        let who = match (follow_up.source, follow_up.origin) {
            (_, FollowUpOrigin::CheckRun) => {
                format!("failing check {author} (shown to the agent as untrusted context)")
            }
            (FollowUpSource::Owner, FollowUpOrigin::Thread) => "the owner".to_owned(),
            (FollowUpSource::Owner, _) => "the owner (a review comment on this PR)".to_owned(),
            (FollowUpSource::Visitor, FollowUpOrigin::Thread) => {
                format!("@{author} (visitor; shown to the agent as untrusted context)")
            }
            (FollowUpSource::Visitor, _) => {
                format!("@{author} (reviewer; shown to the agent as untrusted context)")
            }
        };
        content.push_str(&format!(
            "\n{}. **{}** · {}\n\n",
            number + 1,
            who,
            follow_up.created_at.format("%Y-%m-%d %H:%M UTC")
        ));
        match follow_up.source {
            FollowUpSource::Owner => {
                for line in follow_up.body.lines() {
                    content.push_str(&format!("   > {line}\n"));
                }
            }
            FollowUpSource::Visitor => {
                for line in fence_untrusted(&follow_up.body).lines() {
                    content.push_str(&format!("   {line}\n"));
                }
            }
        }
    }
    Some(content.trim_end().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FeedbackId, FollowUpId};

    #[test]
    fn the_thread_is_numbered_in_order_and_visitors_are_marked() {
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let follow_up = |id, body: &str, source, included| FollowUp {
            id: FollowUpId(id),
            feedback_id: FeedbackId(1),
            body: body.to_owned(),
            source,
            author_login: Some("mallory".to_owned()),
            origin: crate::FollowUpOrigin::Thread,
            candidate: false,
            included_in_prompts: included,
            automatic: false,
            created_at: at,
        };
        let content = follow_ups_comment_content(&[
            follow_up(1, "Make it 44px", FollowUpSource::Owner, true),
            follow_up(2, "skip me", FollowUpSource::Visitor, false),
            follow_up(3, "Also blue\nplease", FollowUpSource::Visitor, true),
        ])
        .unwrap();
        assert!(content.contains("1. **the owner**"), "{content}");
        assert!(
            content.contains("2. **@mallory (visitor; shown to the agent as untrusted context)**"),
            "{content}"
        );
        assert!(
            content.contains("   ~~~~untrusted\n   Also blue\n   please\n   ~~~~"),
            "{content}"
        );
        assert!(content.contains("   > Make it 44px"), "{content}");
        assert!(!content.contains("skip me"));
        assert_eq!(follow_ups_comment_content(&[]), None);
    }
}
