//! The one query behind the dashboard: each feedback item with its repository, thread
//! counts, run count, total cost and last run.

use crate::areas::FeedbackRecords;
use sqlx::Row as _;

use super::error::StoreError;
use super::feedback::{feedback_filter_condition, FeedbackFilter};
use handoff_domain::dashboard::{Dashboard, DashboardCard, LastRunSummary};
use handoff_domain::feedback::PullRequestState;
use handoff_domain::{
    ArchiveState, FeedbackId, FeedbackSource, FeedbackStatus, RunId, RunStatus, SandboxBackend,
    Stage,
};

impl FeedbackRecords<'_> {
    /// The dashboard's cards for `filter`, grouped by status, most recently changed first.
    pub async fn dashboard(&self, filter: &FeedbackFilter) -> Result<Dashboard, StoreError> {
        self.dashboard_limited(filter, None).await
    }

    /// The dashboard with at most `cards_per_status` cards in each group (the most
    /// recently changed), and each group's full count: what a board of any size needs to
    /// draw its first screen. Only the cards returned are counted up and joined.
    pub async fn dashboard_limited(
        &self,
        filter: &FeedbackFilter,
        cards_per_status: Option<u32>,
    ) -> Result<Dashboard, StoreError> {
        let query = sqlx::query(concat!(
            "WITH shown AS ( \
                SELECT f.id, ROW_NUMBER() OVER (PARTITION BY f.status ORDER BY f.updated_at DESC, f.id DESC) AS position \
                FROM feedback f JOIN repos r ON r.id = f.repo_id \
                WHERE ",
            feedback_filter_condition!(),
            ") \
             SELECT f.id, f.public_id, f.title, r.owner, r.name, f.status, f.source, f.head_branch, \
                    f.pr_number, f.pr_url, f.pr_state, f.archived_as, f.created_at, f.updated_at, \
                    COALESCE((SELECT p.conflicts_with_base FROM pull_requests p WHERE p.repo_id = f.repo_id \
                      AND p.number = f.pr_number AND p.state = 'open'), 0) AS conflicts_with_base, \
                    COALESCE((SELECT lower(p.head_repo) = lower(r.owner || '/' || r.name) FROM pull_requests p \
                      WHERE p.repo_id = f.repo_id AND p.number = f.pr_number AND p.state = 'open'), 0) AS ci_with_secrets, \
                    (SELECT COUNT(*) FROM followups u WHERE u.feedback_id = f.id AND u.source = 'owner' AND (u.candidate = 0 OR EXISTS (SELECT 1 FROM followup_inclusions i WHERE i.followup_id = u.id))) AS owner_follow_ups, \
                    (SELECT COUNT(*) FROM followups u WHERE u.feedback_id = f.id AND u.source = 'visitor' AND (u.candidate = 0 OR EXISTS (SELECT 1 FROM followup_inclusions i WHERE i.followup_id = u.id))) AS visitor_follow_ups, \
                    (SELECT COUNT(*) FROM runs x WHERE x.feedback_id = f.id AND x.parent_run_id IS NULL) AS run_count, \
                    (SELECT COALESCE(SUM(x.llm_cost_usd), 0.0) FROM runs x WHERE x.feedback_id = f.id) AS total_cost, \
                    lr.id AS last_run_id, lr.stage AS last_run_stage, lr.status AS last_run_status, \
                    lr.started_at AS last_run_started_at, lr.finished_at AS last_run_finished_at, \
                    lr.backend AS last_run_backend, r.sandbox_backend AS repo_backend \
             FROM shown s JOIN feedback f ON f.id = s.id JOIN repos r ON r.id = f.repo_id \
             LEFT JOIN runs lr ON lr.id = (SELECT MAX(x.id) FROM runs x WHERE x.feedback_id = f.id AND x.parent_run_id IS NULL) \
             WHERE s.position <= ?8 \
             ORDER BY f.updated_at DESC, f.id DESC"
        ));
        let limit = cards_per_status.map_or(i64::MAX, i64::from);
        let rows = filter
            .bind_to(query)
            .bind(limit)
            .fetch_all(&self.store.pool)
            .await?;
        let cards = rows
            .iter()
            .map(card_from_row)
            .collect::<Result<Vec<_>, _>>()?;
        let counts = sqlx::query(concat!(
            "SELECT f.status, COUNT(*) AS total FROM feedback f JOIN repos r ON r.id = f.repo_id WHERE ",
            feedback_filter_condition!(),
            " GROUP BY f.status"
        ));
        let mut totals = Vec::new();
        for row in filter.bind_to(counts).fetch_all(&self.store.pool).await? {
            let status: String = row.try_get("status")?;
            let total: i64 = row.try_get("total")?;
            totals.push((
                status
                    .parse::<FeedbackStatus>()
                    .map_err(|_| StoreError::Corrupt(format!("status {status:?}")))?,
                usize::try_from(total).unwrap_or_default(),
            ));
        }
        Ok(Dashboard::group(cards, &totals))
    }
}

