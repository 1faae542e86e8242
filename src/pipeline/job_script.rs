//! The job script every backend runs (`handoff/job.sh`): the agent, then Handoff's own
//! finish inside the sandbox — commit what the agent left changed, with hooks off, and
//! bundle the new commits into `out/changes.bundle`. The host reads only that bundle
//! and `out/`; it never runs git in the agent's working copy (its hooks, filters and
//! config are the agent's to plant), and nothing in the sandbox can push.

use super::kept_copy::CopySteps;

/// How a job script ends when the item's kept working copy cannot be brought to the
/// start (before the agent runs); it also leaves [`KEPT_COPY_UNUSABLE_MARK`] in `out/`.
pub const KEPT_COPY_UNUSABLE_EXIT: i64 = 96;
/// The file of `out/` that says the kept copy could not be used.
pub const KEPT_COPY_UNUSABLE_MARK: &str = "kept-copy-unusable";
/// The file of `out/` that holds the end of what the agent printed (its last
/// [`AGENT_OUTPUT_TAIL_BYTES`]), where agents report what they spent.
pub const AGENT_OUTPUT_TAIL: &str = "agent-output-tail.txt";
/// How much of the end of the agent's output is kept in [`AGENT_OUTPUT_TAIL`].
pub const AGENT_OUTPUT_TAIL_BYTES: u32 = 64 * 1024;

/// Lines of the job script, run in the working copy before the agent: what an
/// environment's setup commands made in its copy of the base branch (listed at build
/// time in `/opt/handoff/prepared.products`: `node_modules`, `.venv`, …) is copied in
/// when the working copy lacks it and git ignores it, so that the agent's tests find
/// the project's dependencies and nothing of it is ever committed. Outside an
/// environment image there is no list, and nothing happens.
const CARRY_SETUP_PRODUCTS: &str = r#"if [ -f /opt/handoff/prepared.products ]; then
  while IFS= read -r made; do
    [ -n "$made" ] && [ ! -e "$made" ] && [ ! -L "$made" ] || continue
    git -c safe.directory='*' check-ignore -q -- "$made" 2>/dev/null || continue
    cp -a "/opt/handoff/prepared/$made" "$made" \
      && echo "handoff: $made comes from the environment's setup" >&2
  done < /opt/handoff/prepared.products
fi
"#;

/// What a job script needs.
#[derive(Debug, Clone)]
pub struct JobScript<'a> {
    pub run_id: crate::domain::RunId,
    /// How the working copy at `repo/` is made or brought to `start_sha`.
    pub copy_steps: &'a CopySteps,
    /// The branch the working copy has checked out.
    pub branch: &'a str,
    pub stage: crate::domain::Stage,
    pub agent_command: &'a str,
    /// Variables set for the agent alone (its preset's switches).
    pub agent_environment: &'a [(&'a str, &'a str)],
    /// What the agent leaves in the working copy for itself, never committed (gitignore
    /// patterns).
    pub agent_scratch_files: &'a [&'a str],
    /// What the agent's commits are bundled from.
    pub start_sha: &'a str,
    /// The commit a kept copy is brought to: `start_sha`, or the commits an unfinished
    /// run left on top of it.
    pub checkout_sha: &'a str,
    pub git_name: &'a str,
    pub git_email: &'a str,
}

/// `text` as one single-quoted shell word.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

