//! Connected repositories: add, list, find, change settings.

use super::error::StoreError;
use super::row_mapping::{repo_columns, repo_from_row};
use crate::areas::RepositoryRecords;
use handoff_domain::repo::check_branch_name;
use handoff_domain::review_requests::{stored_lines, Reviewer};
use handoff_domain::{AllowedHost, NetworkMode, NewRepo, Repo, RepoId, RepoName, SandboxBackend};

/// Settings to change on a repository; `None` leaves a setting as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepoSettingsChange {
    pub default_branch: Option<String>,
    pub feedback_label: Option<String>,
    pub custom_instructions: Option<String>,
    /// `Some(None)` removes the limit.
    pub monthly_run_quota: Option<Option<u32>>,
    pub sandbox_backend: Option<SandboxBackend>,
    pub agent_preset: Option<String>,
    /// `Some(None)` goes back to the preset's own command.
    pub agent_command: Option<Option<String>>,
    /// `Some(None)` goes back to the default image.
    pub docker_image: Option<Option<String>>,
    pub run_timeout_seconds: Option<u32>,
    /// `Some(None)` goes back to the default template.
    pub e2b_template: Option<Option<String>>,
    pub network_mode: Option<NetworkMode>,
    /// Replaces the whole list.
    pub allowed_hosts: Option<Vec<AllowedHost>>,
    pub draft_pull_requests: Option<bool>,
    pub file_test_issues: Option<bool>,
    /// `Some(None)`: no slots of its own.
    pub run_slots: Option<Option<u32>>,
    pub overflow_to_e2b: Option<bool>,
    pub automatic_updates: Option<bool>,
    pub automatic_attempts_per_day: Option<u32>,
    /// Replaces the whole list.
    pub pull_request_labels: Option<Vec<String>>,
    /// Replaces the whole list.
    pub environment_key_files: Option<Vec<String>>,
    /// Replaces the whole list.
    pub pull_request_reviewers: Option<Vec<Reviewer>>,
    /// `Some(None)`: push to the repository itself.
    pub push_fork: Option<Option<RepoName>>,
}

impl RepoSettingsChange {
    /// `current` with this change made: each field given replaces its own. A run timeout,
    /// a run slot count and automatic attempts a day are at least one.
    fn applied_to(&self, current: Repo) -> Repo {
        let change = self.clone();
        Repo {
            default_branch: change.default_branch.unwrap_or(current.default_branch),
            feedback_label: change.feedback_label.unwrap_or(current.feedback_label),
            custom_instructions: change
                .custom_instructions
                .unwrap_or(current.custom_instructions),
            monthly_run_quota: change
                .monthly_run_quota
                .unwrap_or(current.monthly_run_quota),
            sandbox_backend: change.sandbox_backend.unwrap_or(current.sandbox_backend),
            agent_preset: change.agent_preset.unwrap_or(current.agent_preset),
            agent_command: change.agent_command.unwrap_or(current.agent_command),
            docker_image: change.docker_image.unwrap_or(current.docker_image),
            run_timeout_seconds: change
                .run_timeout_seconds
                .unwrap_or(current.run_timeout_seconds)
                .max(1),
            e2b_template: change.e2b_template.unwrap_or(current.e2b_template),
            network_mode: change.network_mode.unwrap_or(current.network_mode),
            allowed_hosts: change.allowed_hosts.unwrap_or(current.allowed_hosts),
            draft_pull_requests: change
                .draft_pull_requests
                .unwrap_or(current.draft_pull_requests),
            file_test_issues: change.file_test_issues.unwrap_or(current.file_test_issues),
            push_fork: change.push_fork.unwrap_or(current.push_fork),
            run_slots: change
                .run_slots
                .unwrap_or(current.run_slots)
                .map(|slots| slots.max(1)),
            overflow_to_e2b: change.overflow_to_e2b.unwrap_or(current.overflow_to_e2b),
            automatic_updates: change
                .automatic_updates
                .unwrap_or(current.automatic_updates),
            automatic_attempts_per_day: change
                .automatic_attempts_per_day
                .unwrap_or(current.automatic_attempts_per_day)
                .max(1),
            pull_request_labels: change
                .pull_request_labels
                .unwrap_or(current.pull_request_labels),
            pull_request_reviewers: change
                .pull_request_reviewers
                .unwrap_or(current.pull_request_reviewers),
            environment_key_files: change
                .environment_key_files
                .clone()
                .unwrap_or(current.environment_key_files),
            ..current
        }
    }
}

