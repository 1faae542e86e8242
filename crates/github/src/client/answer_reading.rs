//! Reading GitHub's answers: a request's name for the log and errors, a header's
//! text, GitHub's own message out of an error body, and when a rate limit resets.

use chrono::{DateTime, TimeZone as _, Utc};
use http::header::HeaderMap;
use http::{Method, StatusCode};

pub(super) fn request_name(method: &Method, path: &str) -> String {
    let path = path.split('?').next().unwrap_or(path);
    format!("{method} {path}")
}

pub(super) fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// GitHub's `message` from an error body, if it has one.
pub(super) fn github_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|value| {
            let message = value.get("message")?.as_str()?.to_owned();
            let details: Vec<String> = value
                .get("errors")
                .and_then(|errors| errors.as_array())
                .map(|errors| {
                    errors
                        .iter()
                        .filter_map(|error| {
                            error
                                .get("message")
                                .and_then(|m| m.as_str())
                                .map(str::to_owned)
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(if details.is_empty() {
                message
            } else {
                format!("{message}: {}", details.join("; "))
            })
        })
        .unwrap_or_else(|| "no reason given".to_owned())
}

/// When a rate-limited answer says the limit resets, if it is one.
pub(super) fn rate_limit_reset(status: StatusCode, headers: &HeaderMap) -> Option<DateTime<Utc>> {
    if status != StatusCode::FORBIDDEN && status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    if let Some(seconds) =
        header_text(headers, "retry-after").and_then(|v| v.trim().parse::<i64>().ok())
    {
        return Some(Utc::now() + chrono::Duration::seconds(seconds.max(0)));
    }
    let exhausted = header_text(headers, "x-ratelimit-remaining").map(str::trim) == Some("0");
    if !exhausted {
        return None;
    }
    header_text(headers, "x-ratelimit-reset")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .and_then(|epoch| Utc.timestamp_opt(epoch, 0).single())
        .or_else(|| Some(Utc::now() + chrono::Duration::seconds(60)))
}
