//! Commands the owner gives Handoff from GitHub: a comment on a feedback issue or a
//! feedback PR that begins with `@handoff`. `@handoff review`, `plan`, `test`, `fix` and
//! `auto` run that stage (or the whole chain) on the PR, `@handoff stop` cancels what is
//! running, and anything else after `@handoff` is an instruction for an Update PR (or
//! for the first run, when the item has no PR yet).
//!
//! Every installation of the same owner acts as the same GitHub account, so one command
//! could be taken by a laptop and a desktop at once. Each installation that wants a
//! command replies with a claim that carries its id; the earliest claim on the thread
//! wins, and the others withdraw theirs. The markers of those replies, and of the answer
//! written when the run ends, are parsed here.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::ids::{FeedbackId, RepoId, RunId};
use super::run::Stage;

/// The word that starts a command.
pub const COMMAND_WORD: &str = "@handoff";

/// What a command asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "ask", content = "text", rename_all = "snake_case")]
pub enum CommandAsk {
    /// An instruction for the agent: an Update PR, or the first run.
    Instructions(String),
    /// One QA stage, or the whole chain (`auto`), on the item's PR.
    Stage(Stage),
    /// Cancel the item's running run.
    Stop,
}

impl CommandAsk {
    /// The stored word of the ask.
    pub fn word(&self) -> &'static str {
        match self {
            CommandAsk::Instructions(_) => "instructions",
            CommandAsk::Stage(Stage::FullAuto) => "auto",
            CommandAsk::Stage(stage) => stage.as_str(),
            CommandAsk::Stop => "stop",
        }
    }

    /// The ask stored as `word` (with its instructions, for an instruction).
    pub fn from_stored(word: &str, instructions: Option<&str>) -> Option<CommandAsk> {
        match word {
            "instructions" => Some(CommandAsk::Instructions(instructions?.to_owned())),
            "stop" => Some(CommandAsk::Stop),
            other => stage_of_word(other).map(CommandAsk::Stage),
        }
    }

    /// What it asks, in a few words, for logs and answers.
    pub fn describe(&self) -> String {
        match self {
            CommandAsk::Instructions(_) => "an Update PR with your instructions".to_owned(),
            CommandAsk::Stage(Stage::FullAuto) => {
                "the whole QA chain (review, plan, test, fix)".to_owned()
            }
            CommandAsk::Stage(stage) => format!("the {stage} stage"),
            CommandAsk::Stop => "stopping the running run".to_owned(),
        }
    }
}

fn stage_of_word(word: &str) -> Option<Stage> {
    match word {
        "review" => Some(Stage::Review),
        "plan" => Some(Stage::Plan),
        "test" => Some(Stage::Test),
        "fix" => Some(Stage::Fix),
        "auto" => Some(Stage::FullAuto),
        _ => None,
    }
}

/// The command `body` gives, if it is one: its first line a reader sees begins with
/// `@handoff` as a word of its own (not `@handoffbot`, not quoted, not in a code
/// block). A stage word or `stop` alone is that command; any other text after the word
/// (over as many lines as it takes) is an instruction. `@handoff` alone asks nothing.
pub fn parse_command(body: &str) -> Option<CommandAsk> {
    let start = body.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    let head = start.get(..COMMAND_WORD.len())?;
    if !head.eq_ignore_ascii_case(COMMAND_WORD) {
        return None;
    }
    let rest = &start[COMMAND_WORD.len()..];
    if rest
        .chars()
        .next()
        .is_some_and(|next| next.is_alphanumeric() || next == '-' || next == '_')
    {
        return None;
    }
    let rest = rest
        .trim_start_matches([':', ','])
        .trim()
        .trim_end_matches(['.', '!']);
    if rest.is_empty() {
        return None;
    }
    let word = rest.to_ascii_lowercase();
    if word == "stop" || word == "cancel" {
        return Some(CommandAsk::Stop);
    }
    if let Some(stage) = stage_of_word(&word) {
        return Some(CommandAsk::Stage(stage));
    }
    let text = start[COMMAND_WORD.len()..]
        .trim_start_matches([':', ','])
        .trim();
    Some(CommandAsk::Instructions(text.to_owned()))
}

/// An installation's claim on a command, as its reply on GitHub carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandClaim {
    /// The id of the comment that gave the command.
    pub command_comment_id: u64,
    /// The claiming installation's id.
    pub installation: String,
}

