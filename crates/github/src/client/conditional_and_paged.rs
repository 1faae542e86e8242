//! Requests that cost nothing when nothing changed (the stored ETag or Last-Modified is
//! sent, and a 304 is answered from the stored copy), and lists read page by page
//! through GitHub's `Link` header.

use crate::error::GithubError;
use crate::link_header::next_page_url;
use handoff_store::{Store, StoredAnswer};
use http::header::{HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use serde::de::DeserializeOwned;

use super::*;

impl GithubClient {
    /// A conditional GET: sends the stored validators of `path`; a 304 returns the
    /// stored body (and costs nothing against the rate limit), a 200 stores the new one.
    pub async fn get_conditional(
        &self,
        store: &Store,
        path: &str,
    ) -> Result<ConditionalAnswer, GithubError> {
        let path = self.relative_path(path);
        let key = format!("{}{}", self.endpoints.api_base, path);
        let stored = store.sync_state().stored_answer(&key).await?;
        let mut headers = HeaderMap::new();
        if let Some(stored) = &stored {
            if let Some(etag) = stored
                .etag
                .as_deref()
                .and_then(|v| HeaderValue::from_str(v).ok())
            {
                headers.insert(http::header::IF_NONE_MATCH, etag);
            } else if let Some(date) = stored
                .last_modified
                .as_deref()
                .and_then(|v| HeaderValue::from_str(v).ok())
            {
                headers.insert(http::header::IF_MODIFIED_SINCE, date);
            }
        }
        let answer = self.send(Method::GET, &path, None, headers).await?;
        if answer.status == StatusCode::NOT_MODIFIED {
            if let Some(stored) = stored {
                return Ok(ConditionalAnswer {
                    body: stored.body,
                    changed: false,
                    next_page: stored.next_page,
                });
            }
            // A 304 for nothing we sent: ask again without validators.
            store.sync_state().forget_answer(&key).await?;
            let answer = self
                .send(Method::GET, &path, None, HeaderMap::new())
                .await?;
            return self.store_conditional(store, &key, &path, answer).await;
        }
        self.store_conditional(store, &key, &path, answer).await
    }

    pub(super) async fn store_conditional(
        &self,
        store: &Store,
        key: &str,
        path: &str,
        answer: Answer,
    ) -> Result<ConditionalAnswer, GithubError> {
        // Check it is JSON before keeping it.
        let _: serde_json::Value =
            self.parse_json(&Method::GET, path, &answer.headers, &answer.body)?;
        let body =
            String::from_utf8(answer.body.to_vec()).map_err(|_| GithubError::MalformedAnswer {
                request: request_name(&Method::GET, path),
                detail: "the body is not UTF-8".to_owned(),
            })?;
        let next_page = header_text(&answer.headers, "link")
            .and_then(next_page_url)
            .map(|url| self.relative_path(&url));
        let etag = header_text(&answer.headers, "etag").map(str::to_owned);
        let last_modified = header_text(&answer.headers, "last-modified").map(str::to_owned);
        if etag.is_some() || last_modified.is_some() {
            store
                .sync_state()
                .store_answer(
                    key,
                    &StoredAnswer {
                        etag,
                        last_modified,
                        body: body.clone(),
                        next_page: next_page.clone(),
                    },
                )
                .await?;
        }
        Ok(ConditionalAnswer {
            body,
            changed: true,
            next_page,
        })
    }

    /// Pages of a list, conditionally, from the first on for as long as `more` says a
    /// page calls for the next (and there is one); `changed` if any page changed.
    pub async fn get_pages_while<T: DeserializeOwned>(
        &self,
        store: &Store,
        first_page: &str,
        more: impl Fn(&[T]) -> bool,
    ) -> Result<(Vec<T>, bool), GithubError> {
        let mut items = Vec::new();
        let mut changed = false;
        let mut next = Some(first_page.to_owned());
        let mut pages = 0;
        while let Some(path) = next {
            pages += 1;
            if pages > 1000 {
                return Err(GithubError::MalformedAnswer {
                    request: request_name(&Method::GET, first_page),
                    detail: "more than 1000 pages: the Link headers loop".to_owned(),
                });
            }
            let answer = self.get_conditional(store, &path).await?;
            changed |= answer.changed;
            let page: Vec<T> = self.parse_json(
                &Method::GET,
                &path,
                &HeaderMap::new(),
                answer.body.as_bytes(),
            )?;
            let go_on = more(&page);
            items.extend(page);
            next = answer.next_page.filter(|_| go_on);
        }
        Ok((items, changed))
    }

    /// Every page of a list, conditionally; `changed` if any page changed.
    pub async fn get_all_pages<T: DeserializeOwned>(
        &self,
        store: &Store,
        first_page: &str,
    ) -> Result<(Vec<T>, bool), GithubError> {
        self.get_pages_while(store, first_page, |_: &[T]| true)
            .await
    }
}
