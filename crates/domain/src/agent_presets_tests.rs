//! The presets' commands, keys and switches for strangers' trees.

use super::*;

#[test]
fn presets_and_custom_commands() {
    let claude = AgentChoice::of("claude", None).unwrap();
    assert!(claude.command(Stage::Review).contains("acceptEdits"));
    assert!(claude.command(Stage::Test).contains("bypassPermissions"));
    assert_eq!(claude.api_key().unwrap().variable, "ANTHROPIC_API_KEY");
    assert_eq!(claude.image_preset(), "claude");
    assert_eq!(
        claude.plan_key().map(|key| key.variable),
        Some("CLAUDE_CODE_OAUTH_TOKEN")
    );
    for other in ["opencode", "aider", "codex"] {
        let agent = AgentChoice::of(other, None).unwrap();
        assert_eq!(
            agent.plan_key(),
            None,
            "{other} may not carry a plan's token"
        );
    }
    let custom = AgentChoice::of("custom", Some("sh agent.sh")).unwrap();
    assert_eq!(custom.command(Stage::Code), "sh agent.sh");
    assert_eq!(custom.api_key(), None);
    assert_eq!(custom.plan_key(), None);
    assert_eq!(custom.image_preset(), "base");
    assert_eq!(
        AgentChoice::of("custom", None),
        Err(AgentChoiceError::CustomWithoutCommand)
    );
    assert!(AgentChoice::of("gpt-engineer", None).is_err());
}

#[test]
fn no_preset_puts_the_prompt_on_its_command_line() {
    for preset in PRESETS {
        for command in [preset.reading_command, preset.acting_command] {
            assert!(
                command.contains("< \"$HANDOFF_PROMPT_FILE\"")
                    || command.contains("--message-file \"$HANDOFF_PROMPT_FILE\""),
                "{}: {command}",
                preset.name
            );
            assert!(!command.contains("$(cat"), "{}: {command}", preset.name);
        }
    }
}

#[test]
fn in_someone_elses_tree_every_preset_starts_with_the_trees_configuration_off() {
    for preset in PRESETS {
        let choice = AgentChoice::Preset(preset);
        for stage in [Stage::Review, Stage::Code] {
            let own = choice.command_in(stage, TreeOwner::Owner);
            assert_eq!(own, choice.command(stage), "{}", preset.name);
            assert!(own.starts_with(preset.program), "{}: {own}", preset.name);
            let strangers = choice.command_in(stage, TreeOwner::Stranger);
            let switched = strangers != own
                || choice.environment_in(TreeOwner::Stranger).len()
                    > choice.environment_in(TreeOwner::Owner).len();
            assert!(
                switched,
                "{} has no switch for someone else's tree",
                preset.name
            );
            assert!(
                strangers.contains("\"$HANDOFF_PROMPT_FILE\""),
                "{}: {strangers}",
                preset.name
            );
        }
    }
    let claude = AgentChoice::of("claude", None).unwrap();
    assert!(claude
        .command_in(Stage::Review, TreeOwner::Stranger)
        .starts_with("claude --setting-sources user --strict-mcp-config -p "));
    let aider = AgentChoice::of("aider", None).unwrap();
    let wrapped = aider.command_in(Stage::Code, TreeOwner::Stranger);
    assert!(wrapped.ends_with("exit $handoff_agent_status"), "{wrapped}");
    let custom = AgentChoice::of("custom", Some("sh agent.sh")).unwrap();
    assert_eq!(
        custom.command_in(Stage::Code, TreeOwner::Stranger),
        "sh agent.sh"
    );
}

#[test]
fn the_image_recipe_pins_the_same_versions() {
    let recipe = include_str!("../../../agent-images/install-agent.sh");
    for preset in PRESETS {
        let pinned = preset.package.split(' ').next().unwrap();
        assert!(
            recipe.contains(pinned),
            "{pinned} is not what the recipe installs"
        );
    }
}
