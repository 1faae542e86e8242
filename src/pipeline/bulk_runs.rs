//! Several code runs asked for at once: the items the owner selected, or every new item
//! of a repository ("Run all new", `FeedbackRecords::new_items_of`). Each is begun on
//! its own (checked and queued, so one refused item does not stop the others) and waits
//! in the run queue for its slot.

use super::code_run::{BegunCodeRun, CodeRunOptions};
use super::PipelineError;
use crate::domain::FeedbackId;
use crate::pipeline::handles::CodeRuns;

impl CodeRuns<'_> {
    /// Begins a code run of each of `items`, in that order; each item's own answer.
    pub async fn begin_code_runs(
        &self,
        items: &[FeedbackId],
        options: &CodeRunOptions,
    ) -> Vec<(FeedbackId, Result<BegunCodeRun, PipelineError>)> {
        let mut begun = Vec::with_capacity(items.len());
        for item in items {
            let answer = self
                .pipeline
                .code_runs()
                .begin_code_run(*item, options.clone())
                .await;
            if let Err(error) = &answer {
                tracing::info!(feedback = %item, %error, "one of several runs asked for at once was refused");
            }
            begun.push((*item, answer));
        }
        begun
    }
}
