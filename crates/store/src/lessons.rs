//! The owner's corrections and the lessons drawn from them: which of the mirror's rows
//! are corrections (only the owner's own text), the lessons a lessons run proposed and
//! what the owner decided, which lessons each run carried, and the repository's lesson
//! settings.

use crate::areas::LessonRecords;
use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row as _;

use super::row_mapping::{run_columns, run_from_row};
use super::time_text::time_text;
use super::StoreError;
use handoff_domain::lesson::{
    lesson_paths, Correction, CorrectionId, CorrectionText, Lesson, LessonId, LessonProposal,
    LessonState,
};
use handoff_domain::{CommentVersionId, FollowUpId, RepoId, Run, RunId, Stage};

/// What the owner decides about a lesson.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LessonDecision {
    Accept,
    Reject,
    /// Turn an accepted lesson on or off.
    Enable(bool),
    /// Keep it: clears the flag of vanished paths and the question after long disuse.
    Keep,
}

/// The owner's new words for a lesson (`None`: unchanged).
#[derive(Debug, Clone, Default)]
pub struct LessonEdit {
    pub rule: Option<String>,
    pub why: Option<String>,
    pub paths: Option<Vec<String>>,
}

/// A repository's lesson settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LessonSettings {
    /// After how many new corrections a lessons run starts by itself; `None`: only on
    /// demand.
    pub after_corrections: Option<u32>,
    /// The file whose marked section holds the accepted lessons.
    pub file: String,
}

macro_rules! lesson_columns {
    () => {
        "id, repo_id, rule, why, paths, sources, state, enabled, proposed_by_run_id, \
         edited_by_owner, created_at, decided_at, last_carried_at, missing_paths, kept_at"
    };
}

fn json_list(row: &SqliteRow, column: &str) -> Result<Vec<String>, StoreError> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text)
        .map_err(|_| StoreError::Corrupt(format!("lesson {column} {text:?} is not a JSON list")))
}

