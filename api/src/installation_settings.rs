//! This installation's settings (not secrets), as `handoff config` reads and changes
//! them: the ones a person may change, each checked before it is kept (an address a
//! secret goes to must be https or this machine, a number must read, a plan must be
//! one), so that a setting is refused for the same reason wherever it is typed.

use super::{invalid_input, AppCore};
use handoff::domain::claude_plan::{ClaudePlan, PastTheCredit};
use handoff::domain::model_prices::PriceTable;
use handoff::error_code::CodedError;
use handoff::service_address::check_secret_address;
use handoff::store::SettingKey;

/// The settings a person may change (the others are kept by other commands).
pub const EDITABLE_SETTINGS: &[SettingKey] = &[
    SettingKey::GithubApiBase,
    SettingKey::GithubDeviceClientId,
    SettingKey::AgentGitName,
    SettingKey::AgentGitEmail,
    SettingKey::DockerDefaultImage,
    SettingKey::E2bApiBase,
    SettingKey::E2bEnvdUrl,
    SettingKey::AgentImageBase,
    SettingKey::AgentImageStandIn,
    SettingKey::AnthropicApiBase,
    SettingKey::OpenaiApiBase,
    SettingKey::LogLevel,
    SettingKey::KeptCopyDays,
    SettingKey::UpdateFeed,
    SettingKey::BudgetRunUsd,
    SettingKey::BudgetRunTokens,
    SettingKey::BudgetDayUsd,
    SettingKey::SpendPrices,
    SettingKey::ClaudePlan,
    SettingKey::ClaudePlanPastCredit,
    SettingKey::QueueSlots,
    SettingKey::QueueSlotsDocker,
    SettingKey::QueueSlotsE2b,
    SettingKey::QueueSlotsLocal,
    SettingKey::AgentForkPlace,
    SettingKey::SyncIntervalSeconds,
];

/// The editable setting named `name`.
pub fn editable_setting(name: &str) -> Result<SettingKey, CodedError> {
    SettingKey::parse(name.trim())
        .filter(|key| EDITABLE_SETTINGS.contains(key))
        .ok_or_else(|| {
            let names: Vec<&str> = EDITABLE_SETTINGS.iter().map(|key| key.as_str()).collect();
            invalid_input(format!(
                "unknown setting {name:?}: one of {}",
                names.join(", ")
            ))
        })
}

/// Every editable setting with its value (`None`: the default).
pub async fn editable_settings(
    core: &AppCore,
) -> Result<Vec<(SettingKey, Option<String>)>, CodedError> {
    let mut settings = Vec::new();
    for key in EDITABLE_SETTINGS {
        settings.push((*key, core.store.settings().setting(*key).await?));
    }
    Ok(settings)
}

/// One setting's value (`None`: the default).
pub async fn setting(core: &AppCore, key: SettingKey) -> Result<Option<String>, CodedError> {
    Ok(core.store.settings().setting(key).await?)
}

/// Why `value` cannot be `key`'s, if it cannot.
fn refusal_of(key: SettingKey, value: &str) -> Option<String> {
    let refused = |result: Result<(), String>| result.err();
    match key {
        SettingKey::GithubApiBase => refused(
            handoff::github::GithubEndpoints::new(value)
                .map(|_| ())
                .map_err(|error| error.to_string()),
        ),
        // An agent's key, or the update feed's answer, travels to these addresses.
        SettingKey::UpdateFeed | SettingKey::AnthropicApiBase | SettingKey::OpenaiApiBase => {
            refused(check_secret_address(value).map_err(|refusal| refusal.to_string()))
        }
        SettingKey::E2bApiBase | SettingKey::E2bEnvdUrl => {
            let example = value
                .replace("{sandbox_id}", "sandbox")
                .replace("{port}", "49983")
                .replace("{domain}", "e2b.app");
            refused(check_secret_address(&example).map_err(|refusal| refusal.to_string()))
        }
        SettingKey::LogLevel => refused(
            value
                .parse::<handoff::log_file::LogLevel>()
                .map(|_| ())
                .map_err(|error| error.to_string()),
        ),
        SettingKey::SyncIntervalSeconds => {
            refused(super::timed_sync::parse_sync_interval(value).map(|_| ()))
        }
        SettingKey::KeptCopyDays => {
            refused(handoff::pipeline_settings::kept_copy_retention_from_days(value).map(|_| ()))
        }
        SettingKey::BudgetRunUsd | SettingKey::BudgetDayUsd => {
            refused(handoff::store::spend::parse_dollars(value).map(|_| ()))
        }
        SettingKey::BudgetRunTokens
            if !value.eq_ignore_ascii_case("none") && value.parse::<u64>().is_err() =>
        {
            Some(format!("{value:?} is not a number of tokens (or `none`)"))
        }
        SettingKey::QueueSlots => {
            refused(handoff::store::parse_slot_count(value, false).map(|_| ()))
        }
        SettingKey::QueueSlotsDocker | SettingKey::QueueSlotsE2b | SettingKey::QueueSlotsLocal => {
            refused(handoff::store::parse_slot_count(value, true).map(|_| ()))
        }
        SettingKey::ClaudePlan if ClaudePlan::parse(value).is_none() => {
            Some(format!("{value:?} is not a plan: pro, max-5x or max-20x"))
        }
        SettingKey::ClaudePlanPastCredit if PastTheCredit::parse(value).is_none() => {
            Some(format!("{value:?} is neither stop nor go-on"))
        }
        SettingKey::SpendPrices => refused(
            PriceTable::parse_lines(value)
                .map(|_| ())
                .map_err(|refusal| refusal.to_string()),
        ),
        _ => None,
    }
}

/// Keeps `value` as setting `key`, once it reads as one; an empty value is refused (a
/// setting goes back to its default by [`unset_setting`]).
pub async fn set_setting(core: &AppCore, key: SettingKey, value: &str) -> Result<(), CodedError> {
    let name = key.as_str();
    let value = value.trim();
    if value.is_empty() {
        return Err(invalid_input(format!(
            "{name} cannot be empty: unset it to go back to its default"
        )));
    }
    if !EDITABLE_SETTINGS.contains(&key) {
        return Err(editable_setting(name)
            .err()
            .unwrap_or_else(|| invalid_input(format!("{name} is kept by another command"))));
    }
    if let Some(refusal) = refusal_of(key, value) {
        return Err(invalid_input(format!("{name}: {refusal}")));
    }
    core.store.settings().set_setting(key, value).await?;
    Ok(())
}

/// Sends setting `key` back to its default.
pub async fn unset_setting(core: &AppCore, key: SettingKey) -> Result<(), CodedError> {
    core.store.settings().remove_setting(key).await?;
    Ok(())
}
