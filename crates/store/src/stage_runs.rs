//! Runs of the QA stages on a PR: recorded with the same rules as code runs — one
//! active run per PR (and per feedback item) guaranteed by the database, a unit of quota
//! per stage run taken in the same transaction.

use crate::areas::StageRunRecords;
use serde::Serialize;

use super::error::StoreError;
use super::quota::quota_status_in;
use super::row_mapping::{run_columns, run_from_row};
use super::time_text::time_text;
use handoff_domain::{FeedbackId, RepoId, Run, RunId, SandboxBackend, ScenarioResult, Stage};

/// A stage run to record.
#[derive(Debug, Clone, PartialEq)]
pub struct StageRunRequest {
    pub repo_id: RepoId,
    /// The PR it runs on; `None` for a lessons run, which is the repository's.
    pub pr_number: Option<u64>,
    /// The feedback item whose PR this is, if any.
    pub feedback_id: Option<FeedbackId>,
    pub stage: Stage,
    pub backend: SandboxBackend,
    pub agent_preset: String,
    /// The full-auto run this stage belongs to.
    pub parent_run_id: Option<RunId>,
    /// The units of quota this run takes: one for a stage; for a full-auto chain, the
    /// units its stages will need (reserved before any of them starts, its stages then
    /// taking none; what the chain does not use is given back with
    /// [`SpendRecords::settle_quota`]).
    pub quota_units: u32,
}

/// The stored results of one test run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageTestResult {
    pub run_id: RunId,
    pub results: Vec<StoredTestResult>,
}

/// One stored test result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredTestResult {
    pub id: i64,
    pub run_id: RunId,
    pub scenario_key: String,
    pub result: ScenarioResult,
    pub issue_number: Option<u64>,
}