const CLAIM_MARKER_START: &str = "<!-- handoff:claim ";
const ANSWER_MARKER_START: &str = "<!-- handoff:answer ";
const MARKER_END: &str = " -->";

impl CommandClaim {
    /// The marker a claim's reply starts with.
    pub fn marker(&self) -> String {
        format!(
            "{CLAIM_MARKER_START}command={} installation={}{MARKER_END}",
            self.command_comment_id, self.installation
        )
    }

    /// The claim a reply's body starts with, if it starts with one.
    pub fn of_body(body: &str) -> Option<CommandClaim> {
        let inside = body
            .trim_start()
            .strip_prefix(CLAIM_MARKER_START)?
            .split_once(MARKER_END)?
            .0;
        let mut command = None;
        let mut installation = None;
        for pair in inside.split_whitespace() {
            match pair.split_once('=') {
                Some(("command", id)) => command = id.parse().ok(),
                Some(("installation", id)) if !id.is_empty() => installation = Some(id.to_owned()),
                _ => {}
            }
        }
        Some(CommandClaim {
            command_comment_id: command?,
            installation: installation?,
        })
    }
}

/// An installation's answer to a command, as its reply carries it: which run it began
/// there and what that run cost, so that another installation counts the run against
/// the repository's month too.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandAnswer {
    pub command_comment_id: u64,
    pub installation: String,
    /// The run's id in that installation; `None` for a command that began no run.
    pub run_id: Option<u64>,
    /// What the run cost, in dollars.
    pub cost_usd: Option<f64>,
}

impl CommandAnswer {
    /// The marker an answer starts with.
    pub fn marker(&self) -> String {
        let mut marker = format!(
            "{ANSWER_MARKER_START}command={} installation={}",
            self.command_comment_id, self.installation
        );
        if let Some(run) = self.run_id {
            marker.push_str(&format!(" run={run}"));
        }
        if let Some(cost) = self.cost_usd {
            marker.push_str(&format!(" cost={cost:.4}"));
        }
        marker.push_str(MARKER_END);
        marker
    }

    /// The answer a reply's body starts with, if it starts with one.
    pub fn of_body(body: &str) -> Option<CommandAnswer> {
        let inside = body
            .trim_start()
            .strip_prefix(ANSWER_MARKER_START)?
            .split_once(MARKER_END)?
            .0;
        let mut answer = CommandAnswer {
            command_comment_id: 0,
            installation: String::new(),
            run_id: None,
            cost_usd: None,
        };
        let mut command = None;
        for pair in inside.split_whitespace() {
            match pair.split_once('=') {
                Some(("command", id)) => command = id.parse().ok(),
                Some(("installation", id)) => answer.installation = id.to_owned(),
                Some(("run", id)) => answer.run_id = id.parse().ok(),
                Some(("cost", usd)) => {
                    answer.cost_usd = usd
                        .parse::<f64>()
                        .ok()
                        .filter(|usd| usd.is_finite() && *usd >= 0.0)
                }
                _ => {}
            }
        }
        answer.command_comment_id = command?;
        (!answer.installation.is_empty()).then_some(answer)
    }
}

/// Whether `body` is one of Handoff's replies to a command (a claim or an answer),
/// which is never a command itself.
pub fn is_command_reply(body: &str) -> bool {
    let start = body.trim_start();
    start.starts_with(CLAIM_MARKER_START) || start.starts_with(ANSWER_MARKER_START)
}

/// Of the claims on a command's thread, with their comment ids, the one that wins: the
/// earliest (GitHub gives comments increasing ids, so every installation that posted a
/// claim and then reads the thread sees the same earliest one).
pub fn winning_claim(
    claims: impl IntoIterator<Item = (u64, CommandClaim)>,
    command_comment_id: u64,
) -> Option<(u64, CommandClaim)> {
    claims
        .into_iter()
        .filter(|(_, claim)| claim.command_comment_id == command_comment_id)
        .min_by_key(|(comment_id, _)| *comment_id)
}

