//! What the key forwarder adds and checks when the key it holds is a Claude plan's token
//! rather than an API key: the plan's terms let only Claude Code use the token, and
//! Anthropic's API takes it only with the OAuth beta named.
//!
//! A program in the sandbox other than Claude Code (a script of the repository, say) that
//! finds the placeholder cannot get the token sent for it: requests whose user agent is
//! not Claude Code's are refused before they leave. (A user agent can be written by
//! anyone; the check keeps honest programs off the plan, and the sandbox's placeholder
//! is worth nothing outside the run in any case.)

use axum::http::{HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};

use handoff_domain::claude_plan::{CLAUDE_CODE_USER_AGENT, PLAN_TOKEN_BETA};

/// The rules of a plan's token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanTokenRules {
    /// How the user agent of the only program that may use the token starts.
    pub user_agent_prefix: String,
    /// The beta every call made with the token names in `anthropic-beta`.
    pub beta: String,
}

impl PlanTokenRules {
    /// A Claude plan's rules: Claude Code only, with the OAuth beta.
    pub fn claude_code() -> PlanTokenRules {
        PlanTokenRules {
            user_agent_prefix: CLAUDE_CODE_USER_AGENT.to_owned(),
            beta: PLAN_TOKEN_BETA.to_owned(),
        }
    }

    /// Why a request with `headers` may not carry the token, if it may not.
    pub fn refusal(&self, headers: &HeaderMap) -> Option<String> {
        let user_agent = headers
            .get("user-agent")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        if user_agent.starts_with(&self.user_agent_prefix) {
            None
        } else {
            Some(format!(
                "a Claude plan's token is sent for Claude Code only (its user agent starts \
                 {}), not for {:?}",
                self.user_agent_prefix,
                user_agent.chars().take(60).collect::<String>()
            ))
        }
    }

    /// Makes `headers` right for the token: the beta named (Claude Code names it; a
    /// request that lacks it would be refused by the provider), and no API-key header
    /// beside it.
    pub fn prepare(&self, headers: &mut HeaderMap) {
        headers.remove("x-api-key");
        let betas = headers
            .get_all("anthropic-beta")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .filter(|beta| !beta.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>();
        if betas.iter().any(|beta| beta == &self.beta) {
            return;
        }
        let joined = betas
            .into_iter()
            .chain([self.beta.clone()])
            .collect::<Vec<_>>()
            .join(",");
        match HeaderValue::from_str(&joined) {
            Ok(value) => {
                headers.insert("anthropic-beta", value);
            }
            Err(error) => {
                tracing::warn!(%error, "the key forwarder could not name the plan's beta");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn only_claude_code_may_carry_a_plans_token() {
        let rules = PlanTokenRules::claude_code();
        assert_eq!(
            rules.refusal(&headers(&[(
                "user-agent",
                "claude-cli/2.1.332 (external, sdk-cli)"
            )])),
            None
        );
        let refused = rules
            .refusal(&headers(&[("user-agent", "python-requests/2.32")]))
            .expect("another program is refused");
        assert!(refused.contains("Claude Code only"), "{refused}");
        assert!(rules.refusal(&HeaderMap::new()).is_some());
    }

    #[test]
    fn the_oauth_beta_is_named_once_and_no_api_key_header_goes_with_the_token() {
        let rules = PlanTokenRules::claude_code();
        let mut sent_by_claude_code = headers(&[
            ("anthropic-beta", "claude-code-20250219,oauth-2025-04-20"),
            ("x-api-key", "handoff-placeholder-1"),
        ]);
        rules.prepare(&mut sent_by_claude_code);
        assert_eq!(
            sent_by_claude_code["anthropic-beta"],
            "claude-code-20250219,oauth-2025-04-20"
        );
        assert!(sent_by_claude_code.get("x-api-key").is_none());

        let mut without = headers(&[("anthropic-beta", "claude-code-20250219")]);
        rules.prepare(&mut without);
        assert_eq!(
            without["anthropic-beta"],
            "claude-code-20250219,oauth-2025-04-20"
        );
        let mut none = HeaderMap::new();
        rules.prepare(&mut none);
        assert_eq!(none["anthropic-beta"], "oauth-2025-04-20");
    }
}
