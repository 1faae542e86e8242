//! Paying for Claude Code with a Claude Pro or Max plan instead of an API key: the token
//! `claude setup-token` prints, how it is sent, which agent may carry it, and the monthly
//! credit each plan gives headless runs.
//!
//! The plan's terms let its tokens be used by Claude Code (and Claude.ai) only, so only
//! the `claude` preset ever gets one: no other preset, and no custom command, can pick
//! it. Claude Code reads the token from `CLAUDE_CODE_OAUTH_TOKEN` and sends it as
//! `Authorization: Bearer`, with the `oauth-2025-04-20` beta in `anthropic-beta`; inside
//! a sandbox that variable holds the run's placeholder, as an API key's would, and the
//! key forwarder puts the token in its place. Since 2026-06-15, headless use (`claude
//! -p`, which is how Handoff runs it) draws on a monthly credit of its own, priced at
//! API rates: the plan's credit is a budget in the same dollars as every other.

use super::agent_key::{AgentKey, KeyHeader, ANTHROPIC_MODEL_ENDPOINTS};

/// How every plan token starts (`claude setup-token`'s long-lived OAuth token).
pub const PLAN_TOKEN_PREFIX: &str = "sk-ant-oat01-";

/// The beta Anthropic's API needs on every call made with a plan's token.
pub const PLAN_TOKEN_BETA: &str = "oauth-2025-04-20";

/// The start of the user agent Claude Code sends (`claude-cli/2.1.332 (external,
/// sdk-cli)`): the forwarder passes a plan's token on for no other program.
pub const CLAUDE_CODE_USER_AGENT: &str = "claude-cli/";

/// The only preset that may carry a plan's token.
pub const PLAN_PRESET: &str = "claude";

/// A plan's token as Claude Code carries it to the forwarder: the placeholder in
/// `CLAUDE_CODE_OAUTH_TOKEN` (and no `ANTHROPIC_API_KEY`, which would win over it), sent
/// as `Authorization: Bearer` to the same address and endpoints as the API key.
pub const PLAN_KEY: AgentKey = AgentKey {
    variable: "CLAUDE_CODE_OAUTH_TOKEN",
    provider: "anthropic",
    api_host: "api.anthropic.com",
    header: KeyHeader {
        name: "authorization",
        prefix: "Bearer ",
    },
    base_address_variables: &["ANTHROPIC_BASE_URL"],
    base_path: "",
    model_endpoints: ANTHROPIC_MODEL_ENDPOINTS,
};

crate::stored_text_enum! {
    /// The plans whose headless runs draw on a monthly credit.
    pub enum ClaudePlan as "Claude plan" {
        Pro => "pro",
        Max5x => "max-5x",
        Max20x => "max-20x",
    }
}

impl ClaudePlan {
    /// The plan's monthly credit for headless runs, in API-equivalent dollars.
    pub fn monthly_credit_usd(self) -> f64 {
        match self {
            ClaudePlan::Pro => 20.0,
            ClaudePlan::Max5x => 100.0,
            ClaudePlan::Max20x => 200.0,
        }
    }

    /// "Claude Max 5x".
    pub fn label(self) -> &'static str {
        match self {
            ClaudePlan::Pro => "Claude Pro",
            ClaudePlan::Max5x => "Claude Max 5x",
            ClaudePlan::Max20x => "Claude Max 20x",
        }
    }
}

/// What happens once this month's runs on the plan have drawn its whole credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PastTheCredit {
    /// Calls paid with the plan are refused, as any spent budget refuses them (the
    /// default: past the credit, the account pays API rates or stops).
    Stop,
    /// Calls go on: the owner's account pays for them at API rates.
    GoOn,
}

impl PastTheCredit {
    /// `stop` or `go-on`, as the setting holds it.
    pub fn parse(text: &str) -> Option<PastTheCredit> {
        match text.trim() {
            "stop" => Some(PastTheCredit::Stop),
            "go-on" => Some(PastTheCredit::GoOn),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PastTheCredit::Stop => "stop",
            PastTheCredit::GoOn => "go-on",
        }
    }
}

/// The owner's plan as the budgets see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanCredit {
    pub plan: ClaudePlan,
    pub past_the_credit: PastTheCredit,
}

impl PlanCredit {
    /// The credit as a budget of the calendar month (UTC) for the runs paid with the
    /// plan, when the owner has it stop them.
    pub fn month_budget_usd(self) -> Option<f64> {
        match self.past_the_credit {
            PastTheCredit::Stop => Some(self.plan.monthly_credit_usd()),
            PastTheCredit::GoOn => None,
        }
    }
}

/// Why a pasted plan token is not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanTokenError {
    #[error(
        "this is not a Claude plan token: those start with {PLAN_TOKEN_PREFIX} (run `claude \
         setup-token` and paste what it prints)"
    )]
    NotAPlanToken,
    #[error("this is an Anthropic API key, not a plan token: keep it as the anthropic key")]
    AnApiKey,
}

/// Checks that `token` is what `claude setup-token` prints.
pub fn check_plan_token(token: &str) -> Result<(), PlanTokenError> {
    let token = token.trim();
    if token.starts_with("sk-ant-api") {
        return Err(PlanTokenError::AnApiKey);
    }
    let rest = token
        .strip_prefix(PLAN_TOKEN_PREFIX)
        .ok_or(PlanTokenError::NotAPlanToken)?;
    let plausible = rest.len() >= 16
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if plausible {
        Ok(())
    } else {
        Err(PlanTokenError::NotAPlanToken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_token_is_what_claude_setup_token_prints() {
        assert_eq!(
            check_plan_token("sk-ant-oat01-AbCdEfGhIjKlMnOpQrStUv_wx-yz0123456789"),
            Ok(())
        );
        assert_eq!(
            check_plan_token("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv"),
            Err(PlanTokenError::AnApiKey)
        );
        assert_eq!(
            check_plan_token("sk-ant-oat01-short"),
            Err(PlanTokenError::NotAPlanToken)
        );
        assert_eq!(
            check_plan_token("ghp_abcdefghijklmnopqrstuvwxyz"),
            Err(PlanTokenError::NotAPlanToken)
        );
    }

    #[test]
    fn each_plan_has_its_monthly_credit() {
        let credits: Vec<(&str, f64)> = ClaudePlan::ALL
            .iter()
            .map(|plan| (plan.as_str(), plan.monthly_credit_usd()))
            .collect();
        assert_eq!(
            credits,
            [("pro", 20.0), ("max-5x", 100.0), ("max-20x", 200.0)]
        );
        assert_eq!(
            ClaudePlan::parse("max-5x").map(ClaudePlan::label),
            Some("Claude Max 5x")
        );
    }
}