fn lesson_from_row(row: &SqliteRow) -> Result<Lesson, StoreError> {
    let state: String = row.try_get("state")?;
    let sources = json_list(row, "sources")?
        .iter()
        .map(|name| {
            name.parse::<CorrectionId>()
                .map_err(|error| StoreError::Corrupt(error.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let missing: Option<String> = row.try_get("missing_paths")?;
    Ok(Lesson {
        id: LessonId(row.try_get("id")?),
        repo_id: RepoId(row.try_get("repo_id")?),
        rule: row.try_get("rule")?,
        why: row.try_get("why")?,
        paths: json_list(row, "paths")?,
        sources,
        state: LessonState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("lesson state {state:?}")))?,
        enabled: row.try_get("enabled")?,
        proposed_by_run_id: row
            .try_get::<Option<i64>, _>("proposed_by_run_id")?
            .map(RunId),
        edited_by_owner: row.try_get("edited_by_owner")?,
        created_at: row.try_get("created_at")?,
        decided_at: row.try_get("decided_at")?,
        last_carried_at: row.try_get("last_carried_at")?,
        missing_paths: missing
            .map(|text| {
                serde_json::from_str(&text).map_err(|_| {
                    StoreError::Corrupt(format!("lesson missing_paths {text:?} is not a JSON list"))
                })
            })
            .transpose()?,
        kept_at: row.try_get("kept_at")?,
    })
}

fn to_json(list: &[String]) -> String {
    serde_json::Value::from(list.to_vec()).to_string()
}

impl LessonRecords<'_> {
    /// The owner's corrections on `repo_id` made after `since` (all of them for `None`),
    /// oldest first:
    /// - each edit of a review, plan or results comment whose text is the owner's (in
    ///   Handoff, or on GitHub by the signed-in account), against the agent's version
    ///   before it; an edit that changed nothing, or whose comment holds no agent
    ///   version before it, is none;
    /// - each follow-up the owner wrote (or took from the PR and included) on an item
    ///   after a code run of it had succeeded, so its PR was open.
    ///
    /// A visitor's follow-up and an edit by anyone else never count, approved or not.
    pub async fn corrections_of(
        &self,
        repo_id: RepoId,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<Correction>, StoreError> {
        let since = since.map(time_text).unwrap_or_default();
        let mut corrections = self.comment_edit_corrections(repo_id, &since).await?;
        corrections.extend(self.follow_up_corrections(repo_id, &since).await?);
        corrections.sort_by_key(|correction| correction.created_at);
        Ok(corrections)
    }

    /// The owner's edits of the agent's comments since `since`, as corrections.
    async fn comment_edit_corrections(
        &self,
        repo_id: RepoId,
        since: &str,
    ) -> Result<Vec<Correction>, StoreError> {
        let edits = sqlx::query(
            "SELECT owner.id, owner.content, owner.full_content, owner.created_at, mc.pr_number, mc.kind, \
                    agent.content AS agent_content, agent.full_content AS agent_full_content, \
                    (SELECT coalesce(before.full_content, before.content) FROM comment_versions before \
                      WHERE before.managed_comment_id = owner.managed_comment_id AND before.id < owner.id \
                      ORDER BY before.id DESC LIMIT 1) AS previous_content \
             FROM comment_versions owner \
             JOIN managed_comments mc ON mc.id = owner.managed_comment_id \
             JOIN comment_versions agent ON agent.id = ( \
                 SELECT id FROM comment_versions a \
                  WHERE a.managed_comment_id = owner.managed_comment_id AND a.origin = 'agent' AND a.id < owner.id \
                  ORDER BY a.id DESC LIMIT 1) \
             WHERE mc.repo_id = ? AND mc.kind IN ('review', 'plan', 'results') \
               AND owner.origin IN ('owner_in_handoff', 'edit_on_github') AND owner.edited_by_other = 0 \
               AND owner.created_at > ? \
             ORDER BY owner.created_at, owner.id",
        )
        .bind(repo_id.0)
        .bind(since)
        .fetch_all(&self.store.pool)
        .await?;
        let mut corrections = Vec::new();
        for row in &edits {
            let owner_text: String = row
                .try_get::<Option<String>, _>("full_content")?
                .map_or_else(|| row.try_get("content"), Ok)?;
            let agent_text: String = row
                .try_get::<Option<String>, _>("agent_full_content")?
                .map_or_else(|| row.try_get("agent_content"), Ok)?;
            let previous: Option<String> = row.try_get("previous_content")?;
            // The same text read back from GitHub after the owner's edit was sent is no
            // new correction; neither is an edit that leaves the agent's text as it was.
            if owner_text.trim() == agent_text.trim()
                || previous.is_some_and(|previous| previous.trim() == owner_text.trim())
            {
                continue;
            }
            let pr_number: i64 = row.try_get("pr_number")?;
            corrections.push(Correction {
                id: CorrectionId::Edit(CommentVersionId(row.try_get("id")?)),
                pr_number: u64::try_from(pr_number).ok(),
                text: CorrectionText::CommentEdit {
                    comment: row.try_get("kind")?,
                    agent_text,
                    owner_text,
                },
                created_at: row.try_get("created_at")?,
            });
        }
        Ok(corrections)
    }

    /// The owner's follow-ups since `since` on items whose PR was open, as corrections.
    async fn follow_up_corrections(
        &self,
        repo_id: RepoId,
        since: &str,
    ) -> Result<Vec<Correction>, StoreError> {
        let mut corrections = Vec::new();
        let follow_ups = sqlx::query(
            "SELECT f.id, f.body, f.created_at, fb.public_id, fb.pr_number FROM followups f \
             JOIN feedback fb ON fb.id = f.feedback_id \
             WHERE fb.repo_id = ? AND f.source = 'owner' AND f.created_at > ? \
               AND (f.candidate = 0 OR EXISTS (SELECT 1 FROM followup_inclusions i WHERE i.followup_id = f.id)) \
               AND EXISTS (SELECT 1 FROM runs r WHERE r.feedback_id = fb.id AND r.stage = 'code' \
                           AND r.status = 'succeeded' AND r.finished_at < f.created_at) \
             ORDER BY f.created_at, f.id",
        )
        .bind(repo_id.0)
        .bind(since)
        .fetch_all(&self.store.pool)
        .await?;
        for row in &follow_ups {
            let pr_number: Option<i64> = row.try_get("pr_number")?;
            corrections.push(Correction {
                id: CorrectionId::FollowUp(FollowUpId(row.try_get("id")?)),
                pr_number: pr_number.and_then(|n| u64::try_from(n).ok()),
                text: CorrectionText::FollowUp {
                    item: row.try_get("public_id")?,
                    text: row.try_get("body")?,
                },
                created_at: row.try_get("created_at")?,
            });
        }
        Ok(corrections)
    }

    /// When the last lessons run of `repo_id` that succeeded was made: the corrections
    /// after it are the new ones.
    pub async fn last_lessons_run_at(
        &self,
        repo_id: RepoId,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT max(created_at) FROM runs WHERE repo_id = ? AND stage = ? AND status = 'succeeded'",
        )
        .bind(repo_id.0)
        .bind(Stage::Lessons.as_str())
        .fetch_one(&self.store.pool)
        .await?)
    }

    /// The newest lessons run of `repo_id`, if it had one.
    pub async fn latest_lessons_run(&self, repo_id: RepoId) -> Result<Option<Run>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE repo_id = ? AND stage = 'lessons' ORDER BY id DESC LIMIT 1"
        ))
        .bind(repo_id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .as_ref()
        .map(run_from_row)
        .transpose()
    }

    /// The corrections since the last lessons run of `repo_id` that succeeded.
    pub async fn new_corrections(&self, repo_id: RepoId) -> Result<Vec<Correction>, StoreError> {
        let since = self.last_lessons_run_at(repo_id).await?;
        self.corrections_of(repo_id, since).await
    }

    /// Records what lessons run `run_id` proposed, as proposals of its repository.
    pub async fn record_lesson_proposals(
        &self,
        repo_id: RepoId,
        run_id: RunId,
        proposals: &[LessonProposal],
    ) -> Result<Vec<LessonId>, StoreError> {
        let now = self.store.now_text();
        let mut transaction = self.store.pool.begin().await?;
        let mut ids = Vec::new();
        for proposal in proposals {
            let sources: Vec<String> = proposal.sources.iter().map(ToString::to_string).collect();
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO lessons (repo_id, rule, why, paths, sources, state, proposed_by_run_id, created_at) \
                 VALUES (?, ?, ?, ?, ?, 'proposed', ?, ?) RETURNING id",
            )
            .bind(repo_id.0)
            .bind(&proposal.rule)
            .bind(&proposal.why)
            .bind(to_json(&proposal.paths))
            .bind(to_json(&sources))
            .bind(run_id.0)
            .bind(&now)
            .fetch_one(&mut *transaction)
            .await?;
            ids.push(LessonId(id));
        }
        transaction.commit().await?;
        Ok(ids)
    }

    /// Every lesson of `repo_id` (proposed, accepted, rejected), newest first.
    pub async fn lessons_of(&self, repo_id: RepoId) -> Result<Vec<Lesson>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            lesson_columns!(),
            " FROM lessons WHERE repo_id = ? ORDER BY id DESC"
        ))
        .bind(repo_id.0)
        .fetch_all(&self.store.pool)
        .await?
        .iter()
        .map(lesson_from_row)
        .collect()
    }

    /// One lesson.
    pub async fn lesson(&self, id: LessonId) -> Result<Lesson, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            lesson_columns!(),
            " FROM lessons WHERE id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or(StoreError::LessonNotFound(id))?;
        lesson_from_row(&row)
    }

    /// Records the owner's decision about lesson `id`; returns the lesson as it is now.
    /// Only an accepted lesson can be turned on or off, or kept.
    pub async fn decide_lesson(
        &self,
        id: LessonId,
        decision: LessonDecision,
    ) -> Result<Lesson, StoreError> {
        let lesson = self.lesson(id).await?;
        let now = self.store.now_text();
        let query = match decision {
            LessonDecision::Accept => sqlx::query(
                "UPDATE lessons SET state = 'accepted', enabled = 1, decided_at = ? WHERE id = ?",
            )
            .bind(&now),
            LessonDecision::Reject => {
                sqlx::query("UPDATE lessons SET state = 'rejected', decided_at = ? WHERE id = ?")
                    .bind(&now)
            }
            LessonDecision::Enable(_) | LessonDecision::Keep
                if lesson.state != LessonState::Accepted =>
            {
                return Err(StoreError::LessonNotAccepted {
                    id,
                    state: lesson.state.to_string(),
                });
            }
            LessonDecision::Enable(on) => sqlx::query(
                "UPDATE lessons SET enabled = ?, kept_at = coalesce(?, kept_at) WHERE id = ?",
            )
            .bind(on)
            .bind(on.then_some(&now)),
            LessonDecision::Keep => {
                sqlx::query("UPDATE lessons SET missing_paths = NULL, kept_at = ? WHERE id = ?")
                    .bind(&now)
            }
        };
        query.bind(id.0).execute(&self.store.pool).await?;
        self.lesson(id).await
    }

    /// The owner's new words for lesson `id`. Changing its paths clears the flag of
    /// vanished paths: the owner has looked.
    pub async fn edit_lesson(&self, id: LessonId, edit: &LessonEdit) -> Result<Lesson, StoreError> {
        let lesson = self.lesson(id).await?;
        let rule = edit.rule.clone().unwrap_or(lesson.rule);
        let why = edit.why.clone().unwrap_or(lesson.why);
        let paths_changed = edit.paths.is_some();
        let paths = edit.paths.clone().unwrap_or(lesson.paths);
        sqlx::query(
            "UPDATE lessons SET rule = ?, why = ?, paths = ?, edited_by_owner = 1, \
             missing_paths = CASE WHEN ? THEN NULL ELSE missing_paths END WHERE id = ?",
        )
        .bind(&rule)
        .bind(&why)
        .bind(to_json(&paths))
        .bind(paths_changed)
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        self.lesson(id).await
    }

    /// Flags lesson `id`: `paths` of it are gone from the base branch, so it is left out
    /// until the owner looks.
    pub async fn flag_vanished_paths(
        &self,
        id: LessonId,
        paths: &[String],
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE lessons SET missing_paths = ? WHERE id = ?")
            .bind(to_json(paths))
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// Records that run `run_id` carried `lessons` in its prompt.
    pub async fn record_carried_lessons(
        &self,
        run_id: RunId,
        lessons: &[LessonId],
    ) -> Result<(), StoreError> {
        let now = self.store.now_text();
        let mut transaction = self.store.pool.begin().await?;
        for lesson in lessons {
            sqlx::query("INSERT OR IGNORE INTO run_lessons (run_id, lesson_id) VALUES (?, ?)")
                .bind(run_id.0)
                .bind(lesson.0)
                .execute(&mut *transaction)
                .await?;
            sqlx::query("UPDATE lessons SET last_carried_at = ? WHERE id = ?")
                .bind(&now)
                .bind(lesson.0)
                .execute(&mut *transaction)
                .await?;
        }
        transaction.commit().await?;
        Ok(())
    }

    /// The lessons run `run_id` carried in its prompt.
    pub async fn lessons_carried_by(&self, run_id: RunId) -> Result<Vec<Lesson>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            lesson_columns!(),
            " FROM lessons WHERE id IN (SELECT lesson_id FROM run_lessons WHERE run_id = ?) ORDER BY id"
        ))
        .bind(run_id.0)
        .fetch_all(&self.store.pool)
        .await?
        .iter()
        .map(lesson_from_row)
        .collect()
    }

    /// `repo_id`'s lesson settings.
    pub async fn lesson_settings(&self, repo_id: RepoId) -> Result<LessonSettings, StoreError> {
        let row =
            sqlx::query("SELECT lessons_after_corrections, lessons_file FROM repos WHERE id = ?")
                .bind(repo_id.0)
                .fetch_one(&self.store.pool)
                .await?;
        let after: Option<i64> = row.try_get("lessons_after_corrections")?;
        Ok(LessonSettings {
            after_corrections: after.and_then(|n| u32::try_from(n).ok()),
            file: row.try_get("lessons_file")?,
        })
    }

    /// Sets `repo_id`'s lesson settings.
    pub async fn set_lesson_settings(
        &self,
        repo_id: RepoId,
        settings: &LessonSettings,
    ) -> Result<(), StoreError> {
        // The file is written inside the repository's working copy: a path out of it is
        // refused here, when the owner types it.
        let file = lesson_paths(std::slice::from_ref(&settings.file))
            .ok()
            .and_then(|paths| paths.into_iter().next())
            .ok_or_else(|| StoreError::BadSetting {
                key: "lessons file".to_owned(),
                value: settings.file.clone(),
                reason: "it must be a path inside the repository, such as AGENTS.md".to_owned(),
            })?;
        sqlx::query(
            "UPDATE repos SET lessons_after_corrections = ?, lessons_file = ? WHERE id = ?",
        )
        .bind(settings.after_corrections.map(i64::from))
        .bind(&file)
        .bind(repo_id.0)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }
}
