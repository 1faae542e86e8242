//! Every flag a preset passes to a real agent is one the pinned program lists in its
//! `--help`, and so is every named value (`--permission-mode acceptEdits`): a version
//! bump is one line of `scripts/install-agents.sh`, and a renamed flag fails here, not
//! in an owner's run.

use handoff_test_support as support;

use handoff::domain::agent_presets::{preset_named, AgentPreset};
use support::real_agents::RealAgent;

/// The words of a preset's command before its input redirection. Of a command
/// substitution (`$(test -f F && echo --flag=F)`), only the flags it may add count.
fn command_words(command: &str) -> Vec<String> {
    let mut command = command.split('<').next().unwrap_or_default().to_owned();
    while let Some(start) = command.find("$(") {
        let end = command[start..]
            .find(')')
            .map_or(command.len(), |at| start + at + 1);
        let flags: Vec<&str> = command[start + 2..end - 1]
            .split_whitespace()
            .filter(|word| word.starts_with("--"))
            .collect();
        let flags = flags.join(" ");
        command.replace_range(start..end, &flags);
    }
    command.split_whitespace().map(str::to_owned).collect()
}

/// Whether `help` lists `word` as a whole word (not as the start of a longer flag).
fn lists(help: &str, word: &str) -> bool {
    help.match_indices(word).any(|(at, _)| {
        let before = help[..at].chars().last();
        let after = help[at + word.len()..].chars().next();
        let bounded = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '-'));
        bounded(before) && bounded(after)
    })
}

/// Each command as it runs in the owner's tree, and with the flags it gets in someone
/// else's (the lines a preset runs before and after the agent set files and variables,
/// no flags, so they are left out).
fn commands_of(preset: &AgentPreset) -> Vec<String> {
    let mut commands = Vec::new();
    for command in [preset.reading_command, preset.acting_command] {
        commands.push(command.to_owned());
        let rest = command
            .strip_prefix(preset.program)
            .unwrap_or_else(|| panic!("{command} does not start with {}", preset.program));
        commands.push(format!(
            "{} {}{rest}",
            preset.program, preset.strangers_tree.flags
        ));
    }
    commands
}

fn check_preset_against_help(preset: &AgentPreset, agent: RealAgent) {
    for command in commands_of(preset) {
        let command = command.as_str();
        let words = command_words(command);
        assert_eq!(words[0], agent.name(), "{command}");
        // A subcommand (`codex exec`) has a help of its own.
        let subcommand: Vec<&str> = words
            .get(1)
            .filter(|word| !word.starts_with('-'))
            .map(|word| vec![word.as_str()])
            .unwrap_or_default();
        let help = agent.help(&subcommand);
        let mut checked = 0;
        for (index, word) in words.iter().enumerate().skip(1 + subcommand.len()) {
            if word.starts_with('-') && word.len() > 1 {
                let flag = word.split('=').next().unwrap_or(word);
                assert!(
                    lists(&help, flag),
                    "{} {}: {flag} is not in its --help",
                    agent.name(),
                    agent.version()
                );
                checked += 1;
            } else if index > 0
                && words[index - 1].starts_with("--")
                && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                assert!(
                    lists(&help, word),
                    "{} {}: the value {word} of {} is not in its --help",
                    agent.name(),
                    agent.version(),
                    words[index - 1]
                );
                checked += 1;
            }
        }
        assert!(checked >= 3, "{command}: too few flags checked");
    }
}

#[test]
fn claudes_preset_uses_only_flags_claude_code_lists() {
    check_preset_against_help(preset_named("claude").unwrap(), RealAgent::Claude);
}

#[test]
fn codexs_preset_uses_only_flags_codex_lists() {
    check_preset_against_help(preset_named("codex").unwrap(), RealAgent::Codex);
}

#[test]
fn aiders_preset_uses_only_flags_aider_lists() {
    check_preset_against_help(preset_named("aider").unwrap(), RealAgent::Aider);
}

#[test]
fn the_switches_for_someone_elses_tree_are_checked_too() {
    let claude = preset_named("claude").unwrap();
    let commands = commands_of(claude);
    assert!(commands
        .iter()
        .any(|command| command.contains("--setting-sources user --strict-mcp-config")));
    let codex = preset_named("codex").unwrap();
    assert!(commands_of(codex)
        .iter()
        .any(|command| command.contains("--ignore-rules --disable hooks")));
}

#[test]
fn a_renamed_flag_would_be_caught() {
    let help =
        "  -p, --print  Print\n  --add-dir <DIR>\n  --permission-mode <MODE> (acceptEdits, plan)\n";
    assert!(lists(help, "--add-dir"));
    assert!(lists(help, "-p"));
    assert!(lists(help, "acceptEdits"));
    assert!(!lists(help, "--add"), "a flag's prefix is not the flag");
    assert!(!lists(help, "--output-format"));
}