fn card_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<DashboardCard, StoreError> {
    let corrupt = |what: &str, text: &str| StoreError::Corrupt(format!("{what} {text:?}"));
    let status: String = row.try_get("status")?;
    let source: String = row.try_get("source")?;
    let pr_state: Option<String> = row.try_get("pr_state")?;
    let archived_as: Option<String> = row.try_get("archived_as")?;
    let owner: String = row.try_get("owner")?;
    let name: String = row.try_get("name")?;
    let last_run_id: Option<i64> = row.try_get("last_run_id")?;
    let last_run = match last_run_id {
        Some(id) => {
            let stage: String = row.try_get("last_run_stage")?;
            let run_status: String = row.try_get("last_run_status")?;
            let backend: String = row.try_get("last_run_backend")?;
            let backend =
                SandboxBackend::parse(&backend).ok_or_else(|| corrupt("backend", &backend))?;
            let repo_backend: String = row.try_get("repo_backend")?;
            let repo_backend = SandboxBackend::parse(&repo_backend)
                .ok_or_else(|| corrupt("backend", &repo_backend))?;
            Some(LastRunSummary {
                id: RunId(id),
                backend,
                instead_of: (backend != repo_backend).then_some(repo_backend),
                stage: Stage::parse(&stage).ok_or_else(|| corrupt("stage", &stage))?,
                status: RunStatus::parse(&run_status)
                    .ok_or_else(|| corrupt("run status", &run_status))?,
                started_at: row.try_get("last_run_started_at")?,
                finished_at: row.try_get("last_run_finished_at")?,
            })
        }
        None => None,
    };
    let count = |column: &str| -> Result<u32, StoreError> {
        let value: i64 = row.try_get(column)?;
        Ok(u32::try_from(value).unwrap_or(u32::MAX))
    };
    let pr_number: Option<i64> = row.try_get("pr_number")?;
    Ok(DashboardCard {
        feedback_id: FeedbackId(row.try_get("id")?),
        public_id: row.try_get("public_id")?,
        title: row.try_get("title")?,
        repo: format!("{owner}/{name}"),
        status: status
            .parse::<FeedbackStatus>()
            .map_err(|_| corrupt("status", &status))?,
        source: FeedbackSource::parse(&source).ok_or_else(|| corrupt("source", &source))?,
        head_branch: row.try_get("head_branch")?,
        pr_number: pr_number.and_then(|n| u64::try_from(n).ok()),
        pr_url: row.try_get("pr_url")?,
        pr_state: pr_state
            .map(|text| PullRequestState::parse(&text).ok_or_else(|| corrupt("PR state", &text)))
            .transpose()?,
        owner_follow_up_count: count("owner_follow_ups")?,
        visitor_follow_up_count: count("visitor_follow_ups")?,
        run_count: count("run_count")?,
        total_cost_usd: row.try_get("total_cost")?,
        last_run,
        archived_as: archived_as
            .map(|text| ArchiveState::parse(&text).ok_or_else(|| corrupt("archive state", &text)))
            .transpose()?,
        conflicts_with_base: row.try_get("conflicts_with_base")?,
        ci_runs_with_secrets: row.try_get("ci_with_secrets")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}
