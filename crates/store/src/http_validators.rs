//! Validators of GitHub answers: the ETag or Last-Modified of each URL last fetched,
//! with the body, so the next request can be conditional and a 304 costs nothing.

use super::error::StoreError;
use crate::areas::SyncStateRecords;

/// What was stored of an earlier answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub body: String,
    /// The URL of the next page (from the `Link` header), for paginated lists.
    pub next_page: Option<String>,
}

impl SyncStateRecords<'_> {
    pub async fn stored_answer(&self, url: &str) -> Result<Option<StoredAnswer>, StoreError> {
        let row = sqlx::query(
            "SELECT etag, last_modified, body, next_page FROM http_validators WHERE url = ?",
        )
        .bind(url)
        .fetch_optional(&self.store.pool)
        .await?;
        row.map(|row| {
            use sqlx::Row as _;
            Ok(StoredAnswer {
                etag: row.try_get("etag")?,
                last_modified: row.try_get("last_modified")?,
                body: row.try_get("body")?,
                next_page: row.try_get("next_page")?,
            })
        })
        .transpose()
    }

    pub async fn store_answer(&self, url: &str, answer: &StoredAnswer) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO http_validators (url, etag, last_modified, body, next_page, fetched_at) \
             VALUES (?, ?, ?, ?, ?, ?) \
             ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, \
             body = excluded.body, next_page = excluded.next_page, fetched_at = excluded.fetched_at",
        )
        .bind(url)
        .bind(&answer.etag)
        .bind(&answer.last_modified)
        .bind(&answer.body)
        .bind(&answer.next_page)
        .bind(self.store.now_text())
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Forgets a stored answer (when its body turned out unusable).
    pub async fn forget_answer(&self, url: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM http_validators WHERE url = ?")
            .bind(url)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }
}
