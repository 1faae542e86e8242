//! The GitHub REST client: octocrab as the transport (base URI, auth header, timeouts),
//! with Handoff's own rules on top: every answer's status mapped to a [`GithubError`]
//! that names the request, transient failures retried with backoff, rate limits waited
//! out (within a bound) instead of failing, conditional GETs whose validators and bodies
//! live in the store, and no secret in any error text.
//!
//! - this file: [`GithubClient`], one request sent with the policy (retries, rate
//!   limits, the token) and its answer read;
//! - [`answer_reading`]: what an answer says (GitHub's message, a rate limit's reset);
//! - [`conditional_and_paged`]: requests answered from the stored ETag when nothing
//!   changed, and every page of a list.

mod answer_reading;
mod conditional_and_paged;

use self::answer_reading::{github_message, header_text, rate_limit_reset, request_name};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chrono::Utc;
use http::header::{HeaderMap, HeaderName};
use http::{Method, StatusCode};
use http_body_util::BodyExt as _;
use octocrab::Octocrab;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::endpoints::GithubEndpoints;
use super::error::GithubError;
use handoff_store::secrets::{redact, Secret};
use handoff_store::Store;

/// How hard the client tries.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestPolicy {
    /// Attempts per request for transient failures (network, 5xx), at least 1.
    pub attempts: u32,
    /// The wait before the second attempt; it doubles for each further one.
    pub first_retry_delay: Duration,
    /// The longest a rate limit is waited out; a later reset fails the request.
    pub max_rate_limit_wait: Duration,
    /// Connect and read timeout of each attempt.
    pub timeout: Duration,
}

impl Default for RequestPolicy {
    fn default() -> Self {
        RequestPolicy {
            attempts: 3,
            first_retry_delay: Duration::from_millis(500),
            max_rate_limit_wait: Duration::from_secs(15 * 60),
            timeout: Duration::from_secs(30),
        }
    }
}

/// Counts of what the client sent, for reports and benchmarks.
#[derive(Debug, Default)]
pub struct RequestCounters {
    sent: AtomicU64,
    not_modified: AtomicU64,
    rate_limit_waits: AtomicU64,
}

/// A snapshot of [`RequestCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RequestCount {
    /// Requests sent (each attempt counts).
    pub sent: u64,
    /// Of those, answered 304 Not Modified: free against the rate limit.
    pub not_modified: u64,
    /// Times a rate limit was waited out.
    pub rate_limit_waits: u64,
}

/// An answer with its status, headers and body.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// The body of a conditional GET, and whether it changed since the last one.
#[derive(Debug, Clone)]
pub struct ConditionalAnswer {
    pub body: String,
    pub changed: bool,
    /// The next page's path, for paginated lists.
    pub next_page: Option<String>,
}

/// A GitHub REST client for one API base and one token.
#[derive(Debug, Clone)]
pub struct GithubClient {
    octocrab: Octocrab,
    /// The same transport rooted at the GraphQL base, which GitHub Enterprise keeps
    /// outside the REST base (`https://HOST/api/graphql`, not `/api/v3/graphql`).
    graphql_octocrab: Octocrab,
    endpoints: GithubEndpoints,
    token: Secret,
    policy: RequestPolicy,
    counters: Arc<RequestCounters>,
    /// The login of the account the token belongs to, once asked.
    viewer_login: Arc<tokio::sync::OnceCell<String>>,
}

/// Which of the client's two roots a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ApiRoot {
    Rest,
    Graphql,
}

impl GithubClient {
    pub fn new(
        endpoints: GithubEndpoints,
        token: Secret,
        policy: RequestPolicy,
    ) -> Result<Self, GithubError> {
        let transport = |base: &str| {
            Octocrab::builder()
                .base_uri(base)
                .map_err(|_| GithubError::BadAddress(base.to_owned()))?
                .personal_token(token.expose().to_owned())
                .set_connect_timeout(Some(policy.timeout))
                .set_read_timeout(Some(policy.timeout))
                .add_header(
                    HeaderName::from_static("x-github-api-version"),
                    "2022-11-28".to_owned(),
                )
                .build()
                .map_err(|error| GithubError::BadAddress(format!("{base}: {error}")))
        };
        Ok(GithubClient {
            octocrab: transport(&endpoints.api_base)?,
            graphql_octocrab: transport(&endpoints.graphql_root())?,
            endpoints,
            token,
            policy,
            counters: Arc::new(RequestCounters::default()),
            viewer_login: Arc::new(tokio::sync::OnceCell::new()),
        })
    }

