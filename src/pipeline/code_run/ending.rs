//! The end of a code run: the branch's PR made sure of (opened if there is none, never
//! a second one) with its Follow-ups comment, what the run came to, and the events its
//! end makes.

use super::*;

impl BegunCodeRun {
    /// The branch's PR, opened if there is none (never a second one), with its
    /// Follow-ups comment brought up to date.
    pub(super) async fn make_sure_of_the_pull_request(
        &self,
        log: &RunLog,
        cancel: &watch::Receiver<bool>,
        feedback_id: FeedbackId,
        ci_entry_points: &[(String, &'static str)],
    ) -> Result<(WirePull, PullRequestAction), Stop> {
        let store = &self.pipeline.store;
        let repo = &self.repo;
        let run_id = self.run_id();
        let github = &self.pipeline.github;
        let feedback = store.feedback().feedback(feedback_id).await?;
        let head = feedback.head_branch.as_str();
        log.say("asking GitHub for the branch's PR").await?;
        let (pull, action) = unless_cancelled(cancel, async {
            ensure_feedback_pull_request(github, store, repo, &feedback, ci_entry_points)
                .await
                .map_err(|error| Stop::failed(RunFailureCode::PullRequest, error.to_string()))
        })
        .await?;
        store
            .pull_requests()
            .mirror_pull_request(repo.id, &pull.mirrored())
            .await?;
        if action != PullRequestAction::Kept {
            // A PR Handoff opened (or brought back) gets the repository's labels and
            // reviewers; what GitHub refuses is said, the run goes on.
            for note in ask_for_labels_and_reviews(github, repo, pull.number).await {
                log.say(&format!("warning: {note}")).await?;
                store.runs().add_run_note(run_id, &note).await?;
            }
        }
        log.say(&format!(
            "PR #{} {}",
            pull.number,
            match action {
                PullRequestAction::Opened => "opened",
                PullRequestAction::Kept => "updated",
                PullRequestAction::Reopened => "reopened and updated",
                PullRequestAction::Replaced =>
                    "opened in place of the one that could not be reopened",
            }
        ))
        .await?;
        if let Some(content) =
            follow_ups_comment_content(&store.feedback().follow_ups(feedback.id).await?)
        {
            let place = CommentPlace {
                repo,
                pr_number: pull.number,
                kind: CommentKind::FollowUps,
            };
            if let Err(error) =
                publish_agent_output(github, store, place, &content, Some(run_id), Some(head)).await
            {
                let note = format!("the Follow-ups comment could not be updated: {error}");
                log.say(&format!("warning: {note}")).await?;
                store.runs().add_run_note(run_id, &note).await?;
            }
        }
        Ok((pull, action))
    }
}

/// What a code run came to, for its report and for the mirror, from how it ended; its
/// end said in its log.
pub(super) async fn result_and_outcome(
    log: &RunLog,
    outcome: Result<Pushed, Stop>,
) -> Result<(CodeRunResult, RunOutcome), PipelineError> {
    Ok(match outcome {
        Ok(pushed) => {
            log.say(&format!(
                "done: {} commit(s) on {}, PR #{} ({})",
                pushed.commits, pushed.branch, pushed.pr_number, pushed.pr_url
            ))
            .await?;
            (
                CodeRunResult::Succeeded {
                    pr_number: pushed.pr_number,
                    pr_url: pushed.pr_url.clone(),
                    action: pushed.action,
                    commits: pushed.commits,
                },
                RunOutcome::Succeeded {
                    exit_code: Some(0),
                    end_sha: Some(pushed.end_sha),
                    output: pushed.summary,
                },
            )
        }
        Err(stop) => {
            let outcome = stop.logged_outcome(log).await?;
            let result = match stop {
                // Whatever a failure quotes (a service's answer, a command's output)
                // reaches the run's events and notices scrubbed of the run's secrets.
                Stop::Failed { code, message } => CodeRunResult::Failed {
                    code,
                    message: log.redactor().redact(&message),
                },
                Stop::Cancelled => CodeRunResult::Cancelled,
            };
            (result, outcome)
        }
    })
}

/// The events a code run's end makes: its PR opened or updated, or the run failed or was
/// cancelled.
pub(super) async fn record_end_events(
    store: &Store,
    run_id: RunId,
    feedback_id: Option<FeedbackId>,
    result: &CodeRunResult,
) -> Result<Vec<RunEvent>, PipelineError> {
    let feedback_title = match feedback_id {
        Some(id) => store.feedback().feedback(id).await?.title,
        None => String::new(),
    };
    let mut events = Vec::new();
    match result {
        CodeRunResult::Succeeded {
            pr_number,
            action,
            commits,
            ..
        } => {
            let opened = if *action == PullRequestAction::Opened {
                store
                    .runs()
                    .record_run_event(
                        run_id,
                        feedback_id,
                        RunEventKind::PullRequestOpened,
                        &format!("PR #{pr_number} opened: {feedback_title}"),
                    )
                    .await?
            } else {
                None
            };
            match opened {
                Some(event) => events.push(event),
                None => events.extend(
                    store
                        .runs().record_run_event(
                            run_id,
                            feedback_id,
                            RunEventKind::PullRequestUpdated,
                            &format!("PR #{pr_number} updated with {commits} commit(s): {feedback_title}"),
                        )
                        .await?,
                ),
            }
        }
        CodeRunResult::Failed { message, .. } => events.extend(
            store
                .runs()
                .record_run_event(
                    run_id,
                    feedback_id,
                    RunEventKind::RunFailed,
                    &format!("Run {run_id} failed ({feedback_title}): {message}"),
                )
                .await?,
        ),
        CodeRunResult::Cancelled => events.extend(
            store
                .runs()
                .record_run_event(
                    run_id,
                    feedback_id,
                    RunEventKind::RunFailed,
                    &format!("Run {run_id} was cancelled ({feedback_title})"),
                )
                .await?,
        ),
    }
    Ok(events)
}
