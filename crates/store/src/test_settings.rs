//! Each repository's test-only settings (`test_settings`): the variables its tests are
//! given in the agent's sandbox, set, listed in name order and removed. Whether a name
//! and value may be one is the domain's ([`handoff_domain::test_setting`]), checked
//! by the caller, which knows the secrets a value may not hold; the number of them is
//! held here, in the same transaction as the write.

use sqlx::Row as _;

use crate::areas::TestSettingRecords;
use crate::error::StoreError;
use handoff_domain::test_setting::{TestSetting, TestSettingError, MOST_TEST_SETTINGS};
use handoff_domain::RepoId;

/// Why a test-only setting was not kept.
#[derive(Debug, thiserror::Error)]
pub enum SetTestSettingError {
    #[error(transparent)]
    Refused(#[from] TestSettingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl TestSettingRecords<'_> {
    /// `repo_id`'s test-only settings, by name.
    pub async fn test_settings(&self, repo_id: RepoId) -> Result<Vec<TestSetting>, StoreError> {
        let rows =
            sqlx::query("SELECT name, value FROM test_settings WHERE repo_id = ? ORDER BY name")
                .bind(repo_id.0)
                .fetch_all(&self.store.pool)
                .await?;
        rows.iter()
            .map(|row| {
                Ok(TestSetting {
                    name: row.try_get("name")?,
                    value: row.try_get("value")?,
                })
            })
            .collect()
    }

    /// Sets `setting` for `repo_id`, replacing one of its name; refused when the
    /// repository already has the most it may have.
    pub async fn set_test_setting(
        &self,
        repo_id: RepoId,
        setting: &TestSetting,
    ) -> Result<(), SetTestSettingError> {
        let mut transaction = self.store.pool.begin().await.map_err(StoreError::from)?;
        let others: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM test_settings WHERE repo_id = ? AND name <> ?",
        )
        .bind(repo_id.0)
        .bind(&setting.name)
        .fetch_one(&mut *transaction)
        .await
        .map_err(StoreError::from)?;
        if usize::try_from(others).unwrap_or(usize::MAX) >= MOST_TEST_SETTINGS {
            return Err(TestSettingError::TooMany.into());
        }
        sqlx::query(
            "INSERT INTO test_settings (repo_id, name, value, set_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT (repo_id, name) DO UPDATE SET value = excluded.value, set_at = excluded.set_at",
        )
        .bind(repo_id.0)
        .bind(&setting.name)
        .bind(&setting.value)
        .bind(self.store.now_text())
        .execute(&mut *transaction)
        .await
        .map_err(StoreError::from)?;
        transaction.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    /// Removes `repo_id`'s setting `name`; whether there was one.
    pub async fn remove_test_setting(
        &self,
        repo_id: RepoId,
        name: &str,
    ) -> Result<bool, StoreError> {
        let removed = sqlx::query("DELETE FROM test_settings WHERE repo_id = ? AND name = ?")
            .bind(repo_id.0)
            .bind(name)
            .execute(&self.store.pool)
            .await?
            .rows_affected();
        Ok(removed > 0)
    }
}