impl StageRunRecords<'_> {
    /// Records a stage run (queued), refusing it when the PR or the item already has an
    /// active run or when the quota is used up.
    pub async fn start_stage_run(&self, request: &StageRunRequest) -> Result<Run, StoreError> {
        let now = self.store.now();
        let driver = self.store.driver_columns();
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        if request.quota_units > 0 {
            let quota = quota_status_in(&mut *transaction, request.repo_id, now).await?;
            if let (Some(limit), Some(left)) = (quota.quota, quota.left) {
                if left < request.quota_units {
                    let (owner, name): (String, String) =
                        sqlx::query_as("SELECT owner, name FROM repos WHERE id = ?")
                            .bind(request.repo_id.0)
                            .fetch_one(&mut *transaction)
                            .await?;
                    return Err(StoreError::QuotaExhausted {
                        repo: format!("{owner}/{name}"),
                        quota: limit,
                        used: quota.used,
                    });
                }
            }
        }
        let inserted: Result<i64, sqlx::Error> = sqlx::query_scalar(
            "INSERT INTO runs (repo_id, feedback_id, pr_number, parent_run_id, stage, backend, agent_preset, \
             status, created_at, driver_pid, driver_machine, driver_started_at, driver_lock) \
             VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(request.repo_id.0)
        .bind(request.feedback_id.map(|id| id.0))
        .bind(request.pr_number.map(|number| number as i64))
        .bind(request.parent_run_id.map(|id| id.0))
        .bind(request.stage.as_str())
        .bind(request.backend.as_str())
        .bind(&request.agent_preset)
        .bind(time_text(now))
        .bind(driver.pid)
        .bind(driver.machine)
        .bind(driver.started_at)
        .bind(driver.lock)
        .fetch_one(&mut *transaction)
        .await;
        let run_id = match inserted {
            Ok(id) => RunId(id),
            Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                if request.stage == Stage::Lessons {
                    let (owner, name): (String, String) =
                        sqlx::query_as("SELECT owner, name FROM repos WHERE id = ?")
                            .bind(request.repo_id.0)
                            .fetch_one(&mut *transaction)
                            .await?;
                    return Err(StoreError::LessonsRunAlreadyActive {
                        repo: format!("{owner}/{name}"),
                    });
                }
                return Err(match request.feedback_id {
                    Some(feedback_id) if !error.message().contains("pr_number") => {
                        StoreError::RunAlreadyActive { feedback_id }
                    }
                    _ => StoreError::PullRequestRunAlreadyActive {
                        pr_number: request.pr_number.unwrap_or_default(),
                    },
                });
            }
            Err(error) => return Err(error.into()),
        };
        if request.quota_units > 0 {
            sqlx::query(
                "INSERT INTO quota_uses (repo_id, run_id, used_at, units) VALUES (?, ?, ?, ?)",
            )
            .bind(request.repo_id.0)
            .bind(run_id.0)
            .bind(time_text(now))
            .bind(i64::from(request.quota_units))
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        self.store.runs().run(run_id).await
    }

    /// The feedback item whose PR is `pr_number` of `repo_id`, if any.
    pub async fn feedback_of_pull_request(
        &self,
        repo_id: RepoId,
        pr_number: u64,
    ) -> Result<Option<FeedbackId>, StoreError> {
        let id: Option<i64> =
            sqlx::query_scalar("SELECT id FROM feedback WHERE repo_id = ? AND pr_number = ?")
                .bind(repo_id.0)
                .bind(pr_number as i64)
                .fetch_optional(&self.store.pool)
                .await?;
        Ok(id.map(FeedbackId))
    }

    /// Every run on PR `pr_number` (code runs, stages and full-auto chains), newest first.
    pub async fn runs_of_pull_request(
        &self,
        repo_id: RepoId,
        pr_number: u64,
    ) -> Result<Vec<Run>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE repo_id = ? AND pr_number = ? ORDER BY id DESC"
        ))
        .bind(repo_id.0)
        .bind(pr_number as i64)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(run_from_row).collect()
    }

    /// The stage runs of a full-auto chain, in order.
    pub async fn child_runs(&self, parent: RunId) -> Result<Vec<Run>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE parent_run_id = ? ORDER BY id"
        ))
        .bind(parent.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(run_from_row).collect()
    }

    /// Stores the results of test run `run_id`, in the order the agent gave them.
    pub async fn record_test_results(
        &self,
        run_id: RunId,
        repo_id: RepoId,
        pr_number: u64,
        results: &[ScenarioResult],
    ) -> Result<Vec<StoredTestResult>, StoreError> {
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        for (position, result) in results.iter().enumerate() {
            sqlx::query(
                "INSERT INTO test_results (run_id, repo_id, pr_number, position, scenario_key, scenario, passed, evidence) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(run_id.0)
            .bind(repo_id.0)
            .bind(pr_number as i64)
            .bind(position as i64)
            .bind(handoff_domain::test_results::scenario_key(&result.name))
            .bind(&result.name)
            .bind(result.passed)
            .bind(&result.evidence)
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        self.test_results_of_run(run_id).await
    }

    pub async fn test_results_of_run(
        &self,
        run_id: RunId,
    ) -> Result<Vec<StoredTestResult>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, run_id, scenario_key, scenario, passed, evidence, issue_number FROM test_results \
             WHERE run_id = ? ORDER BY position",
        )
        .bind(run_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter()
            .map(|row| {
                use sqlx::Row as _;
                let issue: Option<i64> = row.try_get("issue_number")?;
                Ok(StoredTestResult {
                    id: row.try_get("id")?,
                    run_id: RunId(row.try_get("run_id")?),
                    scenario_key: row.try_get("scenario_key")?,
                    result: ScenarioResult {
                        name: row.try_get("scenario")?,
                        passed: row.try_get("passed")?,
                        evidence: row.try_get("evidence")?,
                    },
                    issue_number: issue.map(|n| n as u64),
                })
            })
            .collect()
    }

    /// The results of the newest test run of a PR that stored any.
    pub async fn latest_test_results(
        &self,
        repo_id: RepoId,
        pr_number: u64,
    ) -> Result<Option<StageTestResult>, StoreError> {
        let run: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(run_id) FROM test_results WHERE repo_id = ? AND pr_number = ?",
        )
        .bind(repo_id.0)
        .bind(pr_number as i64)
        .fetch_one(&self.store.pool)
        .await?;
        match run {
            Some(run) => Ok(Some(StageTestResult {
                run_id: RunId(run),
                results: self.test_results_of_run(RunId(run)).await?,
            })),
            None => Ok(None),
        }
    }

    /// Records the issue filed for a result (and for its scenario on this PR).
    pub async fn set_test_result_issue(
        &self,
        result: &StoredTestResult,
        repo_id: RepoId,
        pr_number: u64,
        issue_number: u64,
    ) -> Result<(), StoreError> {
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query("UPDATE test_results SET issue_number = ? WHERE id = ?")
            .bind(issue_number as i64)
            .bind(result.id)
            .execute(&mut *transaction)
            .await?;
        sqlx::query(
            "INSERT INTO qa_issues (repo_id, pr_number, scenario_key, issue_number) VALUES (?, ?, ?, ?) \
             ON CONFLICT (repo_id, pr_number, scenario_key) DO UPDATE SET issue_number = excluded.issue_number",
        )
        .bind(repo_id.0)
        .bind(pr_number as i64)
        .bind(&result.scenario_key)
        .bind(issue_number as i64)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(())
    }

    /// The issue filed earlier for a scenario of a PR, if any.
    pub async fn qa_issue(
        &self,
        repo_id: RepoId,
        pr_number: u64,
        scenario_key: &str,
    ) -> Result<Option<u64>, StoreError> {
        let number: Option<i64> = sqlx::query_scalar(
            "SELECT issue_number FROM qa_issues WHERE repo_id = ? AND pr_number = ? AND scenario_key = ?",
        )
        .bind(repo_id.0)
        .bind(pr_number as i64)
        .bind(scenario_key)
        .fetch_optional(&self.store.pool)
        .await?;
        Ok(number.map(|n| n as u64))
    }

    /// Every scenario of a PR that ever had an issue: (scenario key, issue number).
    pub async fn qa_issues_of_pull_request(
        &self,
        repo_id: RepoId,
        pr_number: u64,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT scenario_key, issue_number FROM qa_issues WHERE repo_id = ? AND pr_number = ? ORDER BY issue_number",
        )
        .bind(repo_id.0)
        .bind(pr_number as i64)
        .fetch_all(&self.store.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(key, number)| (key, number as u64))
            .collect())
    }

    /// A repository's own template for a stage, if it has one.
    pub async fn stage_prompt(
        &self,
        repo_id: RepoId,
        stage: Stage,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT template FROM repo_stage_prompts WHERE repo_id = ? AND stage = ?",
        )
        .bind(repo_id.0)
        .bind(stage.as_str())
        .fetch_optional(&self.store.pool)
        .await?)
    }

    /// Sets (or, with `None`, removes) a repository's template for a stage.
    pub async fn set_stage_prompt(
        &self,
        repo_id: RepoId,
        stage: Stage,
        template: Option<&str>,
    ) -> Result<(), StoreError> {
        match template {
            Some(template) => {
                sqlx::query(
                    "INSERT INTO repo_stage_prompts (repo_id, stage, template, updated_at) VALUES (?, ?, ?, ?) \
                     ON CONFLICT (repo_id, stage) DO UPDATE SET template = excluded.template, updated_at = excluded.updated_at",
                )
                .bind(repo_id.0)
                .bind(stage.as_str())
                .bind(template)
                .bind(time_text(self.store.now()))
                .execute(&self.store.pool)
                .await?;
            }
            None => {
                sqlx::query("DELETE FROM repo_stage_prompts WHERE repo_id = ? AND stage = ?")
                    .bind(repo_id.0)
                    .bind(stage.as_str())
                    .execute(&self.store.pool)
                    .await?;
            }
        }
        Ok(())
    }
}
