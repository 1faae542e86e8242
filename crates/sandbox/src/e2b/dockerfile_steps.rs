//! An owner's Dockerfile read as the steps of an E2B template build. E2B builds one
//! stage from an image in a registry, with five kinds of step (`RUN`, `COPY`, `ENV`,
//! `WORKDIR`, `USER`), so:
//!
//! - `FROM` names the image E2B starts from; a second stage is refused, unless the
//!   dev container's `target` is the first stage (the later ones are then not needed);
//! - `ARG`s take the dev container's `args`, else their defaults: they fill `$NAME` in
//!   later instructions and are set for each `RUN`, as Docker does;
//! - `COPY` and `ADD` of the context's own files become copy steps (`--chown` kept);
//!   copying from another stage or an image, `ADD` of an address or an archive, and
//!   here-documents are refused by name;
//! - `CMD`, `ENTRYPOINT`, `EXPOSE`, `LABEL`, `VOLUME`, `HEALTHCHECK`, `STOPSIGNAL` and
//!   `MAINTAINER` mean nothing to a run (Handoff starts the job itself) and are listed
//!   as notes; `SHELL` and `ONBUILD` are refused.

use std::collections::BTreeMap;

use crate::environment_layer::{LayerInstruction, NamedInstruction};

/// The steps an owner's Dockerfile makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnersSteps {
    /// The image E2B starts the template from.
    pub from_image: String,
    pub steps: Vec<NamedInstruction>,
    /// What was left out, in words.
    pub notes: Vec<String>,
}

/// Why a Dockerfile cannot become a template: the instruction, and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{step}: {reason}")]
pub struct DockerfileRefused {
    pub step: String,
    pub reason: String,
}

/// The Dockerfile at `path` (its `text`), with the dev container's build `args` and
/// `target`, as template steps.
pub fn dockerfile_steps(
    path: &str,
    text: &str,
    args: &BTreeMap<String, String>,
    target: Option<&str>,
) -> Result<OwnersSteps, DockerfileRefused> {
    let mut reading = Reading::new(args);
    for (line_number, instruction) in logical_lines(text) {
        let (word, rest) = instruction
            .split_once(char::is_whitespace)
            .map(|(word, rest)| (word, rest.trim()))
            .unwrap_or((instruction.as_str(), ""));
        let step = format!(
            "line {line_number} of {path} ({})",
            instruction.chars().take(120).collect::<String>()
        );
        let refuse = |reason: &str| DockerfileRefused {
            step: step.clone(),
            reason: reason.to_owned(),
        };
        match word.to_ascii_uppercase().as_str() {
            "FROM" => {
                if reading.from_image.is_some() {
                    if target.is_some() && target == reading.first_stage.as_deref() {
                        break;
                    }
                    return Err(refuse(
                        "a second stage: E2B builds a template from one stage, so a \
                         multi-stage Dockerfile cannot become one (name the first stage \
                         as the dev container's `target`, or start from a single stage)",
                    ));
                }
                reading.stage_start(rest).map_err(|reason| refuse(&reason))?;
            }
            "ARG" => reading.argument(rest),
            "RUN" => reading.run(rest, &step).map_err(|reason| refuse(&reason))?,
            "COPY" | "ADD" => reading
                .copy(word, rest, &step)
                .map_err(|reason| refuse(&reason))?,
            "ENV" => reading.env(rest, &step),
            "WORKDIR" => {
                let path = reading.substituted(rest);
                reading.push(LayerInstruction::Workdir(path), &step);
            }
            "USER" => {
                let user = reading.substituted(rest);
                reading.push(LayerInstruction::User(user), &step);
            }
            "CMD" | "ENTRYPOINT" | "EXPOSE" | "LABEL" | "VOLUME" | "HEALTHCHECK"
            | "STOPSIGNAL" | "MAINTAINER" => reading.notes.push(format!(
                "{} on line {line_number} of {path} is not used: Handoff starts each run's job itself",
                word.to_ascii_uppercase()
            )),
            "SHELL" | "ONBUILD" => {
                return Err(refuse(&format!(
                    "{} has no E2B template step",
                    word.to_ascii_uppercase()
                )))
            }
            _ => return Err(refuse("not a Dockerfile instruction")),
        }
        if reading.from_image.is_none() && !word.eq_ignore_ascii_case("ARG") {
            return Err(refuse("the Dockerfile must start with FROM"));
        }
    }
    let from_image = reading.from_image.ok_or_else(|| DockerfileRefused {
        step: path.to_owned(),
        reason: "no FROM: the Dockerfile names no image to start from".to_owned(),
    })?;
    Ok(OwnersSteps {
        from_image,
        steps: reading.steps,
        notes: reading.notes,
    })
}

