//! `handoff feedback dismiss|archive|restore` and `feedback list --archived`: items off the
//! board keep their history and come back; one with a run going is refused, unchanged.

use handoff_test_support as support;

use std::path::Path;
use std::process::{Command, Output};

use handoff::Store;
use support::seed;

fn handoff(data_dir: &Path, arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args(arguments)
        .env("HANDOFF_DATA_DIR", data_dir)
        .output()
        .expect("handoff runs")
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn dismiss_archive_and_restore_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let items = seed::seed_dashboard(&store).await;
    store.close().await;
    let id_of = |title: &str| {
        items
            .iter()
            .find(|item| item.title == title)
            .unwrap()
            .id
            .to_string()
    };
    let new = id_of(seed::NEW_TITLE);
    let merged = id_of(seed::MERGED_TITLE);
    let coding = id_of(seed::CODING_TITLE);

    let dismissed = ok(handoff(dir.path(), &["feedback", "dismiss", &new]));
    assert!(
        dismissed.contains(&format!("feedback {new} is dismissed and off the board")),
        "{dismissed}"
    );
    let archived = ok(handoff(dir.path(), &["feedback", "archive", &merged]));
    assert!(archived.contains("archived"), "{archived}");

    let board = ok(handoff(dir.path(), &["feedback", "list"]));
    assert!(!board.contains(seed::NEW_TITLE), "{board}");
    assert!(!board.contains(seed::MERGED_TITLE), "{board}");
    assert!(board.contains(seed::WAITING_TITLE), "{board}");
    let shelf = ok(handoff(dir.path(), &["feedback", "list", "--archived"]));
    assert!(
        shelf.contains(&format!("[dismissed] {}", seed::NEW_TITLE)),
        "{shelf}"
    );
    assert!(
        shelf.contains(&format!("[archived] {}", seed::MERGED_TITLE)),
        "{shelf}"
    );
    assert!(!shelf.contains(seed::WAITING_TITLE), "{shelf}");

    // A run is going on the CODING item: refused, with the exit code of a failure.
    let refused = handoff(dir.path(), &["feedback", "archive", &coding]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("has a run going"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // Back on the board; its history says both.
    let restored = ok(handoff(dir.path(), &["feedback", "restore", &new]));
    assert!(restored.contains("back on the board"), "{restored}");
    let shown = ok(handoff(dir.path(), &["feedback", "show", &new]));
    assert!(
        shown.contains("off the board: dismissed  (by owner)"),
        "{shown}"
    );
    assert!(shown.contains("back on the board  (by owner)"), "{shown}");
    let board = ok(handoff(dir.path(), &["feedback", "list"]));
    assert!(board.contains(seed::NEW_TITLE), "{board}");
}
