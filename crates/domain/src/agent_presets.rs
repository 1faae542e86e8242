//! Agent presets: the command that runs an agent inside the sandbox, and the API key it
//! needs. A command runs with `sh -c` in the working copy; `$HANDOFF_PROMPT_FILE` holds
//! the prompt and `$HANDOFF_OUTPUT_DIR` takes the stage's output.

use serde::Serialize;

use crate::Stage;

/// A known agent: how it runs with no one at the keyboard, the key it needs, and the
/// image recipe it is installed by (`agent-images/`, at the version pinned there).
///
/// Every command takes the prompt on standard input from `$HANDOFF_PROMPT_FILE`, never
/// as an argument: arguments have a size limit and anyone on the machine sees them
/// (`ps`). Every command may write to `$HANDOFF_OUTPUT_DIR`, which is outside the
/// working copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentPreset {
    pub name: &'static str,
    /// The command for the stages that read and write their output (review, plan).
    pub reading_command: &'static str,
    /// The command for the stages that change code and run commands (code, test, fix).
    pub acting_command: &'static str,
    /// The variable the agent reads its API key from, and the keyring name of the key.
    pub api_key: Option<AgentKey>,
    /// The package and version `agent-images/install-agent.sh` installs.
    pub package: &'static str,
    /// Where the recipe fetches the package from: an image build needs it reachable.
    pub package_registry: &'static str,
    /// The image the recipe starts from when the owner names none.
    pub image_base: &'static str,
    /// What the agent cannot do that a stage may need, if anything.
    pub limitation: Option<&'static str>,
    /// Variables the job script sets for the agent: its own switches for running with
    /// no one at the keyboard (no telemetry, no update checks, no refusal as root).
    pub environment: &'static [(&'static str, &'static str)],
    /// What the agent leaves in the working copy for itself (caches, history): never
    /// committed, as patterns of a gitignore file.
    pub scratch_files: &'static [&'static str],
    /// The program (and subcommand) both commands start with.
    pub program: &'static str,
    /// How the agent starts in a tree someone other than the owner wrote.
    pub strangers_tree: StrangersTree,
}

/// How an agent starts in a tree someone other than the owner wrote (a fork's PR,
/// another author's, commits someone else pushed, an item a visitor steers): the
/// repository's own agent configuration in the tree — hooks, MCP servers, settings,
/// rules, instructions meant for the agent — is switched off, so that the tree cannot
/// make the agent run its commands before the first model call or rewrite the agent's
/// rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StrangersTree {
    /// Flags put right after the program, each one its `--help` lists.
    pub flags: &'static str,
    /// Variables set for the agent besides its preset's own.
    pub environment: &'static [(&'static str, &'static str)],
    /// Shell lines run in the working copy before the agent, and after it whatever it
    /// exited with (for agents with no switch: their files moved aside, then back).
    pub before: &'static str,
    pub after: &'static str,
}

/// Whose tree an agent works in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeOwner {
    /// The owner's (or the agent's, for the owner): its configuration is the owner's.
    Owner,
    /// Someone else's, in part or whole.
    Stranger,
}

pub use crate::agent_key::{
    AgentKey, KeyHeader, ANTHROPIC_KEY_HEADER, ANTHROPIC_MODEL_ENDPOINTS, OPENAI_KEY_HEADER,
    OPENAI_MODEL_ENDPOINTS,
};

/// npm's registry, where opencode comes from.
pub const NPM_REGISTRY: &str = "https://registry.npmjs.org/";
/// PyPI's simple index, where Claude Code, Codex and aider come from.
pub const PYPI: &str = "https://pypi.org/simple/";