crate::stored_text_enum! {
    /// Where a command stands in this installation.
    pub enum CommandState as "command state" {
        /// Seen by a sync; not yet claimed.
        Seen => "seen",
        /// This installation posted its claim and is settling it.
        Claiming => "claiming",
        /// Won: its run was begun (or it was done at once, as a stop is).
        Taken => "taken",
        /// Another installation's claim came first.
        TakenElsewhere => "taken_elsewhere",
        /// It could not be done: the answer says why.
        Refused => "refused",
        /// Answered on GitHub: its run ended, or the refusal was said.
        Answered => "answered",
    }
}

/// A command as the store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GithubCommand {
    pub id: i64,
    pub repo_id: RepoId,
    pub feedback_id: FeedbackId,
    /// The comment that gave it.
    pub comment_id: u64,
    /// The issue or PR it was given on.
    pub thread_number: u64,
    pub on_pull_request: bool,
    pub ask: CommandAsk,
    pub written_at: DateTime<Utc>,
    pub state: CommandState,
    /// This installation's claim reply, once posted.
    pub claim_comment_id: Option<u64>,
    pub run_id: Option<RunId>,
    /// Why it was refused or taken elsewhere, in words.
    pub outcome: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_word_alone_runs_that_stage_and_text_after_it_is_an_instruction() {
        assert_eq!(
            parse_command("@handoff review"),
            Some(CommandAsk::Stage(Stage::Review))
        );
        assert_eq!(
            parse_command("  @Handoff AUTO.\n"),
            Some(CommandAsk::Stage(Stage::FullAuto))
        );
        assert_eq!(parse_command("@handoff: stop!"), Some(CommandAsk::Stop));
        assert_eq!(
            parse_command("@handoff fix the typo in the header\nand keep the tests"),
            Some(CommandAsk::Instructions(
                "fix the typo in the header\nand keep the tests".to_owned()
            ))
        );
    }

    #[test]
    fn only_a_comment_that_begins_with_the_word_is_a_command() {
        assert_eq!(parse_command("@handoff"), None);
        assert_eq!(parse_command("@handoff   \n"), None);
        assert_eq!(parse_command("@handoffbot review"), None);
        assert_eq!(parse_command("> @handoff review"), None);
        assert_eq!(parse_command("please @handoff review"), None);
        assert_eq!(parse_command("```\n@handoff review\n```"), None);
        assert_eq!(parse_command(""), None);
    }

    #[test]
    fn a_claim_reads_back_from_its_marker_and_the_earliest_wins() {
        let claim = CommandClaim {
            command_comment_id: 42,
            installation: "abc-1".to_owned(),
        };
        let body = format!("{}\nHandoff took this.", claim.marker());
        assert_eq!(CommandClaim::of_body(&body), Some(claim.clone()));
        assert!(is_command_reply(&body));
        let answer = CommandAnswer {
            command_comment_id: 42,
            installation: "abc-1".to_owned(),
            run_id: Some(7),
            cost_usd: Some(0.25),
        };
        assert!(is_command_reply(&answer.marker()));
        assert_eq!(
            CommandAnswer::of_body(&format!("{}\nThe run succeeded.", answer.marker())),
            Some(answer)
        );
        assert_eq!(
            CommandAnswer::of_body("<!-- handoff:answer command=42 installation=x cost=-3 -->")
                .and_then(|answer| answer.cost_usd),
            None,
            "a cost below zero is no cost"
        );
        assert_eq!(
            CommandClaim::of_body("<!-- handoff:claim command=x -->"),
            None
        );
        let other = CommandClaim {
            command_comment_id: 42,
            installation: "zzz".to_owned(),
        };
        let elsewhere = CommandClaim {
            command_comment_id: 7,
            installation: "first".to_owned(),
        };
        let won = winning_claim(
            [(90, other.clone()), (80, claim.clone()), (10, elsewhere)],
            42,
        );
        assert_eq!(won, Some((80, claim)));
    }

    #[test]
    fn a_stored_ask_reads_back_as_it_was() {
        for ask in [
            CommandAsk::Instructions("make it blue".to_owned()),
            CommandAsk::Stage(Stage::Plan),
            CommandAsk::Stage(Stage::FullAuto),
            CommandAsk::Stop,
        ] {
            let text = match &ask {
                CommandAsk::Instructions(text) => Some(text.as_str()),
                _ => None,
            };
            assert_eq!(CommandAsk::from_stored(ask.word(), text), Some(ask));
        }
    }
}