struct Reading<'a> {
    given: &'a BTreeMap<String, String>,
    /// Every `ARG` with a value, for `$NAME` in later instructions.
    arguments: BTreeMap<String, String>,
    /// The stage's `ARG`s, set for each `RUN`.
    stage_arguments: Vec<(String, String)>,
    /// `ENV`s so far, for `$NAME` in later instructions.
    variables: BTreeMap<String, String>,
    from_image: Option<String>,
    first_stage: Option<String>,
    steps: Vec<NamedInstruction>,
    notes: Vec<String>,
}

impl<'a> Reading<'a> {
    fn new(given: &'a BTreeMap<String, String>) -> Self {
        Reading {
            given,
            arguments: BTreeMap::new(),
            stage_arguments: Vec::new(),
            variables: BTreeMap::new(),
            from_image: None,
            first_stage: None,
            steps: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn push(&mut self, instruction: LayerInstruction, step: &str) {
        self.steps.push(NamedInstruction {
            instruction,
            name: step.to_owned(),
        });
    }

    fn stage_start(&mut self, rest: &str) -> Result<(), String> {
        let words: Vec<&str> = rest
            .split_whitespace()
            .filter(|word| !word.starts_with("--"))
            .collect();
        let (image, stage) = match words.as_slice() {
            [image] => (*image, None),
            [image, keyword, stage] if keyword.eq_ignore_ascii_case("as") => {
                (*image, Some((*stage).to_owned()))
            }
            _ => return Err("FROM takes an image and at most `AS name`".to_owned()),
        };
        let image = self.substituted(image);
        if image.eq_ignore_ascii_case("scratch") {
            return Err("an empty image (scratch) has no shell for the agent".to_owned());
        }
        self.from_image = Some(image);
        self.first_stage = stage;
        Ok(())
    }

    fn argument(&mut self, rest: &str) {
        let (name, default) = match rest.split_once('=') {
            Some((name, value)) => (name.trim(), Some(unquoted(value.trim()))),
            None => (rest.trim(), None),
        };
        let value = self
            .given
            .get(name)
            .cloned()
            .or(default)
            .or_else(|| self.arguments.get(name).cloned());
        if let Some(value) = value {
            self.arguments.insert(name.to_owned(), value.clone());
            if self.from_image.is_some() {
                self.stage_arguments.push((name.to_owned(), value));
            }
        }
    }

    fn run(&mut self, rest: &str, step: &str) -> Result<(), String> {
        let mut command = rest;
        while let Some(flagged) = command.strip_prefix("--") {
            let (flag, after) = flagged
                .split_once(char::is_whitespace)
                .unwrap_or((flagged, ""));
            self.notes.push(format!(
                "`--{flag}` on {step} is not used: E2B runs the step without it"
            ));
            command = after.trim_start();
        }
        if command.contains("<<") && here_document(command) {
            return Err("a here-document has no E2B template step: put the lines in a script the Dockerfile copies in".to_owned());
        }
        let line = match exec_form(command) {
            Some(words) => words
                .iter()
                .map(|word| shell_quoted(word.as_str()))
                .collect::<Vec<_>>()
                .join(" "),
            None => command.to_owned(),
        };
        let line = if self.stage_arguments.is_empty() {
            line
        } else {
            let set: Vec<String> = self
                .stage_arguments
                .iter()
                .map(|(name, value)| format!("{name}={}", shell_quoted(value)))
                .collect();
            format!("export {}; {line}", set.join(" "))
        };
        self.push(LayerInstruction::Run(line), step);
        Ok(())
    }

    fn copy(&mut self, word: &str, rest: &str, step: &str) -> Result<(), String> {
        let is_add = word.eq_ignore_ascii_case("ADD");
        let mut owner = None;
        let mut words: Vec<String> = match exec_form(rest) {
            Some(words) => words,
            None => rest.split_whitespace().map(str::to_owned).collect(),
        };
        while words.first().is_some_and(|word| word.starts_with("--")) {
            let flag = words.remove(0);
            if let Some(value) = flag.strip_prefix("--chown=") {
                owner = Some(self.substituted(value));
            } else if flag.starts_with("--from") {
                return Err(
                    "copying from another stage or image: E2B copies only the context's files"
                        .to_owned(),
                );
            } else {
                self.notes
                    .push(format!("`{flag}` on {step} is not used on E2B"));
            }
        }
        if words.len() < 2 {
            return Err(format!(
                "{word} takes at least one source and a destination"
            ));
        }
        if rest.contains("<<") {
            return Err("a here-document has no E2B template step".to_owned());
        }
        let destination = self.substituted(&words.pop().unwrap_or_default());
        for source in words {
            let source = self.substituted(&source);
            if is_add && source.contains("://") {
                return Err(format!(
                    "ADD of an address ({source}): download it in a RUN step instead"
                ));
            }
            if is_add
                && [".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"]
                    .iter()
                    .any(|suffix| source.ends_with(suffix))
            {
                return Err(format!(
                    "ADD of an archive ({source}) unpacks it, which an E2B copy does not: \
                     COPY it and unpack it in a RUN step"
                ));
            }
            self.push(
                LayerInstruction::Copy {
                    from: source,
                    to: destination.clone(),
                    owner: owner.clone(),
                },
                step,
            );
        }
        Ok(())
    }

    fn env(&mut self, rest: &str, step: &str) {
        let pairs: Vec<(String, String)> = if rest.contains('=') {
            shell_words(rest)
                .into_iter()
                .filter_map(|pair| {
                    let (name, value) = pair.split_once('=')?;
                    Some((name.to_owned(), self.substituted(value)))
                })
                .collect()
        } else {
            match rest.split_once(char::is_whitespace) {
                Some((name, value)) => vec![(name.to_owned(), self.substituted(value.trim()))],
                None => Vec::new(),
            }
        };
        for (name, value) in &pairs {
            self.variables.insert(name.clone(), value.clone());
        }
        if !pairs.is_empty() {
            self.push(LayerInstruction::Env(pairs), step);
        }
    }

    /// `text` with `$NAME`, `${NAME}` and `${NAME:-default}` filled in from the
    /// arguments and variables so far (an unknown name is empty, as in Docker).
    fn substituted(&self, text: &str) -> String {
        let value_of = |name: &str| {
            self.variables
                .get(name)
                .or_else(|| self.arguments.get(name))
                .cloned()
        };
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(braced) = after.strip_prefix('{') {
                let Some(end) = braced.find('}') else {
                    out.push_str(&rest[at..]);
                    return out;
                };
                let inner = &braced[..end];
                let value = match inner.split_once(":-") {
                    Some((name, default)) => value_of(name)
                        .filter(|value| !value.is_empty())
                        .unwrap_or_else(|| default.to_owned()),
                    None => value_of(inner).unwrap_or_default(),
                };
                out.push_str(&value);
                rest = &braced[end + 1..];
            } else {
                let length = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                if length == 0 {
                    out.push('$');
                } else {
                    out.push_str(&value_of(&after[..length]).unwrap_or_default());
                }
                rest = &after[length..];
            }
        }
        out.push_str(rest);
        out
    }
}

/// The Dockerfile's instructions with their first line's number: comments and blank
/// lines left out, lines ending in `\` joined to the next.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_none()) {
            continue;
        }
        let (continues, part) = match trimmed.strip_suffix('\\') {
            Some(part) => (true, part.trim_end()),
            None => (false, trimmed),
        };
        let entry = current.get_or_insert_with(|| (index + 1, String::new()));
        if !entry.1.is_empty() && !part.is_empty() {
            entry.1.push(' ');
        }
        entry.1.push_str(part);
        if !continues {
            lines.extend(current.take().filter(|(_, line)| !line.is_empty()));
        }
    }
    lines.extend(current.filter(|(_, line)| !line.is_empty()));
    lines
}

