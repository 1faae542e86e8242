//! What several commands' arguments share: the `--json` flag, and the value parsers that
//! list an enum's words (so `--help` lists them and a wrong value is answered with them).

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;

use handoff_api::core_types::{FeedbackStatus, RepoName, Stage, PRESETS};

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn parse_repo_name(text: &str) -> Result<RepoName, String> {
    text.parse::<RepoName>().map_err(|error| error.to_string())
}

/// A value parser for an enum of the core with fixed words: `--help` lists the words, and
/// a wrong value is answered with them.
macro_rules! words_of {
    ($kind:ty) => {
        clap::builder::TypedValueParser::map(
            clap::builder::PossibleValuesParser::new(
                <$kind>::ALL.iter().map(|value| value.as_str()),
            ),
            |word| {
                word.parse::<$kind>()
                    .expect("clap lets only the listed words through")
            },
        )
    };
}
pub(crate) use words_of;

/// The statuses as typed (`waiting-for-review`), with the stored words as aliases.
pub(crate) fn feedback_statuses() -> impl TypedValueParser<Value = FeedbackStatus> {
    const TYPED: [&str; 5] = ["new", "coding", "waiting-for-review", "failed", "merged"];
    let values = FeedbackStatus::ALL
        .iter()
        .zip(TYPED)
        .map(|(status, typed)| PossibleValue::new(typed).alias(status.as_str()));
    PossibleValuesParser::new(values).map(|word| {
        word.parse::<FeedbackStatus>()
            .expect("clap lets only the listed statuses through")
    })
}

/// The QA stages, with `auto` (all four in a row) also spelled `full-auto`.
pub(crate) fn qa_stages() -> impl TypedValueParser<Value = Stage> {
    PossibleValuesParser::new([
        PossibleValue::new("review"),
        PossibleValue::new("plan"),
        PossibleValue::new("test"),
        PossibleValue::new("fix"),
        PossibleValue::new("auto")
            .alias("full-auto")
            .help("review, plan, test and fix without pausing"),
    ])
    .map(|word| match word.as_str() {
        "review" => Stage::Review,
        "plan" => Stage::Plan,
        "test" => Stage::Test,
        "fix" => Stage::Fix,
        _ => Stage::FullAuto,
    })
}

/// The stages that have a prompt template of their own.
pub(crate) fn prompt_stages() -> impl TypedValueParser<Value = Stage> {
    PossibleValuesParser::new(["review", "plan", "test", "fix", "lessons"]).map(|word| {
        match word.as_str() {
            "review" => Stage::Review,
            "plan" => Stage::Plan,
            "test" => Stage::Test,
            "lessons" => Stage::Lessons,
            _ => Stage::Fix,
        }
    })
}

/// The agent presets, and `custom` (a command of the repository's own).
pub(crate) fn agent_presets() -> PossibleValuesParser {
    PossibleValuesParser::new(PRESETS.iter().map(|preset| preset.name).chain(["custom"]))
}

/// The recipes an agent image can be built from.
pub(crate) fn image_presets() -> PossibleValuesParser {
    PossibleValuesParser::new(handoff_api::agent_images::image_presets())
}

/// The settings `handoff config` reads and changes.
pub(crate) fn setting_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        handoff_api::installation_settings::EDITABLE_SETTINGS
            .iter()
            .map(|key| key.as_str()),
    )
}
