//! A test-only setting: a variable the owner gives a repository's tests (say
//! `DATABASE_URL` for the test database a service holds), which Handoff sets in the
//! agent's sandbox and the window marks as test-only. It is not a secret and is kept
//! as such; so what is a secret can never be given this way: a variable that carries
//! the GitHub token, a provider's key or a plan's token is refused by its name, a value
//! holding one of the secrets Handoff keeps is refused whatever its name, and so are the
//! variables Handoff sets itself in every sandbox (its proxy, its home, the agent's
//! base addresses), which would take the sandbox around its egress gate.

use thiserror::Error;

use crate::agent_presets::PRESETS;
use crate::claude_plan::PLAN_KEY;

/// The most test-only settings one repository has.
pub const MOST_TEST_SETTINGS: usize = 32;

/// The longest value of one, in bytes.
pub const LONGEST_TEST_SETTING: usize = 4096;

/// Variables that carry credentials whatever the agent: the GitHub token's and E2B's.
const CREDENTIAL_VARIABLES: [&str; 7] = [
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_PAT",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "E2B_API_KEY",
    "E2B_ACCESS_TOKEN",
];

/// Variables Handoff sets itself in every sandbox.
const HANDOFF_VARIABLES: [&str; 10] = [
    "HOME",
    "PATH",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// One test-only setting of a repository.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TestSetting {
    pub name: String,
    pub value: String,
}

/// Why a test-only setting is refused. Nothing is kept of a refused one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TestSettingError {
    #[error(
        "{name:?} is not a variable's name: letters, digits and '_', not starting with a digit"
    )]
    BadName { name: String },
    #[error(
        "{name} carries a credential (the GitHub token, a provider's key or a plan's token), \
         which never enters a sandbox"
    )]
    CredentialName { name: String },
    #[error("{name} is set by Handoff in every sandbox, so it cannot be a test-only setting")]
    SetByHandoff { name: String },
    #[error(
        "the value of {name} holds one of the secrets Handoff keeps (the GitHub token, a \
         provider's key, a plan's token or the E2B key), which never enters a sandbox"
    )]
    HoldsASecret { name: String },
    #[error("the value of {name} is {bytes} bytes: at most {LONGEST_TEST_SETTING}")]
    TooLong { name: String, bytes: usize },
    #[error("the value of {name} holds a NUL character, which no variable can hold")]
    NulInValue { name: String },
    #[error("a repository has at most {MOST_TEST_SETTINGS} test-only settings")]
    TooMany,
}

/// Whether `name` may be a test-only setting, whatever its value.
pub fn check_test_setting_name(name: &str) -> Result<(), TestSettingError> {
    let well_formed = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !well_formed {
        return Err(TestSettingError::BadName {
            name: name.to_owned(),
        });
    }
    let keys = PRESETS
        .iter()
        .filter_map(|preset| preset.api_key.as_ref())
        .chain(std::iter::once(&PLAN_KEY));
    let mut credentials = CREDENTIAL_VARIABLES.iter().copied();
    let carries_a_credential = credentials.any(|variable| variable.eq_ignore_ascii_case(name))
        || keys
            .clone()
            .any(|key| key.variable.eq_ignore_ascii_case(name));
    if carries_a_credential {
        return Err(TestSettingError::CredentialName {
            name: name.to_owned(),
        });
    }
    let set_by_handoff = HANDOFF_VARIABLES.contains(&name)
        || name.to_ascii_uppercase().starts_with("HANDOFF_")
        || keys
            .flat_map(|key| key.base_address_variables)
            .any(|variable| *variable == name)
        || PRESETS
            .iter()
            .flat_map(|preset| {
                preset
                    .environment
                    .iter()
                    .chain(preset.strangers_tree.environment)
            })
            .any(|(variable, _)| *variable == name);
    if set_by_handoff {
        return Err(TestSettingError::SetByHandoff {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// Whether `name` may be set to `value`; `secrets` are the values of the secrets Handoff
/// keeps, none of which a value may hold.
pub fn check_test_setting(
    name: &str,
    value: &str,
    secrets: &[&str],
) -> Result<(), TestSettingError> {
    check_test_setting_name(name)?;
    if value.len() > LONGEST_TEST_SETTING {
        return Err(TestSettingError::TooLong {
            name: name.to_owned(),
            bytes: value.len(),
        });
    }
    if value.contains('\0') {
        return Err(TestSettingError::NulInValue {
            name: name.to_owned(),
        });
    }
    if secrets
        .iter()
        .map(|secret| secret.trim())
        .any(|secret| !secret.is_empty() && value.contains(secret))
    {
        return Err(TestSettingError::HoldsASecret {
            name: name.to_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_database_address_is_a_test_only_setting() {
        assert_eq!(
            check_test_setting("DATABASE_URL", "postgres://test@db/app", &["ghp_secret"]),
            Ok(())
        );
        assert_eq!(check_test_setting("_PORT2", "5432", &[]), Ok(()));
    }

    #[test]
    fn the_github_token_and_the_providers_keys_can_never_be_test_only_settings() {
        for name in [
            "GITHUB_TOKEN",
            "gh_token",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "CODEX_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "E2B_API_KEY",
        ] {
            assert_eq!(
                check_test_setting(name, "x", &[]),
                Err(TestSettingError::CredentialName {
                    name: name.to_owned()
                }),
                "{name}"
            );
        }
        // Under any name, a value holding a kept secret.
        assert_eq!(
            check_test_setting(
                "API_URL",
                "https://x:ghp_secret@api.example/",
                &["ghp_secret"]
            ),
            Err(TestSettingError::HoldsASecret {
                name: "API_URL".to_owned()
            })
        );
    }

    #[test]
    fn what_handoff_sets_in_every_sandbox_is_refused() {
        for name in [
            "HTTPS_PROXY",
            "no_proxy",
            "HOME",
            "HANDOFF_WORKSPACE",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
        ] {
            assert!(
                matches!(
                    check_test_setting(name, "x", &[]),
                    Err(TestSettingError::SetByHandoff { .. })
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn a_malformed_name_or_value_is_refused_saying_why() {
        for name in ["", "1PORT", "DATABASE-URL", "A B", "Ü"] {
            assert!(
                matches!(
                    check_test_setting(name, "x", &[]),
                    Err(TestSettingError::BadName { .. })
                ),
                "{name:?}"
            );
        }
        assert!(matches!(
            check_test_setting("BIG", &"x".repeat(LONGEST_TEST_SETTING + 1), &[]),
            Err(TestSettingError::TooLong { .. })
        ));
        assert!(matches!(
            check_test_setting("NUL", "a\0b", &[]),
            Err(TestSettingError::NulInValue { .. })
        ));
    }
}