impl RepositoryRecords<'_> {
    /// Connects a repository. A repository already connected (in any letter case) is
    /// refused; one that was disconnected is connected again, with its settings and
    /// history as they were.
    pub async fn add_repo(&self, new: &NewRepo) -> Result<Repo, StoreError> {
        check_branch_name(&new.default_branch)?;
        let inserted = sqlx::query(
            "INSERT INTO repos (owner, name, default_branch, feedback_label, custom_instructions, \
             monthly_run_quota, sandbox_backend, agent_preset, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&new.name.owner)
        .bind(&new.name.name)
        .bind(&new.default_branch)
        .bind(&new.feedback_label)
        .bind(&new.custom_instructions)
        .bind(new.monthly_run_quota.map(i64::from))
        .bind(new.sandbox_backend.as_str())
        .bind(&new.agent_preset)
        .bind(self.store.now_text())
        .fetch_one(&self.store.pool)
        .await;
        match inserted {
            Ok(row) => {
                use sqlx::Row as _;
                self.repo(RepoId(row.try_get("id")?)).await
            }
            Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                let reconnected = sqlx::query(
                    "UPDATE repos SET disconnected_at = NULL \
                     WHERE owner = ? AND name = ? AND disconnected_at IS NOT NULL",
                )
                .bind(&new.name.owner)
                .bind(&new.name.name)
                .execute(&self.store.pool)
                .await?;
                if reconnected.rows_affected() == 1 {
                    return self.repo_by_name(&new.name).await;
                }
                Err(StoreError::RepoAlreadyConnected(new.name.full_name()))
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Every connected repository, by name (not the disconnected ones).
    pub async fn repos(&self) -> Result<Vec<Repo>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            repo_columns!(),
            " FROM repos r WHERE r.disconnected_at IS NULL ORDER BY r.owner, r.name"
        ))
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(repo_from_row).collect()
    }

    pub async fn repo(&self, id: RepoId) -> Result<Repo, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            repo_columns!(),
            " FROM repos r WHERE r.id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or_else(|| StoreError::RepoNotFound(format!("#{id}")))?;
        repo_from_row(&row)
    }

    /// When repository `id` was connected to this installation.
    pub async fn repo_connected_at(
        &self,
        id: RepoId,
    ) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
        sqlx::query_scalar("SELECT created_at FROM repos WHERE id = ?")
            .bind(id.0)
            .fetch_optional(&self.store.pool)
            .await?
            .ok_or_else(|| StoreError::RepoNotFound(format!("#{id}")))
    }

    /// The repository named `name` (letter case does not matter, as on GitHub).
    pub async fn repo_by_name(&self, name: &RepoName) -> Result<Repo, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            repo_columns!(),
            " FROM repos r WHERE r.owner = ? AND r.name = ?"
        ))
        .bind(&name.owner)
        .bind(&name.name)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or_else(|| StoreError::RepoNotFound(name.full_name()))?;
        repo_from_row(&row)
    }

    /// Disconnects a repository: syncs and runs leave it alone, its history stays. A
    /// repository with a run going is refused.
    pub async fn disconnect_repo(&self, id: RepoId) -> Result<Repo, StoreError> {
        let repo = self.repo(id).await?;
        let active: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM runs WHERE repo_id = ? AND status IN ('queued', 'running')",
        )
        .bind(id.0)
        .fetch_one(&self.store.pool)
        .await?;
        if active > 0 {
            return Err(StoreError::RepoBusy(repo.name.full_name()));
        }
        sqlx::query("UPDATE repos SET disconnected_at = COALESCE(disconnected_at, ?) WHERE id = ?")
            .bind(self.store.now_text())
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        self.repo(id).await
    }

    /// The repositories whose checks the signed-in token may not read.
    pub async fn repos_with_unreadable_checks(&self) -> Result<Vec<RepoId>, StoreError> {
        let ids: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM repos WHERE checks_unreadable_since IS NOT NULL")
                .fetch_all(&self.store.pool)
                .await?;
        Ok(ids.into_iter().map(RepoId).collect())
    }

    /// Records whether the signed-in token can read `id`'s checks; whether that changed.
    pub async fn set_checks_unreadable(
        &self,
        id: RepoId,
        unreadable: bool,
    ) -> Result<bool, StoreError> {
        let changed = sqlx::query(
            "UPDATE repos SET checks_unreadable_since = CASE WHEN ? THEN ? ELSE NULL END \
             WHERE id = ? AND (checks_unreadable_since IS NULL) = ?",
        )
        .bind(unreadable)
        .bind(self.store.now_text())
        .bind(id.0)
        .bind(unreadable)
        .execute(&self.store.pool)
        .await?;
        Ok(changed.rows_affected() == 1)
    }

    /// Changes the settings named in `change` and returns the repository as it is now.
    pub async fn change_repo_settings(
        &self,
        id: RepoId,
        change: &RepoSettingsChange,
    ) -> Result<Repo, StoreError> {
        if let Some(branch) = &change.default_branch {
            check_branch_name(branch)?;
        }
        let changed = change.applied_to(self.repo(id).await?);
        sqlx::query(
            "UPDATE repos SET default_branch = ?, feedback_label = ?, custom_instructions = ?, \
             monthly_run_quota = ?, sandbox_backend = ?, agent_preset = ?, agent_command = ?, \
             docker_image = ?, run_timeout_seconds = ?, e2b_template = ?, network_mode = ?, \
             allowed_hosts = ?, draft_pull_requests = ?, file_test_issues = ?, push_fork = ?, \
             run_slots = ?, overflow_to_e2b = ?, automatic_updates = ?, \
             automatic_attempts_per_day = ?, pull_request_labels = ?, \
             pull_request_reviewers = ?, environment_key_files = ? WHERE id = ?",
        )
        .bind(&changed.default_branch)
        .bind(&changed.feedback_label)
        .bind(&changed.custom_instructions)
        .bind(changed.monthly_run_quota.map(i64::from))
        .bind(changed.sandbox_backend.as_str())
        .bind(&changed.agent_preset)
        .bind(&changed.agent_command)
        .bind(&changed.docker_image)
        .bind(i64::from(changed.run_timeout_seconds))
        .bind(&changed.e2b_template)
        .bind(changed.network_mode.as_str())
        .bind(
            changed
                .allowed_hosts
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        )
        .bind(i64::from(changed.draft_pull_requests))
        .bind(i64::from(changed.file_test_issues))
        .bind(changed.push_fork.as_ref().map(RepoName::full_name))
        .bind(changed.run_slots.map(i64::from))
        .bind(i64::from(changed.overflow_to_e2b))
        .bind(i64::from(changed.automatic_updates))
        .bind(i64::from(changed.automatic_attempts_per_day))
        .bind(stored_lines(&changed.pull_request_labels))
        .bind(stored_lines(&changed.pull_request_reviewers))
        .bind(stored_lines(&changed.environment_key_files))
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        self.repo(id).await
    }
}
