//! Waiting on an outcome, never on time. A test that needs something to have happened
//! (a run to start, a line to reach the log, a request to reach the fake) asks for it
//! again and again until it is there, and fails with what never happened once a deadline
//! passes. The pause between asks grows from a few milliseconds, so a quick outcome is
//! seen at once and a slow one costs little; the deadline is generous, since it only
//! bounds a failing test.

use std::future::Future;
use std::time::{Duration, Instant};

/// The deadline most waits take: long enough for a loaded two-core machine.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// The first pause between two asks, and the longest.
const FIRST_PAUSE: Duration = Duration::from_millis(5);
const LONGEST_PAUSE: Duration = Duration::from_millis(200);

/// Asks `outcome` until it answers `Some`, and returns that answer; fails, saying that
/// `what` never happened, once [`PATIENCE`] has passed.
pub async fn eventually<T, Ask, Answer>(what: &str, outcome: Ask) -> T
where
    Ask: FnMut() -> Answer,
    Answer: Future<Output = Option<T>>,
{
    eventually_within(PATIENCE, what, outcome).await
}

/// [`eventually`] with a deadline of its own.
pub async fn eventually_within<T, Ask, Answer>(deadline: Duration, what: &str, outcome: Ask) -> T
where
    Ask: FnMut() -> Answer,
    Answer: Future<Output = Option<T>>,
{
    asking_until(deadline, LONGEST_PAUSE, what, outcome).await
}

/// [`eventually`] for an ask that costs something (it starts a process, or makes the
/// code under test do work): asked at most every `pause`.
pub async fn eventually_asking_every<T, Ask, Answer>(pause: Duration, what: &str, outcome: Ask) -> T
where
    Ask: FnMut() -> Answer,
    Answer: Future<Output = Option<T>>,
{
    asking_until(PATIENCE, pause, what, outcome).await
}

async fn asking_until<T, Ask, Answer>(
    deadline: Duration,
    longest_pause: Duration,
    what: &str,
    mut outcome: Ask,
) -> T
where
    Ask: FnMut() -> Answer,
    Answer: Future<Output = Option<T>>,
{
    let started = Instant::now();
    let mut pause = FIRST_PAUSE.min(longest_pause);
    loop {
        if let Some(answer) = outcome().await {
            return answer;
        }
        assert!(
            started.elapsed() < deadline,
            "{what}: not within {deadline:?}"
        );
        // The pause between two asks, not a wait for anything in particular.
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(longest_pause);
    }
}

/// [`eventually`] for a condition, for a test that needs no answer back.
pub async fn eventually_true<Ask, Answer>(what: &str, mut condition: Ask)
where
    Ask: FnMut() -> Answer,
    Answer: Future<Output = bool>,
{
    eventually(what, || {
        let holds = condition();
        async move { holds.await.then_some(()) }
    })
    .await
}

/// [`eventually`] for code that cannot await (a thread of its own, a `Drop`).
pub fn eventually_blocking<T>(what: &str, mut outcome: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(answer) = outcome() {
            return answer;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{what}: not within {PATIENCE:?}"
        );
        std::thread::sleep(pause);
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn the_answer_comes_back_as_soon_as_it_is_there() {
        let asked = AtomicU32::new(0);
        let answer = eventually("the third ask answers", || async {
            let times = asked.fetch_add(1, Ordering::SeqCst) + 1;
            (times == 3).then_some(times)
        })
        .await;
        assert_eq!(answer, 3);
        assert_eq!(asked.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    #[should_panic(expected = "nothing ever answers: not within")]
    async fn a_wait_that_never_ends_fails_saying_what_never_happened() {
        eventually_within(
            Duration::from_millis(30),
            "nothing ever answers",
            || async { None::<()> },
        )
        .await;
    }

    #[test]
    fn the_blocking_wait_answers_too() {
        let mut asked = 0;
        let answer = eventually_blocking("the second ask answers", || {
            asked += 1;
            (asked == 2).then_some("yes")
        });
        assert_eq!(answer, "yes");
    }
}
