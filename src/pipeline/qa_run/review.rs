//! The review stage: the agent reads the PR's diff against its base and writes a code
//! review, which is posted as the PR's review comment.

use super::{BegunQa, StageDone, StageJob};
use crate::domain::managed_comment::CONTENT_LIMIT_CHARS;
use crate::domain::stage_prompts::StagePromptValues;
use crate::domain::RunFailureCode;
use crate::pipeline::agent_job::Stop;
use crate::pipeline::host_git::pull_head_ref;

/// The most of a PR's diff the review reads (a fork's PR may be of any size).
const LARGEST_DIFF_BYTES: usize = 8 * 1024 * 1024;

impl BegunQa {
    pub(super) async fn review(&self, job: &StageJob<'_>) -> Result<StageDone, Stop> {
        let pr_number = self.pull.number;
        let copy = self.working_copy(job).await?;
        let diff = self
            .pipeline
            .host_git()
            .pull_request_diff(
                &copy.cache,
                &self.pull.base.name,
                &pull_head_ref(pr_number),
                LARGEST_DIFF_BYTES,
            )
            .await
            .map_err(|error| Stop::failed(RunFailureCode::GitDiff, error.to_string()))?;
        let inputs = [("diff.patch".to_owned(), diff)];
        let prompt = self.prompt(job.stage, StagePromptValues::default()).await?;
        let out = self.run_agent(job, &copy, &prompt, &inputs).await?;
        let Some(text) = self.setup.read_output(&out.join("output.md")) else {
            return Err(Stop::failed(
                RunFailureCode::NoOutput,
                format!(
                    "the agent wrote no review (out/output.md is missing or empty); {}",
                    job.see_log()
                ),
            ));
        };
        let version = self.publish(job, &text).await?;
        Ok(StageDone {
            detail: format!(
                "review posted on PR #{pr_number} (version {version}){}",
                cut_note(&text)
            ),
            output: Some(text),
            end_sha: None,
        })
    }
}

/// Says so when `text` is longer than a comment may be on GitHub.
pub(super) fn cut_note(text: &str) -> &'static str {
    if text.chars().count() > CONTENT_LIMIT_CHARS {
        " (cut to fit GitHub; the full text is kept on the run)"
    } else {
        ""
    }
}