/// The words of a JSON array (`["a", "b"]`), or `None` for the shell form.
fn exec_form(text: &str) -> Option<Vec<String>> {
    let text = text.trim();
    if !text.starts_with('[') {
        return None;
    }
    serde_json::from_str::<Vec<String>>(text).ok()
}

/// Whether `command` holds a here-document (`<<EOF`, `<<-EOF`, `<<"EOF"`), not just a
/// shift or a here-string.
fn here_document(command: &str) -> bool {
    command.match_indices("<<").any(|(at, _)| {
        let after = command[at + 2..].trim_start_matches('-');
        after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '"' || c == '\'')
    })
}

/// Words split at spaces, with double- or single-quoted parts kept whole (unquoted).
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for character in text.chars() {
        match (quote, character) {
            _ if escaped => {
                word.push(character);
                escaped = false;
            }
            (Some('"') | None, '\\') => escaped = true,
            (Some(open), c) if c == open => quote = None,
            (None, '"' | '\'') => quote = Some(character),
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(character),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

fn unquoted(text: &str) -> String {
    shell_words(text).join(" ")
}

/// `text` in single quotes for a POSIX shell.
pub(crate) fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps_of(text: &str) -> Result<OwnersSteps, DockerfileRefused> {
        dockerfile_steps(".devcontainer/Dockerfile", text, &BTreeMap::new(), None)
    }

    fn instructions(steps: &OwnersSteps) -> Vec<LayerInstruction> {
        steps
            .steps
            .iter()
            .map(|step| step.instruction.clone())
            .collect()
    }

    #[test]
    fn a_single_stage_becomes_its_steps() {
        let steps = steps_of(
            "# the tools\nARG VARIANT=12-slim\nFROM debian:${VARIANT} AS dev\nARG TOOL=jq\n\
             RUN apt-get update && \\\n    apt-get install -y $TOOL\nENV LANG=C.UTF-8 EDITOR=\"vi -e\"\n\
             COPY --chown=1000 tools/ requirements.txt /opt/tools/\nWORKDIR /opt/tools\nUSER root\n\
             EXPOSE 8080\nCMD [\"bash\"]\n",
        )
        .expect("a single stage");
        assert_eq!(steps.from_image, "debian:12-slim");
        assert_eq!(
            instructions(&steps),
            vec![
                LayerInstruction::Run(
                    "export TOOL='jq'; apt-get update && apt-get install -y $TOOL".into()
                ),
                LayerInstruction::Env(vec![
                    ("LANG".into(), "C.UTF-8".into()),
                    ("EDITOR".into(), "vi -e".into()),
                ]),
                LayerInstruction::Copy {
                    from: "tools/".into(),
                    to: "/opt/tools/".into(),
                    owner: Some("1000".into()),
                },
                LayerInstruction::Copy {
                    from: "requirements.txt".into(),
                    to: "/opt/tools/".into(),
                    owner: Some("1000".into()),
                },
                LayerInstruction::Workdir("/opt/tools".into()),
                LayerInstruction::User("root".into()),
            ]
        );
        assert_eq!(steps.notes.len(), 2, "{:?}", steps.notes);
        assert!(steps.steps[0]
            .name
            .starts_with("line 5 of .devcontainer/Dockerfile (RUN"));
    }

    #[test]
    fn the_dev_containers_args_win_over_the_defaults() {
        let args = BTreeMap::from([("VARIANT".to_owned(), "bookworm".to_owned())]);
        let steps = dockerfile_steps(
            "Dockerfile",
            "ARG VARIANT=bullseye\nFROM debian:$VARIANT\nRUN [\"echo\", \"it's\"]\n",
            &args,
            None,
        )
        .expect("steps");
        assert_eq!(steps.from_image, "debian:bookworm");
        assert_eq!(
            instructions(&steps),
            vec![LayerInstruction::Run(r"'echo' 'it'\''s'".into())]
        );
    }

    #[test]
    fn what_e2b_cannot_build_is_refused_by_its_line() {
        for (text, says) in [
            (
                "FROM rust AS build\nRUN cargo build\nFROM debian\n",
                "a second stage",
            ),
            (
                "FROM debian\nCOPY --from=build /app /app\n",
                "another stage",
            ),
            (
                "FROM debian\nADD https://example.com/x.sh /x.sh\n",
                "ADD of an address",
            ),
            ("FROM debian\nADD tools.tar.gz /opt/\n", "ADD of an archive"),
            ("FROM debian\nRUN <<EOF\necho hi\nEOF\n", "here-document"),
            ("FROM debian\nSHELL [\"bash\", \"-c\"]\n", "SHELL has no"),
            ("FROM scratch\n", "scratch"),
            ("RUN echo hi\n", "must start with FROM"),
            ("# nothing\n", "no FROM"),
        ] {
            let refused = steps_of(text).expect_err(text);
            assert!(refused.reason.contains(says), "{text}: {refused}");
        }
        let refused =
            steps_of("FROM rust AS build\nRUN cargo build\nFROM debian\n").expect_err("two stages");
        assert!(refused
            .step
            .starts_with("line 3 of .devcontainer/Dockerfile (FROM debian)"));
    }

    #[test]
    fn a_target_naming_the_first_stage_leaves_the_later_ones_out() {
        let steps = dockerfile_steps(
            "Dockerfile",
            "FROM debian AS dev\nRUN echo dev\nFROM dev AS release\nRUN echo release\n",
            &BTreeMap::new(),
            Some("dev"),
        )
        .expect("the first stage");
        assert_eq!(
            instructions(&steps),
            vec![LayerInstruction::Run("echo dev".into())]
        );
    }
}
