//! The plan stage: the agent reads the review as it is on GitHub now (the owner's
//! corrections included) and writes a test plan, posted as the PR's plan comment.

use super::review::cut_note;
use super::{BegunQa, StageDone, StageJob};
use crate::domain::stage_prompts::StagePromptValues;
use crate::domain::RunFailureCode;
use crate::pipeline::agent_job::Stop;

impl BegunQa {
    pub(super) async fn plan(&self, job: &StageJob<'_>) -> Result<StageDone, Stop> {
        let pr_number = self.pull.number;
        let review = match self.read_input(job).await? {
            Some(content) => content,
            None => {
                self.note(job, "review comment not found: planned without a review")
                    .await?;
                "(There is no code review on this PR: the review comment was not found.)".to_owned()
            }
        };
        let copy = self.working_copy(job).await?;
        let inputs = [("review.md".to_owned(), review.clone())];
        let prompt = self
            .prompt(
                job.stage,
                StagePromptValues {
                    review: &review,
                    ..StagePromptValues::default()
                },
            )
            .await?;
        let out = self.run_agent(job, &copy, &prompt, &inputs).await?;
        let Some(text) = self.setup.read_output(&out.join("output.md")) else {
            return Err(Stop::failed(
                RunFailureCode::NoOutput,
                format!(
                    "the agent wrote no test plan (out/output.md is missing or empty); {}",
                    job.see_log()
                ),
            ));
        };
        let version = self.publish(job, &text).await?;
        Ok(StageDone {
            detail: format!(
                "test plan posted on PR #{pr_number} (version {version}){}",
                cut_note(&text)
            ),
            output: Some(text),
            end_sha: None,
        })
    }
}