impl JobScript<'_> {
    pub fn render(&self) -> String {
        format!(
            r#"#!/bin/sh
# Written by Handoff for run {run}. Runs the agent, then commits what it left changed
# and bundles the new commits for Handoff to fetch. Nothing here pushes.
W="${{HANDOFF_WORKSPACE:?}}"
# A container made ahead hands out/ back on its standard error, after a line that names
# this boundary and the exit status (see {out_variable} in the Docker backend).
out_boundary="${{{out_variable}:-}}"
unset {out_variable}
export HANDOFF_PROMPT_FILE="$W/handoff/prompt.md"
export HANDOFF_INPUT_DIR="$W/handoff/inputs"
export HANDOFF_OUTPUT_DIR="$W/out"
export HANDOFF_STAGE={stage}
export HANDOFF_RUN_ID={run}
mkdir -p "$HANDOFF_OUTPUT_DIR"
# The prompt names the input and output folders by their absolute paths: a model that
# may run no command cannot read a variable (and Claude Code refuses a command that
# names one it cannot check).
output_dir_in_sed=$(printf '%s' "$HANDOFF_OUTPUT_DIR" | sed 's/[\\|&]/\\&/g')
input_dir_in_sed=$(printf '%s' "$HANDOFF_INPUT_DIR" | sed 's/[\\|&]/\\&/g')
sed -i -e "s|\\\$HANDOFF_OUTPUT_DIR|$output_dir_in_sed|g" \
  -e "s|\\\$HANDOFF_INPUT_DIR|$input_dir_in_sed|g" "$HANDOFF_PROMPT_FILE" \
  || echo "handoff: the input and output folders could not be named in the prompt" >&2
{clone}cd "$W/repo" || {{ echo "handoff: no working copy at $W/repo" >&2; exit 97; }}
{carry}echo "handoff: the agent starts" >&2
# What the agent prints (both streams) goes to the log as it comes and to a file whose
# end is kept: agents report their tokens and cost at the end of their output.
{{ {environment}sh -c {agent} 2>&1; echo $? > "$W/handoff/agent-status"; }} \
  | tee "$W/handoff/agent-output.txt"
agent_status=$(cat "$W/handoff/agent-status" 2>/dev/null || echo 1)
tail -c {tail_bytes} "$W/handoff/agent-output.txt" > "$HANDOFF_OUTPUT_DIR/{tail}" 2>/dev/null
rm -f "$W/handoff/agent-output.txt" "$W/handoff/agent-status"
echo "handoff: the agent exited with $agent_status" >&2
cd "$W/repo" || exit 97
git_safe() {{
  GIT_CONFIG_NOSYSTEM=1 GIT_NO_REPLACE_OBJECTS=1 GIT_ATTR_NOSYSTEM=1 \
  git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false \
      -c safe.directory='*' -c user.name={name} -c user.email={email} "$@"
}}
# What the agent keeps for itself in the working copy (caches, history) stays out.
printf '%s\n' {scratch} > "$W/handoff/agent-scratch"
git_safe -c core.excludesFile="$W/handoff/agent-scratch" add -A >/dev/null 2>&1
# A commit when the tree differs from HEAD's, made from the index as it stands (git's
# plumbing: no second pass over every file, as `git commit` makes for its status).
tree=$(git_safe write-tree 2>/dev/null) || echo "handoff: the index cannot be written as a tree" >&2
if [ -n "$tree" ] && [ "$tree" != "$(git_safe rev-parse -q --verify 'HEAD^{{tree}}' 2>/dev/null)" ]; then
  commit=$(git_safe stripspace < "$W/handoff/commit-message.txt" | git_safe commit-tree "$tree" -p HEAD) \
    && git_safe update-ref -m "handoff: the agent's changes" HEAD "$commit" \
    || echo "handoff: committing failed" >&2
fi
if [ "$(git_safe rev-parse HEAD)" != {start} ]; then
  git_safe bundle create "$HANDOFF_OUTPUT_DIR/changes.bundle" {start}..HEAD >/dev/null 2>&1 \
    || echo "handoff: bundling the commits failed" >&2
fi
if [ -n "$out_boundary" ]; then
  printf '\036%s\036%s\n' "$out_boundary" "$agent_status" >&2
  {{ tar -c -f - -C "$W" out 2>/dev/null; }} >&2
fi
exit $agent_status
"#,
            out_variable = crate::sandbox::OUT_BOUNDARY_VARIABLE,
            run = self.run_id,
            stage = shell_quote(self.stage.as_str()),
            agent = shell_quote(self.agent_command),
            environment = self.environment_words(),
            scratch = self.scratch_words(),
            tail = AGENT_OUTPUT_TAIL,
            tail_bytes = AGENT_OUTPUT_TAIL_BYTES,
            name = shell_quote(self.git_name),
            email = shell_quote(self.git_email),
            start = shell_quote(self.start_sha),
            clone = self.copy_script(),
            carry = CARRY_SETUP_PRODUCTS,
        )
    }
}