    /// The login of the account the token belongs to: the account whose text Handoff
    /// trusts as the owner's (or its own). Asked once per client, conditionally, so it
    /// costs no rate limit when nothing changed.
    pub async fn viewer_login(&self, store: &Store) -> Result<String, GithubError> {
        self.viewer_login
            .get_or_try_init(|| async {
                let answer = self.get_conditional(store, "/user").await?;
                let user: super::wire::WireUser = self.parse_json(
                    &Method::GET,
                    "/user",
                    &HeaderMap::new(),
                    answer.body.as_bytes(),
                )?;
                Ok(user.login)
            })
            .await
            .cloned()
    }

    /// A GraphQL query (for what the REST API does not tell, such as who last edited a
    /// comment); returns its `data`, or the errors GitHub gave as a refusal.
    pub async fn graphql(
        &self,
        query: &str,
        variables: serde_json::Value,
    ) -> Result<serde_json::Value, GithubError> {
        let request = serde_json::json!({ "query": query, "variables": variables });
        let answer = self
            .send_to(
                ApiRoot::Graphql,
                Method::POST,
                "/graphql",
                Some(&request),
                HeaderMap::new(),
            )
            .await?;
        let mut value: serde_json::Value =
            self.parse_json(&Method::POST, "/graphql", &answer.headers, &answer.body)?;
        if let Some(errors) = value.get("errors").and_then(|errors| errors.as_array()) {
            if !errors.is_empty() {
                let messages: Vec<&str> = errors
                    .iter()
                    .filter_map(|error| error.get("message").and_then(|m| m.as_str()))
                    .collect();
                return Err(GithubError::Unprocessable {
                    request: "POST /graphql".to_owned(),
                    message: redact(&messages.join("; "), &self.token),
                });
            }
        }
        Ok(value
            .get_mut("data")
            .map(serde_json::Value::take)
            .unwrap_or_default())
    }

    pub fn endpoints(&self) -> &GithubEndpoints {
        &self.endpoints
    }

    /// The token, for the host-side git push of the pipeline (never for a sandbox).
    pub fn token(&self) -> &Secret {
        &self.token
    }

    pub fn request_count(&self) -> RequestCount {
        RequestCount {
            sent: self.counters.sent.load(Ordering::Relaxed),
            not_modified: self.counters.not_modified.load(Ordering::Relaxed),
            rate_limit_waits: self.counters.rate_limit_waits.load(Ordering::Relaxed),
        }
    }

    /// `path` relative to the API base: a path as given, or a `Link` URL made relative.
    fn relative_path(&self, path_or_url: &str) -> String {
        path_or_url
            .strip_prefix(&self.endpoints.api_base)
            .unwrap_or(path_or_url)
            .to_owned()
    }

    async fn send_once(
        &self,
        root: ApiRoot,
        method: &Method,
        path: &str,
        body: Option<&serde_json::Value>,
        headers: &HeaderMap,
    ) -> Result<Answer, GithubError> {
        let mut builder = http::Request::builder()
            .method(method.clone())
            .uri(path)
            .header(http::header::ACCEPT, "application/vnd.github+json");
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        let transport = |error: octocrab::Error| GithubError::Unreachable {
            request: request_name(method, path),
            detail: redact(
                error.to_string().lines().next().unwrap_or_default(),
                &self.token,
            ),
        };
        let octocrab = match root {
            ApiRoot::Rest => &self.octocrab,
            ApiRoot::Graphql => &self.graphql_octocrab,
        };
        let request = octocrab.build_request(builder, body).map_err(transport)?;
        self.counters.sent.fetch_add(1, Ordering::Relaxed);
        let response = octocrab.execute(request).await.map_err(transport)?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await.map_err(transport)?.to_bytes();
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    /// Sends a request until it succeeds, fails for good, or runs out of attempts:
    /// transient failures are retried with backoff (POST only when nothing reached the
    /// server), rate limits are waited out. A 304 counts as success.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
        headers: HeaderMap,
    ) -> Result<Answer, GithubError> {
        self.send_to(ApiRoot::Rest, method, path, body, headers)
            .await
    }

