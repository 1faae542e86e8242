//! Head branch names (`feedback/f2c-{safeId}`): whatever a feedback id looks like, its
//! head branch is a name git accepts, asked of real git
//! (`git check-ref-format --branch`).

use std::process::Command;

use handoff::domain::{head_branch_for, PublicFeedbackId};
use proptest::prelude::*;

fn git_accepts_branch(name: &str) -> bool {
    let output = Command::new("git")
        .args(["check-ref-format", "--branch", name])
        .output()
        .expect("git runs");
    output.status.success() && String::from_utf8_lossy(&output.stdout).trim() == name
}

/// Ids made of the pieces that break branch names, mixed with ordinary text.
fn hostile_id() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("..".to_owned()),
        Just("@{".to_owned()),
        Just("/".to_owned()),
        Just(".".to_owned()),
        Just(" ".to_owned()),
        Just(".lock".to_owned()),
        Just("~^:?*[\\".to_owned()),
        Just("-".to_owned()),
        Just("\u{7f}\t\n".to_owned()),
        "[a-zA-Z0-9_-]{1,12}",
        "\\PC{1,8}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_id_becomes_a_branch_name_git_accepts(id in hostile_id()) {
        let branch = head_branch_for(&PublicFeedbackId(id.clone()));
        prop_assert!(branch.starts_with("feedback/f2c-"));
        prop_assert!(git_accepts_branch(&branch), "git refused {branch:?} made from {id:?}");
    }

    #[test]
    fn different_ids_get_different_branches(first in hostile_id(), second in hostile_id()) {
        prop_assume!(first != second);
        prop_assert_ne!(
            head_branch_for(&PublicFeedbackId(first)),
            head_branch_for(&PublicFeedbackId(second))
        );
    }
}

#[test]
fn the_ids_the_issue_names_all_work() {
    let long = "x".repeat(300);
    for id in [
        "ünïcödé-功能",
        "a/b/c",
        "dots.in.id",
        "..",
        "@{upstream}",
        "with spaces in it",
        long.as_str(),
        "",
        "fb-abc123",
        "issue-42",
    ] {
        let branch = head_branch_for(&PublicFeedbackId(id.to_owned()));
        assert!(git_accepts_branch(&branch), "{id:?} gave {branch:?}");
        assert!(
            branch.len() <= 100,
            "{branch:?} is short enough for any file system"
        );
    }
    assert_eq!(
        head_branch_for(&PublicFeedbackId("issue-42".to_owned())),
        "feedback/f2c-issue-42"
    );
}