impl JobScript<'_> {
    /// The agent's scratch patterns as quoted words (an empty word when it has none).
    fn scratch_words(&self) -> String {
        if self.agent_scratch_files.is_empty() {
            return "''".to_owned();
        }
        self.agent_scratch_files
            .iter()
            .map(|pattern| shell_quote(pattern))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `NAME='value' ` for each variable of the agent, before its command.
    fn environment_words(&self) -> String {
        self.agent_environment
            .iter()
            .map(|(name, value)| format!("{name}={} ", shell_quote(value)))
            .collect()
    }

    /// The lines that make the working copy, or bring the kept one to the start.
    fn copy_script(&self) -> String {
        let branch = shell_quote(self.branch);
        let start = shell_quote(self.checkout_sha);
        match self.copy_steps {
            CopySteps::MadeOnHost => String::new(),
            CopySteps::FromBundle { bundle_ref } => format!(
                "if [ ! -d \"$W/repo/.git\" ]; then\n  \
                 mkdir -p \"$W/repo\" && find \"$W/repo\" -mindepth 1 -maxdepth 1 -exec rm -rf {{}} +\n  \
                 {{ git -c init.defaultBranch=handoff-unborn init --quiet \"$W/repo\" \\\n    \
                 && git -C \"$W/repo\" fetch --quiet --no-tags \"$W/handoff/repo.bundle\" {bundle_ref} \\\n    \
                 && git -C \"$W/repo\" checkout --quiet -B {branch} FETCH_HEAD; }} \\\n    \
                 || {{ echo \"handoff: cannot make the working copy from the bundle\" >&2; exit 98; }}\n  \
                 rm -f \"$W/handoff/repo.bundle\"\n\
                 fi\n",
                bundle_ref = shell_quote(bundle_ref),
            ),
            CopySteps::RefreshKept { bundle_ref } => {
                // The bundle is the host's own: its objects go in as they are (a fetch
                // would walk the old and new trees in full to check them again), and
                // the packs it leaves are gathered as a fetch's are, in the background.
                let fetch = match bundle_ref {
                    Some(_) => "git_kept bundle unbundle \"$W/handoff/repo.bundle\" >/dev/null \\\n  \
                         || kept_copy_unusable \"the commits it lacks do not apply to it\"\n\
                         git_kept gc --auto --quiet >&2 || echo \"handoff: git could not tidy the kept copy\" >&2\n"
                        .to_owned(),
                    None => String::new(),
                };
                format!(
                    "# The item's working copy, kept from its last run: brought to the start here,\n\
                     # tracked files forced back, untracked ones removed, ignored ones (build output) kept.\n\
                     kept_copy_unusable() {{\n  \
                     echo \"handoff: the kept working copy cannot be used: $1\" >&2\n  \
                     : > \"$HANDOFF_OUTPUT_DIR/{mark}\"\n  \
                     exit {exit}\n\
                     }}\n\
                     git_kept() {{\n  \
                     GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_NO_REPLACE_OBJECTS=1 GIT_ATTR_NOSYSTEM=1 \\\n    \
                     git -C \"$W/repo\" -c core.hooksPath=/dev/null -c safe.directory='*' -c core.fsmonitor=false \\\n    \
                     -c core.attributesFile=/dev/null \"$@\"\n\
                     }}\n\
                     [ -d \"$W/repo/.git\" ] || kept_copy_unusable \"it is not there\"\n\
                     # What an earlier run may have planted in the copy's git folder goes before\n\
                     # git reads it: its config (filters, includes, aliases), attributes, hooks,\n\
                     # alternates and replacements. The untracked cache it keeps lets git skip the\n\
                     # folders that did not change on its later passes over the files.\n\
                     printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n\\tbare = false\\n\\tuntrackedCache = true\\n' > \"$W/repo/.git/config\" \\\n  \
                     || kept_copy_unusable \"its git config cannot be reset\"\n\
                     rm -rf \"$W/repo/.git/hooks\" \"$W/repo/.git/info/attributes\" \"$W/repo/.git/objects/info/alternates\" \\\n  \
                     \"$W/repo/.git/refs/replace\" \"$W/repo/.git/info/grafts\"\n\
                     {fetch}\
                     git_kept checkout --quiet --force -B {branch} {start} >&2 \\\n  \
                     || kept_copy_unusable \"{start} cannot be checked out in it\"\n\
                     git_kept clean --quiet -f -f -d >&2 || kept_copy_unusable \"its untracked files cannot be removed\"\n\
                     rm -f \"$W/handoff/repo.bundle\"\n\
                     echo \"handoff: the kept working copy is at \"{start} >&2\n",
                    mark = KEPT_COPY_UNUSABLE_MARK,
                    exit = KEPT_COPY_UNUSABLE_EXIT,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_dollars() {
        assert_eq!(shell_quote("it's $HOME"), r"'it'\''s $HOME'");
        let script = JobScript {
            run_id: crate::domain::RunId(3),
            copy_steps: &CopySteps::FromBundle {
                bundle_ref: "refs/heads/main".to_owned(),
            },
            branch: "feedback/f2c-x",
            stage: crate::domain::Stage::Code,
            agent_command: "echo 'hi' \"$HANDOFF_PROMPT_FILE\"",
            agent_environment: &[("IS_SANDBOX", "1")],
            agent_scratch_files: &[".aider*"],
            start_sha: "abc",
            checkout_sha: "abc",
            git_name: "Handoff agent",
            git_email: "agent@handoff.invalid",
        }
        .render();
        assert!(
            script
                .contains(r#"IS_SANDBOX='1' sh -c 'echo '\''hi'\'' "$HANDOFF_PROMPT_FILE"' 2>&1"#),
            "{script}"
        );
        assert!(script.contains("core.hooksPath=/dev/null"));
        assert!(
            script.contains("printf '%s\\n' '.aider*' > \"$W/handoff/agent-scratch\""),
            "{script}"
        );
        assert!(
            script.contains("fetch --quiet --no-tags \"$W/handoff/repo.bundle\" 'refs/heads/main'"),
            "{script}"
        );
        assert!(
            script.contains("checkout --quiet -B 'feedback/f2c-x' FETCH_HEAD"),
            "{script}"
        );
    }
}