    async fn send_to(
        &self,
        root: ApiRoot,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
        headers: HeaderMap,
    ) -> Result<Answer, GithubError> {
        let path = self.relative_path(path);
        let request = request_name(&method, &path);
        let mut delay = self.policy.first_retry_delay;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let last_attempt = attempt >= self.policy.attempts.max(1);
            let outcome = self.send_once(root, &method, &path, body, &headers).await;
            let answer = match outcome {
                Ok(answer) => answer,
                Err(error) => {
                    let retry = !last_attempt && method != Method::POST;
                    if retry {
                        tokio::time::sleep(delay).await;
                        delay *= 2;
                        continue;
                    }
                    return Err(error);
                }
            };
            let status = answer.status;
            if status.is_success() || status == StatusCode::NOT_MODIFIED {
                if status == StatusCode::NOT_MODIFIED {
                    self.counters.not_modified.fetch_add(1, Ordering::Relaxed);
                }
                return Ok(answer);
            }
            if let Some(reset_at) = rate_limit_reset(status, &answer.headers) {
                let wait = (reset_at - Utc::now()).to_std().unwrap_or_default()
                    + Duration::from_millis(250);
                if wait > self.policy.max_rate_limit_wait {
                    return Err(GithubError::RateLimited { request, reset_at });
                }
                self.counters
                    .rate_limit_waits
                    .fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(wait).await;
                attempt -= 1;
                continue;
            }
            if status.is_server_error() && !last_attempt && method != Method::POST {
                tokio::time::sleep(delay).await;
                delay *= 2;
                continue;
            }
            return Err(self.status_error(&request, &answer));
        }
    }

    fn status_error(&self, request: &str, answer: &Answer) -> GithubError {
        let request = request.to_owned();
        let message = redact(&github_message(&answer.body), &self.token);
        match answer.status {
            StatusCode::UNAUTHORIZED => GithubError::Unauthorized { request },
            StatusCode::NOT_FOUND | StatusCode::GONE => GithubError::NotFound { request },
            StatusCode::FORBIDDEN => GithubError::Forbidden { request, message },
            StatusCode::UNPROCESSABLE_ENTITY | StatusCode::CONFLICT | StatusCode::BAD_REQUEST => {
                GithubError::Unprocessable { request, message }
            }
            status if status.is_server_error() => GithubError::Server {
                request,
                status: status.as_u16(),
            },
            status => GithubError::Unprocessable {
                request,
                message: format!("unexpected status {}: {message}", status.as_u16()),
            },
        }
    }

    /// Reads a JSON answer, saying plainly what is wrong with one that is not.
    pub fn parse_json<T: DeserializeOwned>(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<T, GithubError> {
        let malformed = |detail: String| GithubError::MalformedAnswer {
            request: request_name(method, &self.relative_path(path)),
            detail,
        };
        let content_type = header_text(headers, "content-type").unwrap_or_default();
        let trimmed = body
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .map(|i| &body[i..])
            .unwrap_or(&[]);
        if content_type.starts_with("text/html") || trimmed.starts_with(b"<") {
            return Err(malformed(
                "it is HTML, not JSON (a proxy or captive portal?)".to_owned(),
            ));
        }
        if trimmed.is_empty() {
            return Err(malformed("the body is empty".to_owned()));
        }
        serde_json::from_slice(body).map_err(|error| {
            malformed(match error.classify() {
                serde_json::error::Category::Eof => format!("the body was cut short ({error})"),
                serde_json::error::Category::Syntax => {
                    format!("the body is not valid JSON ({error})")
                }
                _ => format!("the JSON does not have the expected shape ({error})"),
            })
        })
    }

    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, GithubError> {
        let answer = self.send(Method::GET, path, None, HeaderMap::new()).await?;
        self.parse_json(&Method::GET, path, &answer.headers, &answer.body)
    }

    pub async fn post_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, GithubError> {
        let answer = self
            .send(Method::POST, path, Some(body), HeaderMap::new())
            .await?;
        self.parse_json(&Method::POST, path, &answer.headers, &answer.body)
    }

    pub async fn patch_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, GithubError> {
        let answer = self
            .send(Method::PATCH, path, Some(body), HeaderMap::new())
            .await?;
        self.parse_json(&Method::PATCH, path, &answer.headers, &answer.body)
    }

    pub async fn delete(&self, path: &str) -> Result<(), GithubError> {
        self.send(Method::DELETE, path, None, HeaderMap::new())
            .await?;
        Ok(())
    }
}
