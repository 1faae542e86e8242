//! Agent presets: the command that runs an agent inside the sandbox, and the API key it
//! needs. A command runs with `sh -c` in the working copy; `$HANDOFF_PROMPT_FILE` holds
//! the prompt and `$HANDOFF_OUTPUT_DIR` takes the stage's output.

use serde::Serialize;

/// A known agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentPreset {
    pub name: &'static str,
    pub command: &'static str,
    /// The variable the agent reads its API key from, and the keyring name of the key.
    pub api_key: Option<AgentKey>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentKey {
    pub variable: &'static str,
    pub provider: &'static str,
}

/// The presets Handoff knows. Each is a starting point: a repository can set its own
/// command with the `custom` preset.
pub const PRESETS: &[AgentPreset] = &[
    AgentPreset {
        name: "opencode",
        command: "opencode run \"$(cat \"$HANDOFF_PROMPT_FILE\")\"",
        api_key: Some(AgentKey {
            variable: "ANTHROPIC_API_KEY",
            provider: "anthropic",
        }),
    },
    AgentPreset {
        name: "claude",
        command: "claude -p --permission-mode acceptEdits < \"$HANDOFF_PROMPT_FILE\"",
        api_key: Some(AgentKey {
            variable: "ANTHROPIC_API_KEY",
            provider: "anthropic",
        }),
    },
    AgentPreset {
        name: "aider",
        command: "aider --yes-always --no-auto-commits --message-file \"$HANDOFF_PROMPT_FILE\"",
        api_key: Some(AgentKey {
            variable: "OPENAI_API_KEY",
            provider: "openai",
        }),
    },
    AgentPreset {
        name: "codex",
        command: "codex exec --full-auto \"$(cat \"$HANDOFF_PROMPT_FILE\")\"",
        api_key: Some(AgentKey {
            variable: "OPENAI_API_KEY",
            provider: "openai",
        }),
    },
];

/// Why no agent command can be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentChoiceError {
    #[error("unknown agent preset {0:?}: use opencode, claude, aider, codex or custom")]
    UnknownPreset(String),
    #[error("the custom agent preset needs a command: `handoff repo set OWNER/NAME --agent-command '…'`")]
    CustomWithoutCommand,
}

/// The command and key of `preset` (with `custom_command` for `custom`).
pub fn agent_command(
    preset: &str,
    custom_command: Option<&str>,
) -> Result<(String, Option<AgentKey>), AgentChoiceError> {
    if preset == "custom" {
        let command = custom_command
            .filter(|command| !command.trim().is_empty())
            .ok_or(AgentChoiceError::CustomWithoutCommand)?;
        return Ok((command.to_owned(), None));
    }
    let known = PRESETS
        .iter()
        .find(|known| known.name == preset)
        .ok_or_else(|| AgentChoiceError::UnknownPreset(preset.to_owned()))?;
    Ok((known.command.to_owned(), known.api_key.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_custom_commands() {
        let (command, key) = agent_command("claude", None).unwrap();
        assert!(command.starts_with("claude -p"));
        assert_eq!(key.unwrap().variable, "ANTHROPIC_API_KEY");
        assert_eq!(
            agent_command("custom", Some("sh agent.sh")).unwrap(),
            ("sh agent.sh".to_owned(), None)
        );
        assert_eq!(
            agent_command("custom", None),
            Err(AgentChoiceError::CustomWithoutCommand)
        );
        assert!(agent_command("gpt-engineer", None).is_err());
    }
}
