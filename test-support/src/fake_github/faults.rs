//! Faults the fake can inject, each on requests matching a method and a path fragment,
//! a set number of times: server errors, slow answers, rate limits, HTML where JSON
//! belongs, truncated or incomplete JSON, a duplicate-PR refusal.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Answer with this status and a GitHub-style message.
    Status(u16),
    /// Wait this long, then answer normally.
    Slow(Duration),
    /// 403 with the primary rate limit used up until `reset_in` from now.
    RateLimited { reset_in: Duration },
    /// 429 with `Retry-After` (a secondary rate limit).
    TooManyRequests { retry_after_seconds: u64 },
    /// 200 with an HTML page (a proxy's error page, a captive portal).
    Html,
    /// The normal JSON answer, cut in half.
    Truncated,
    /// The normal JSON answer without this field (in the object, or in each item).
    MissingField(String),
    /// 422: a pull request already exists for that head.
    DuplicatePull,
    /// The request is carried out, then the answer is lost: this status comes back
    /// instead (a proxy's 502 after the write went through).
    AnswerLost(u16),
    /// 403 as GitHub refuses a fine-grained token without the permission named
    /// (`checks=read`): "Resource not accessible by personal access token".
    NotAccessible { permission: String },
}

/// When a fault applies.
#[derive(Debug, Clone)]
pub struct FaultRule {
    pub method: Option<String>,
    pub path_contains: String,
    pub times: usize,
    pub fault: Fault,
}

impl FaultRule {
    /// `fault` on requests whose path contains `path_contains`, once.
    pub fn new(path_contains: &str, fault: Fault) -> Self {
        FaultRule {
            method: None,
            path_contains: path_contains.to_owned(),
            times: 1,
            fault,
        }
    }

    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_owned());
        self
    }

    pub fn times(mut self, times: usize) -> Self {
        self.times = times;
        self
    }

    pub fn matches(&self, method: &str, path: &str) -> bool {
        self.times > 0
            && self
                .method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && path.contains(&self.path_contains)
    }
}

/// Takes the first rule that matches, using up one of its times.
pub fn take_fault(rules: &mut [FaultRule], method: &str, path: &str) -> Option<Fault> {
    let rule = rules.iter_mut().find(|rule| rule.matches(method, path))?;
    rule.times -= 1;
    Some(rule.fault.clone())
}
