//! The test stage: the agent runs exactly the plan as it is on GitHub now and writes
//! `results.json`; each failing scenario gets an issue (one per scenario, reused on a
//! re-run; at most ten a run; none when the repository keeps its failures in the results
//! comment), a scenario that passes again closes its issue, the results are stored for
//! the fix stage, and a summary is posted as the PR's results comment.

use super::{BegunQa, StageDone, StageJob};
use crate::domain::stage_prompts::StagePromptValues;
use crate::domain::test_results::{parse_test_results, results_summary, SummaryLine};
use crate::domain::RunFailureCode;
use crate::github::qa_issues::{close_fixed_issue, file_failure_issue};
use crate::pipeline::agent_job::Stop;
use crate::store::StoredTestResult;

/// The most issues one test run files: an agent that reports hundreds of failures must
/// not flood the repository. The rest are in the results comment and stored for fix.
pub const MAX_ISSUES_A_TEST_RUN: usize = 10;

/// What the agent reads when there is no plan to run.
const NO_PLAN: &str = "(There is no test plan on this PR: the plan comment was not found. \
Make a test plan yourself first, write it to $HANDOFF_OUTPUT_DIR/output.md, then run it.)";

impl BegunQa {
    pub(super) async fn test(&self, job: &StageJob<'_>) -> Result<StageDone, Stop> {
        let store = &self.pipeline.store;
        let pr_number = self.pull.number;
        let run_id = job.run_id;
        let plan = match self.read_input(job).await? {
            Some(content) => content,
            None => {
                self.note(job, "plan comment not found: test planned anew")
                    .await?;
                NO_PLAN.to_owned()
            }
        };
        let copy = self.working_copy(job).await?;
        let inputs = [("plan.md".to_owned(), plan.clone())];
        let prompt = self
            .prompt(
                job.stage,
                StagePromptValues {
                    plan: &plan,
                    ..StagePromptValues::default()
                },
            )
            .await?;
        let out = self.run_agent(job, &copy, &prompt, &inputs).await?;
        let Some(text) = self.setup.read_output(&out.join("results.json")) else {
            return Err(Stop::failed(
                RunFailureCode::NoOutput,
                format!(
                    "the agent wrote no results (out/results.json is missing or empty); {}",
                    job.see_log()
                ),
            ));
        };
        let results = parse_test_results(&text).map_err(|error| {
            Stop::failed(
                RunFailureCode::BadResults,
                format!("{error}; {}", job.see_log()),
            )
        })?;
        let stored = store
            .stage_runs()
            .record_test_results(run_id, self.repo.id, pr_number, &results)
            .await?;
        let issues = self.file_and_close_issues(job, &stored).await?;
        let stored = store.stage_runs().test_results_of_run(run_id).await?;
        let lines: Vec<SummaryLine<'_>> = stored
            .iter()
            .map(|result| SummaryLine {
                scenario: &result.result,
                issue_number: result.issue_number,
            })
            .collect();
        self.publish(job, &results_summary(&lines, run_id.0, None))
            .await?;
        let failed = stored.iter().filter(|r| !r.result.passed).count();
        let output = match self.setup.read_output(&out.join("output.md")) {
            Some(plan_used) => format!("{plan_used}\n\n---\n\n{text}"),
            None => text,
        };
        let filed = if issues.is_empty() {
            String::new()
        } else {
            let numbers: Vec<String> = issues.iter().map(|n| format!("#{n}")).collect();
            format!("; issues {}", numbers.join(", "))
        };
        Ok(StageDone {
            detail: format!(
                "{} scenarios: {} passed, {failed} failed{filed}",
                stored.len(),
                stored.len() - failed,
            ),
            output: Some(output),
            end_sha: None,
        })
    }

    /// An issue for each failed scenario (at most a few a run, the rest said in the log);
    /// the issue of a scenario that passes now is closed. A repository may keep its
    /// failures in the results comment alone: then no issue is filed, and none is
    /// closed. Returns the issues filed.
    async fn file_and_close_issues(
        &self,
        job: &StageJob<'_>,
        stored: &[StoredTestResult],
    ) -> Result<Vec<u64>, Stop> {
        let (store, github) = (&self.pipeline.store, &self.pipeline.github);
        let (pr_number, run_id) = (self.pull.number, job.run_id);
        let mut issues = Vec::new();
        let mut not_filed = 0_usize;
        let with_issues: &[_] = if self.repo.file_test_issues {
            stored
        } else {
            &[]
        };
        for result in with_issues {
            if !result.result.passed && issues.len() >= MAX_ISSUES_A_TEST_RUN {
                not_filed += 1;
            } else if !result.result.passed {
                let number =
                    file_failure_issue(github, store, &self.repo, pr_number, run_id, result)
                        .await
                        .map_err(|error| {
                            Stop::failed(
                                RunFailureCode::Github,
                                format!(
                                    "the issue for \"{}\" could not be filed: {error}",
                                    result.result.name
                                ),
                            )
                        })?;
                issues.push(number);
            } else if let Some(number) = store
                .stage_runs()
                .qa_issue(self.repo.id, pr_number, &result.scenario_key)
                .await?
            {
                close_fixed_issue(github, &self.repo, number)
                    .await
                    .map_err(|error| Stop::failed(RunFailureCode::Github, error.to_string()))?;
            }
        }
        if not_filed > 0 {
            self.note(
                job,
                &format!(
                    "{not_filed} more failed scenario(s) not filed as issues: at most \
                     {MAX_ISSUES_A_TEST_RUN} a run (all are in the results comment)"
                ),
            )
            .await?;
        }
        Ok(issues)
    }
}