/// The presets Handoff knows. Each is a starting point: a repository can set its own
/// command with the `custom` preset.
pub const PRESETS: &[AgentPreset] = &[
    // opencode's `run` is its non-interactive mode (opencode docs, cli.mdx): with no
    // message argument it reads the prompt from standard input to its end (run.ts);
    // `--auto` approves its tool calls, which `run` otherwise rejects, writing outside
    // the working directory included.
    AgentPreset {
        name: "opencode",
        reading_command: "opencode run --auto < \"$HANDOFF_PROMPT_FILE\"",
        acting_command: "opencode run --auto < \"$HANDOFF_PROMPT_FILE\"",
        api_key: Some(AgentKey {
            variable: "ANTHROPIC_API_KEY",
            provider: "anthropic",
            api_host: "api.anthropic.com",
            header: ANTHROPIC_KEY_HEADER,
            // opencode's Anthropic provider (the AI SDK's) reads its base address,
            // which includes the API version, from ANTHROPIC_BASE_URL.
            base_address_variables: &["ANTHROPIC_BASE_URL"],
            base_path: "/v1",
            model_endpoints: ANTHROPIC_MODEL_ENDPOINTS,
        }),
        package: "opencode-ai@1.18.5 (npm)",
        package_registry: NPM_REGISTRY,
        image_base: "node:22-bookworm-slim",
        limitation: None,
        environment: &[],
        scratch_files: &[],
        program: "opencode run",
        // opencode reads the project's opencode.json and .opencode/ (agents, commands,
        // plugins, which are code it runs), and skills and instructions of other agents'
        // (.claude/, .agents/, AGENTS.md) unless these switches say not to (opencode's
        // flag.ts). No opencode can be installed on the test machines (no npm), so these
        // are from its source, not from a run.
        strangers_tree: StrangersTree {
            flags: "",
            environment: &[
                ("OPENCODE_DISABLE_PROJECT_CONFIG", "1"),
                ("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1"),
                ("OPENCODE_DISABLE_CLAUDE_CODE", "1"),
            ],
            before: "",
            after: "",
        },
    },
    // Claude Code's print mode `-p` (docs.anthropic.com, "CLI usage" and "headless"):
    // with no prompt argument the prompt is standard input. `acceptEdits` lets it edit
    // files; `bypassPermissions` also lets it run commands, which the code, test and fix
    // stages need (code.claude.com, "permission modes"). `--add-dir` opens the input
    // and output folders beside the working copy. `--output-format stream-json` (which needs
    // `--verbose` in print mode) prints each message as it happens, so the run's log
    // follows the agent, and ends with a `result` line holding what the run cost.
    AgentPreset {
        name: "claude",
        reading_command: "claude -p --permission-mode acceptEdits --add-dir \"$HANDOFF_INPUT_DIR\" --add-dir \"$HANDOFF_OUTPUT_DIR\" --output-format stream-json --verbose < \"$HANDOFF_PROMPT_FILE\"",
        acting_command: "claude -p --permission-mode bypassPermissions --add-dir \"$HANDOFF_INPUT_DIR\" --add-dir \"$HANDOFF_OUTPUT_DIR\" --output-format stream-json --verbose < \"$HANDOFF_PROMPT_FILE\"",
        api_key: Some(AgentKey {
            variable: "ANTHROPIC_API_KEY",
            provider: "anthropic",
            api_host: "api.anthropic.com",
            header: ANTHROPIC_KEY_HEADER,
            // Claude Code's ANTHROPIC_BASE_URL is the address before `/v1/messages`.
            base_address_variables: &["ANTHROPIC_BASE_URL"],
            base_path: "",
            model_endpoints: ANTHROPIC_MODEL_ENDPOINTS,
        }),
        package: "claude-agent-sdk==0.2.189 (PyPI, Claude Code 2.1.332)",
        package_registry: PYPI,
        image_base: "python:3.12-slim-bookworm",
        limitation: None,
        // Claude Code refuses `bypassPermissions` as root ("cannot be used with
        // root/sudo privileges") unless told it is sandboxed; a job has no one at the
        // keyboard, and on the local backend the owner has accepted running unisolated.
        // Its telemetry, error reports and update checks go to hosts off the
        // allow-list, so they are off.
        environment: &[
            ("IS_SANDBOX", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
        ],
        scratch_files: &[],
        program: "claude",
        // Only the user's settings (the sandbox's home, Handoff's), none of the tree's
        // `.claude/settings.json` or `settings.local.json`: their hooks, permissions,
        // `env` (which could send the key's placeholder and the prompt elsewhere) and
        // `apiKeyHelper`; no MCP server but those named on the command line (none), so
        // not the tree's `.mcp.json`. Seen with Claude Code 2.1.332: `--safe-mode` and
        // `--bare` still let the tree's `env` through, and `--restricted` refuses
        // `bypassPermissions`.
        strangers_tree: StrangersTree {
            flags: "--setting-sources user --strict-mcp-config",
            environment: &[],
            before: "",
            after: "",
        },
    },
    // aider's scripting mode (aider.chat, "Scripting aider"): `--message-file` sends one
    // message from a file and exits; `--yes-always` confirms edits. It runs no shell
    // command the model suggests (aider's issues #3903, #2014) and edits only files of
    // the repository. Its chat history goes to the output folder, not into the working
    // copy (where the run would commit it), and it leaves .gitignore alone (it adds
    // `.aider*` there otherwise).
    AgentPreset {
        name: "aider",
        reading_command: AIDER_COMMAND,
        acting_command: AIDER_COMMAND,
        api_key: Some(AgentKey {
            variable: "OPENAI_API_KEY",
            provider: "openai",
            api_host: "api.openai.com",
            header: OPENAI_KEY_HEADER,
            // aider documents OPENAI_API_BASE; the OpenAI client it uses reads
            // OPENAI_BASE_URL. Both include the API version.
            base_address_variables: &["OPENAI_API_BASE", "OPENAI_BASE_URL"],
            base_path: "/v1",
            model_endpoints: OPENAI_MODEL_ENDPOINTS,
        }),
        package: "aider-chat==0.86.1 (PyPI)",
        package_registry: PYPI,
        // Its packages are pinned by hash for Debian 12's Python 3.11.
        image_base: "debian:bookworm-slim",
        // litellm, which aider calls models through, fetches its model price list from
        // raw.githubusercontent.com at every start unless told to use its own copy.
        environment: &[("LITELLM_LOCAL_MODEL_COST_MAP", "True")],
        // aider keeps its repository map's cache in `.aider.tags.cache.v4/`.
        scratch_files: &[".aider*"],
        program: "aider",
        // aider has no switch that keeps it from the tree's files: it reads
        // `.aider.conf.yml` (whose `load:` runs commands at start), `.env` (over the
        // job's own variables), `.aider.model.settings.yml`, `.aider.model.metadata.json`
        // and `.aiderignore` from the repository's root even when `--config` names
        // another file (seen with aider 0.86.1). So they are moved out of the tree while
        // it runs, and back afterwards unless the agent wrote one of its own.
        strangers_tree: StrangersTree {
            flags: "",
            environment: &[],
            before: AIDER_FILES_ASIDE,
            after: AIDER_FILES_BACK,
        },
        limitation: Some(
            "aider runs no commands and writes only inside the repository: it suits code \
             runs, not the QA stages",
        ),
    },
    // Codex's `exec` (openai/codex, docs/exec.md): with `-` as the prompt it reads
    // standard input; it asks for no approvals, and since the container is the sandbox
    // its own sandbox is turned off so that the tests can run and the output folder can
    // be written. In `exec`, the key is CODEX_API_KEY.
    //
    // Codex ignores OPENAI_BASE_URL (it went straight to api.openai.com, past the key
    // forwarder) and first tries a WebSocket for about 5 s before falling back to HTTPS.
    // So the command names a model provider of its own (`-c model_providers.…`, the
    // config's documented table): the base address from OPENAI_BASE_URL (the forwarder,
    // or the provider itself where none stands), the key from CODEX_API_KEY, the
    // Responses API, no WebSocket. `--json` prints each event as it happens and ends
    // each turn with its token counts.
    AgentPreset {
        name: "codex",
        reading_command: CODEX_COMMAND,
        acting_command: CODEX_COMMAND,
        api_key: Some(AgentKey {
            variable: "CODEX_API_KEY",
            provider: "openai",
            api_host: "api.openai.com",
            header: OPENAI_KEY_HEADER,
            // Codex reads the OpenAI base address, API version included, from
            // OPENAI_BASE_URL.
            base_address_variables: &["OPENAI_BASE_URL"],
            base_path: "/v1",
            model_endpoints: OPENAI_MODEL_ENDPOINTS,
        }),
        package: "openai-codex-cli-bin==0.163.0 (PyPI, Codex CLI 0.163.0)",
        package_registry: PYPI,
        image_base: "python:3.12-slim-bookworm",
        limitation: None,
        // Codex keeps its sessions under $HOME/.codex: a sandbox's home is writable.
        // Its update check, analytics and plugins (whose catalogues it fetches from
        // chatgpt.com and github.com at every start) are turned off on the command line.
        environment: &[],
        scratch_files: &[],
        program: "codex exec",
        // Codex loads the tree's `.codex/config.toml` (MCP servers, instructions),
        // `.codex/rules`, AGENTS.md and AGENTS.override.md for any project not marked
        // untrusted. So the job gives it a home of its own whose config marks the working
        // copy untrusted, and turns off rules, hooks, project documents and the skills'
        // instructions (seen with Codex 0.163.0: a `-c projects…` override does not
        // count, and `.codex/skills` are listed even in an untrusted project).
        strangers_tree: StrangersTree {
            flags: "--ignore-rules --disable hooks -c project_doc_max_bytes=0 \
-c skills.include_instructions=false",
            environment: &[],
            before: CODEX_UNTRUSTED_HOME,
            after: "",
        },
    },
];

/// aider's command: see the preset. In Handoff's image, aider reads its models' facts
/// from the copy of litellm's list that the recipe keeps; without it, it fetches that list
/// from raw.githubusercontent.com at every start.
const AIDER_COMMAND: &str = "aider --yes-always --no-pretty --no-stream --no-check-update \
--no-analytics --no-auto-commits --no-gitignore --input-history-file /dev/null \
$(test -f /opt/handoff/aider-model-metadata.json \
&& echo --model-metadata-file=/opt/handoff/aider-model-metadata.json) \
--chat-history-file \"$HANDOFF_OUTPUT_DIR/aider-chat-history.md\" \
--message-file \"$HANDOFF_PROMPT_FILE\"";

/// The files aider reads from the repository's root whatever it is told: moved aside
/// while it runs in someone else's tree.
const AIDER_FILES_ASIDE: &str = "handoff_aside=\"$HANDOFF_WORKSPACE/handoff/aside\"
mkdir -p \"$handoff_aside\"
for f in .aider.conf.yml .env .aider.model.settings.yml .aider.model.metadata.json .aiderignore; do
  if [ -e \"$f\" ] || [ -L \"$f\" ]; then mv \"$f\" \"$handoff_aside/$f\"; fi
done";

/// And back, unless the agent wrote one of its own.
const AIDER_FILES_BACK: &str = "for f in .aider.conf.yml .env .aider.model.settings.yml .aider.model.metadata.json .aiderignore; do
  if { [ -e \"$handoff_aside/$f\" ] || [ -L \"$handoff_aside/$f\" ]; } && [ ! -e \"$f\" ] && [ ! -L \"$f\" ]; then mv \"$handoff_aside/$f\" \"$f\"; fi
done";

/// A Codex home of the job's own, whose config marks the working copy untrusted.
const CODEX_UNTRUSTED_HOME: &str = "export CODEX_HOME=\"$HANDOFF_WORKSPACE/handoff/codex-home\"
mkdir -p \"$CODEX_HOME\"
printf '[projects.\"%s\"]\ntrust_level = \"untrusted\"\n' \"$(pwd -P | sed 's/[\\\\\"]/\\\\&/g')\" > \"$CODEX_HOME/config.toml\"";

/// Codex's command: see the preset.
const CODEX_COMMAND: &str = "codex exec --json \
-c model_provider=handoff -c check_for_update_on_startup=false -c analytics.enabled=false \
-c features.plugins=false \
-c \"model_providers.handoff={name=\\\"OpenAI\\\",base_url=\\\"${OPENAI_BASE_URL:-https://api.openai.com/v1}\\\",env_key=\\\"CODEX_API_KEY\\\",wire_api=\\\"responses\\\",supports_websockets=false}\" \
--skip-git-repo-check --dangerously-bypass-approvals-and-sandbox - < \"$HANDOFF_PROMPT_FILE\"";

/// The image recipe of a repository using a custom command: git and the user only.
pub const CUSTOM_IMAGE_PRESET: &str = "base";
/// The image the `base` recipe starts from.
pub const BASE_IMAGE_BASE: &str = "debian:bookworm-slim";

/// Why no agent command can be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentChoiceError {
    #[error("unknown agent preset {0:?}: use opencode, claude, aider, codex or custom")]
    UnknownPreset(String),
    #[error("the custom agent preset has no command")]
    CustomWithoutCommand,
}

/// The agent a repository runs: a preset, or its own command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentChoice {
    Preset(&'static AgentPreset),
    Custom(String),
}

impl AgentChoice {
    /// The agent of `preset` (with `custom_command` for `custom`).
    pub fn of(preset: &str, custom_command: Option<&str>) -> Result<Self, AgentChoiceError> {
        if preset == "custom" {
            let command = custom_command
                .filter(|command| !command.trim().is_empty())
                .ok_or(AgentChoiceError::CustomWithoutCommand)?;
            return Ok(AgentChoice::Custom(command.to_owned()));
        }
        preset_named(preset)
            .map(AgentChoice::Preset)
            .ok_or_else(|| AgentChoiceError::UnknownPreset(preset.to_owned()))
    }

    /// The command the job script runs for `stage` in the owner's tree.
    pub fn command(&self, stage: Stage) -> &str {
        match self {
            AgentChoice::Custom(command) => command,
            AgentChoice::Preset(preset) => match stage {
                Stage::Review | Stage::Plan | Stage::Lessons => preset.reading_command,
                Stage::Code | Stage::Test | Stage::Fix | Stage::FullAuto => preset.acting_command,
            },
        }
    }

    /// The command for `stage` in a tree of `tree`'s: in someone else's, a preset's
    /// agent starts with the tree's own agent configuration switched off; a custom
    /// command is run as it is (Handoff cannot know its switches).
    pub fn command_in(&self, stage: Stage, tree: TreeOwner) -> String {
        let command = self.command(stage);
        match (self, tree) {
            (AgentChoice::Preset(preset), TreeOwner::Stranger) => {
                let rest = command.strip_prefix(preset.program).unwrap_or(command);
                let switches = &preset.strangers_tree;
                let started = if switches.flags.is_empty() {
                    command.to_owned()
                } else {
                    format!("{} {}{rest}", preset.program, switches.flags)
                };
                match (switches.before, switches.after) {
                    ("", "") => started,
                    (before, "") => format!("{before}\n{started}"),
                    (before, after) => format!(
                        "{before}\n{started}\nhandoff_agent_status=$?\n{after}\nexit $handoff_agent_status"
                    ),
                }
            }
            _ => command.to_owned(),
        }
    }

    /// The variables the agent runs with in a tree of `tree`'s.
    pub fn environment_in(&self, tree: TreeOwner) -> Vec<(&'static str, &'static str)> {
        let mut variables = self.environment().to_vec();
        if let (AgentChoice::Preset(preset), TreeOwner::Stranger) = (self, tree) {
            variables.extend_from_slice(preset.strangers_tree.environment);
        }
        variables
    }

    /// What the agent leaves in the working copy for itself (none for a custom command).
    pub fn scratch_files(&self) -> &'static [&'static str] {
        match self {
            AgentChoice::Preset(preset) => preset.scratch_files,
            AgentChoice::Custom(_) => &[],
        }
    }

    /// The variables the agent runs with (none for a custom command).
    pub fn environment(&self) -> &'static [(&'static str, &'static str)] {
        match self {
            AgentChoice::Preset(preset) => preset.environment,
            AgentChoice::Custom(_) => &[],
        }
    }

    /// The key the agent needs, if any.
    pub fn api_key(&self) -> Option<&AgentKey> {
        match self {
            AgentChoice::Preset(preset) => preset.api_key.as_ref(),
            AgentChoice::Custom(_) => None,
        }
    }

    /// How the agent carries a Claude plan's token instead of its API key: only Claude
    /// Code's own preset may (the plan's terms), never another preset or a custom command.
    pub fn plan_key(&self) -> Option<&'static AgentKey> {
        match self {
            AgentChoice::Preset(preset) if preset.name == super::claude_plan::PLAN_PRESET => {
                Some(&super::claude_plan::PLAN_KEY)
            }
            _ => None,
        }
    }

    /// The image recipe this agent is installed by.
    pub fn image_preset(&self) -> &'static str {
        match self {
            AgentChoice::Preset(preset) => preset.name,
            AgentChoice::Custom(_) => CUSTOM_IMAGE_PRESET,
        }
    }
}

/// The preset named `name`.
pub fn preset_named(name: &str) -> Option<&'static AgentPreset> {
    PRESETS.iter().find(|known| known.name == name)
}

/// The API host of `provider` (`api.anthropic.com` for `anthropic`), from the presets.
pub fn default_api_host(provider: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .filter_map(|preset| preset.api_key.as_ref())
        .find(|key| key.provider == provider)
        .map(|key| key.api_host)
}

/// The image Handoff builds for `image_preset` (a preset's name, or `base`).
pub fn default_image(image_preset: &str) -> String {
    format!("handoff-agent:{image_preset}")
}

/// The image each recipe starts from by default (`base` for custom commands).
pub fn default_image_base(image_preset: &str) -> &'static str {
    preset_named(image_preset)
        .map(|preset| preset.image_base)
        .unwrap_or(BASE_IMAGE_BASE)
}

#[cfg(test)]
#[path = "agent_presets_tests.rs"]
mod tests;
