//! Following the mirror never ends for good: when the change journal cannot be read, the
//! listener is told the window no longer follows (and why), the watch is opened again
//! with a growing pause, and when it opens the listener is told it follows again and
//! that everything may have changed; changes after that arrive as before.

use handoff_test_support as support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use handoff_api::mirror_following::{
    follow_the_mirror, FollowingPace, MirrorFollowing, MirrorListener,
};
use handoff_api::records::MirrorChangesRecord;
use handoff_api::session::RunNotice;
use handoff_api::AppCore;
use support::eventually::eventually;
use support::store_tampering::{hide_the_change_journal, restore_the_change_journal};
use support::{seed, temp_store};

#[derive(Debug, Clone)]
enum Heard {
    Changed(MirrorChangesRecord),
    Notice,
    Following(MirrorFollowing),
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Heard>>>);

impl MirrorListener for Recorder {
    fn mirror_changed(&self, changes: MirrorChangesRecord) {
        self.0.lock().unwrap().push(Heard::Changed(changes));
    }
    fn run_notice(&self, _notice: RunNotice) {
        self.0.lock().unwrap().push(Heard::Notice);
    }
    fn following(&self, following: MirrorFollowing) {
        self.0.lock().unwrap().push(Heard::Following(following));
    }
}

impl Recorder {
    /// Waits (up to ten seconds) until something heard matches; returns it.
    async fn until(&self, what: &str, matches: impl Fn(&Heard) -> bool) -> Heard {
        eventually(&format!("{what} is heard"), || async {
            self.0
                .lock()
                .unwrap()
                .iter()
                .find(|heard| matches(heard))
                .cloned()
        })
        .await
    }

    fn forget(&self) {
        self.0.lock().unwrap().clear();
    }
}

fn quick_pace() -> FollowingPace {
    FollowingPace {
        poll: Duration::from_millis(20),
        abandoned_runs: Duration::from_secs(60),
        first_retry: Duration::from_millis(50),
        longest_retry: Duration::from_millis(400),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watch_that_fails_is_opened_again_and_the_listener_is_told_both_ways() {
    let (dir, store) = temp_store().await;
    let items = seed::seed_dashboard(&store).await;
    let heard = Recorder::default();
    let following = tokio::spawn(follow_the_mirror(
        AppCore::new(store.clone(), dir.path()),
        heard.clone(),
        quick_pace(),
    ));

    heard
        .until(
            "that changes are followed",
            |heard| matches!(heard, Heard::Following(state) if state.following),
        )
        .await;

    // Following works: a follow-up names its item.
    store
        .feedback()
        .add_owner_follow_up(items[0].id, "Also the login page.")
        .await
        .unwrap();
    heard
        .until("the first item's change", |heard| {
            matches!(heard, Heard::Changed(changes) if changes.feedback_ids.contains(&items[0].id.0))
        })
        .await;

    // The journal goes away: the listener hears that the window no longer follows.
    heard.forget();
    hide_the_change_journal(&store).await;
    let lost = heard
        .until(
            "that changes are no longer followed",
            |heard| matches!(heard, Heard::Following(state) if !state.following),
        )
        .await;
    let Heard::Following(lost) = lost else {
        unreachable!()
    };
    assert!(
        lost.problem
            .as_deref()
            .is_some_and(|problem| problem.contains("mirror_changes")),
        "{lost:?}"
    );
    assert!(lost.retry_in_seconds.is_some(), "{lost:?}");
    // A change made meanwhile is not lost to the page: it reloads everything after.
    store
        .feedback()
        .add_owner_follow_up(items[1].id, "And the footer.")
        .await
        .unwrap();
    restore_the_change_journal(&store).await;
    heard
        .until("that changes are followed again", |heard| {
            matches!(heard, Heard::Following(state) if state.following && state.problem.is_none())
        })
        .await;
    heard
        .until(
            "that everything may have changed",
            |heard| matches!(heard, Heard::Changed(changes) if changes.everything),
        )
        .await;

    // And following goes on as before.
    heard.forget();
    store
        .feedback()
        .add_owner_follow_up(items[2].id, "And the header.")
        .await
        .unwrap();
    heard
        .until("the third item's change", |heard| {
            matches!(heard, Heard::Changed(changes) if changes.feedback_ids.contains(&items[2].id.0))
        })
        .await;
    assert!(!following.is_finished(), "following never ends by itself");
    following.abort();
    assert!(
        !heard
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|heard| matches!(heard, Heard::Notice)),
        "no run ended, so no notice"
    );
}
