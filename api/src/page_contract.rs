//! The page's contract, written out for the page: every record the window's commands
//! take and give, and every event's payload, as JSDoc typedefs in `ui/js/contract.js`,
//! generated from these records themselves (their serde names, optional fields and enum
//! words), so that an editor checks the page's modules (`// @ts-check`) without npm. A
//! test regenerates the file and fails when the checked-in one is stale.
//!
//! The core's enums reach the page as their stored words; [`words_of_the_core!`] gives
//! each a TypeScript name whose type is the union of exactly those words, read from the
//! enum's `ALL`, so the contract never lists them by hand.

use std::any::TypeId;
use std::collections::BTreeSet;

use ts_rs::{Config, TypeVisitor, TS};

/// Declares, for each core enum, a type of this crate that describes it to the page as
/// the union of its words (the core knows nothing of TypeScript).
macro_rules! words_of_the_core {
    ($($words:ident => $core:ty),* $(,)?) => {
        $(
            #[doc = concat!("The words of the core's `", stringify!($core), "`, as the page receives them.")]
            #[derive(Debug)]
            pub struct $words;

            impl TS for $words {
                type WithoutGenerics = Self;
                type OptionInnerType = Self;

                fn name(_: &Config) -> String {
                    let path = stringify!($core);
                    path.rsplit("::").next().unwrap_or(path).trim().to_owned()
                }

                fn output_path() -> Option<std::path::PathBuf> {
                    Some(std::path::PathBuf::from(format!("{}.ts", Self::name(&config()))))
                }

                fn decl(config: &Config) -> String {
                    format!("type {} = {};", Self::name(config), Self::inline(config))
                }

                fn inline(_: &Config) -> String {
                    <$core>::ALL
                        .iter()
                        .map(|word| format!("{:?}", word.as_str()))
                        .collect::<Vec<_>>()
                        .join(" | ")
                }
            }
        )*
    };
}

words_of_the_core! {
    AutomaticDecisionWords => handoff::domain::AutomaticDecision,
    AutomaticTriggerWords => handoff::domain::AutomaticTrigger,
    CheckStatusWords => handoff::domain::CheckStatus,
    CodeRunKindWords => handoff::domain::CodeRunKind,
    CommentKindWords => handoff::domain::CommentKind,
    FeedbackSourceWords => handoff::domain::FeedbackSource,
    FeedbackStatusWords => handoff::domain::FeedbackStatus,
    FollowUpOriginWords => handoff::domain::FollowUpOrigin,
    FollowUpSourceWords => handoff::domain::FollowUpSource,
    LineChangeWords => handoff::comment_diff::LineChange,
    LogLevelWords => handoff::log_file::LogLevel,
    LogStreamWords => handoff::domain::LogStream,
    NetworkModeWords => handoff::domain::NetworkMode,
    OutboxStateWords => handoff::domain::OutboxState,
    PullRequestStateWords => handoff::domain::PullRequestState,
    RunEventKindWords => handoff::domain::run_event::RunEventKind,
    RunFailureCodeWords => handoff::domain::RunFailureCode,
    RunStatusWords => handoff::domain::RunStatus,
    SandboxBackendWords => handoff::domain::SandboxBackend,
    SpendSourceWords => handoff::domain::SpendSource,
    PaidWithWords => handoff::domain::PaidWith,
    StageWords => handoff::domain::Stage,
    VersionOriginWords => handoff::domain::VersionOrigin,
    ErrorCodeWords => handoff::error_code::ErrorCode,
    ArchiveStateWords => handoff::domain::ArchiveState,
}

// The core's records that reach the page whole, described as they serialize. A test
// (`the_shapes_match_what_the_core_serializes`) serializes each one and holds it to its
// shape here, so a change in the core cannot leave the contract behind.

/// `owner/name` of a repository.
#[derive(Debug, TS)]
#[cfg_attr(feature = "page-contract", ts(rename = "RepoName"))]
pub struct RepoNameShape {
    pub owner: String,
    pub name: String,
}

/// A text as the agent would get it: escaped, with the parts the rendered view hides
/// marked.
#[derive(Debug, TS)]
#[cfg_attr(
    feature = "page-contract",
    ts(rename = "RevealedText", rename_all = "camelCase")
)]
pub struct RevealedTextShape {
    pub html: String,
    pub hidden_parts: Vec<String>,
}

/// Where a QA stage stands.
#[derive(Debug, TS)]
#[cfg_attr(
    feature = "page-contract",
    ts(rename = "StageState", rename_all = "snake_case")
)]
pub enum StageStateShape {
    Running,
    Failed,
    OutOfDate,
    EditedByYou,
    Done,
    NotRun,
}

/// How one check of Check setup came out.
#[derive(Debug, TS)]
#[cfg_attr(
    feature = "page-contract",
    ts(rename = "SetupCheckStatus", rename_all = "snake_case")
)]
pub enum SetupCheckStatusShape {
    Ok,
    Warning,
    Failure,
}

/// What gets the owner past a check that is not ok or an error (the window makes it a
/// button).
#[derive(Debug, TS)]
#[cfg_attr(
    feature = "page-contract",
    ts(rename = "Fix", tag = "kind", rename_all = "snake_case")
)]
pub enum FixShape {
    SignIn,
    GetWriteAccess { repo: String },
    TurnOnIssues { repo: String },
    StartKeyring,
    StartDocker,
    BuildImage { preset: String, image: String },
    LoadImage { image: String },
    BuildEnvironment { repo: String },
    AddKey { provider: String },
    AddE2bKey,
    ReplaceE2bKey,
    UseHttpsForE2b,
    UseHttpsForProvider { provider: String },
    ChooseAnotherAgent { repo: String },
    FreeDisk { path: String },
    InstallEgressGate,
    GrantTokenPermission { permission: String, repo: String },
    MakeAgentFork { repo: String, place: Option<String> },
    ConnectRepository { repo: String },
    RaiseQuota { repo: String },
    RaiseMonthlyBudget { repo: String },
    RaiseDayBudget,
    RunStagesOneAtATime { repo: String },
    InstallNewerHandoff,
    SetDamagedDatabaseAside,
    TryAgainLater,
    LookUpItems,
    LookUpRuns,
    LookUpLessons,
    AcceptLesson { id: i64 },
    SyncPullRequests,
    ApproveFeedback { feedback_id: i64 },
    ApproveCommentVersion { comment: String },
    ReplaceOwnerEdit { comment: String },
    RunAsCodeRun,
    ReplaceLessonsFileEdits,
    CorrectTheAgentFirst,
    ConfirmLocalBackend { repo: String },
    UseASandbox,
    ShowRun { run: i64 },
}

/// An error as every command of the page may throw it: the code to act on, the message
/// to show, and the step past it, if there is one.
#[derive(Debug, TS)]
#[cfg_attr(feature = "page-contract", ts(rename = "CodedError"))]
pub struct CodedErrorShape {
    pub code: ErrorCodeWords,
    pub message: String,
    pub fix: Option<FixShape>,
}

/// The TypeScript of `T` inline (for the test that holds shapes to serializations).
pub fn inline_type<T: TS>() -> String {
    T::inline(&config())
}

/// One typedef of the contract.
struct Typedef {
    name: String,
    docs: Option<String>,
    declaration: String,
}

/// Visits a type and everything it refers to, once each.
#[derive(Default)]
struct Collector {
    seen: BTreeSet<String>,
    seen_types: Vec<TypeId>,
    typedefs: Vec<Typedef>,
}

impl TypeVisitor for Collector {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if self.seen_types.contains(&TypeId::of::<T>()) {
            return;
        }
        self.seen_types.push(TypeId::of::<T>());
        let config = config();
        // Only named declarations become typedefs (strings, numbers and arrays do not):
        // those are the types that would be exported to a file of their own.
        if T::output_path().is_some() {
            let name = T::ident(&config);
            if self.seen.insert(name.clone()) {
                self.typedefs.push(Typedef {
                    name,
                    docs: T::docs(),
                    declaration: T::decl(&config),
                });
            }
        }
        T::visit_dependencies(self);
        T::visit_generics(self);
    }
}

/// Numbers stay numbers: JSON carries Rust's `u64` and `i64` as plain numbers.
fn config() -> Config {
    Config::new().with_large_int("number")
}

/// Every type the page receives or sends, from the commands and the events.
fn visit_every_root(collector: &mut Collector) {
    use crate::*;
    collector.visit::<AppInfo>();
    collector.visit::<DashboardQuery>();
    collector.visit::<records::BoardView>();
    collector.visit::<records::RepoRecord>();
    collector.visit::<records::FeedbackRecord>();
    collector.visit::<records::MirrorChangesRecord>();
    collector.visit::<records::LogChunkRecord>();
    collector.visit::<feedback_view::FeedbackDetail>();
    collector.visit::<feedback_view::NewFeedbackInput>();
    collector.visit::<runs::HeldCommitsRecord>();
    collector.visit::<runs::HeldPushRecord>();
    collector.visit::<run_queue::BulkRunRecord>();
    collector.visit::<run_queue::NewItemsRecord>();
    collector.visit::<queue_slots::QueueSlotsRecord>();
    collector.visit::<queue_slots::QueueSlotsInput>();
    collector.visit::<comments::EditPreview>();
    collector.visit::<comments::HistoryEntry>();
    collector.visit::<comments::VersionComparison>();
    collector.visit::<comments::SaveResult>();
    collector.visit::<pull_requests::PullRequestQuery>();
    collector.visit::<pull_requests::PullRequestRow>();
    collector.visit::<pull_request_workspace::WorkspaceView>();
    collector.visit::<outbox::OutboxItem>();
    collector.visit::<session::SessionStatus>();
    collector.visit::<crate::daemon_status::DaemonState>();
    collector.visit::<session::SyncSummary>();
    collector.visit::<session::RunNotice>();
    collector.visit::<setup::KeyState>();
    collector.visit::<setup::SetupView>();
    collector.visit::<setup::DeviceSignIn>();
    collector.visit::<repositories::RepositoryChoice>();
    collector.visit::<repositories::RepoSettingsView>();
    collector.visit::<agent_forks::ForkPlacesView>();
    collector.visit::<repositories::RepoSettingsInput>();
    collector.visit::<log::LogView>();
    collector.visit::<mirror_following::MirrorFollowing>();
    collector.visit::<updates::UpdateSettings>();
    collector.visit::<updates::UpdateCheck>();
    collector.visit::<spend::SpendView>();
    collector.visit::<spend::BudgetSettingsInput>();
    collector.visit::<spend::AgentStepRecord>();
    collector.visit::<lessons::LessonsView>();
    collector.visit::<lessons::LessonRecord>();
    collector.visit::<lessons::LessonDecisionWord>();
    collector.visit::<lessons::LessonEditInput>();
    collector.visit::<lessons::LessonSettingsInput>();
    collector.visit::<lessons::LessonsFileRecord>();
    collector.visit::<environments::EnvironmentRecord>();
    collector.visit::<environments::EnvironmentBuilt>();
    collector.visit::<test_settings::TestSettingView>();
    collector.visit::<ErrorCodeWords>();
    collector.visit::<CodedErrorShape>();
}

/// `ui/js/contract.js` as it should read.
pub fn page_contract_file() -> String {
    let mut collector = Collector::default();
    visit_every_root(&mut collector);
    let mut typedefs = collector.typedefs;
    typedefs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut file = String::from(
        "// @ts-check\n\
         // The page's contract: what the window's commands take and give, and what its\n\
         // events carry. Generated from the records in api/src by\n\
         // `cargo nextest run -p handoff-api page_contract_file` (which rewrites this file\n\
         // when it is stale): do not edit by hand.\n\
         //\n\
         // Errors always arrive as a CodedError: {code, message, fix}.\n\n",
    );
    for typedef in typedefs {
        file.push_str("/**\n");
        if let Some(docs) = &typedef.docs {
            for line in jsdoc_lines(docs) {
                file.push_str(&format!(" * {line}\n").replace(" * \n", " *\n"));
            }
        }
        file.push_str(&format!(
            " * @typedef {{{}}} {}\n */\n\n",
            right_hand_side(&typedef.declaration),
            typedef.name
        ));
    }
    file.push_str("export {};\n");
    file
}

/// The text of a doc comment as ts-rs gives it (`/** … */` or plain lines).
fn jsdoc_lines(docs: &str) -> Vec<String> {
    docs.lines()
        .map(|line| {
            line.trim()
                .trim_start_matches("/**")
                .trim_end_matches("*/")
                .trim_start_matches('*')
                .trim()
                .to_owned()
        })
        .filter(|line| !line.is_empty())
        .collect()
}

/// `{ a: string }` out of `type X = { a: string };`, on one line: the fields' own doc
/// comments are left out (a comment inside the typedef's would end it).
fn right_hand_side(declaration: &str) -> String {
    let after_equals = declaration
        .split_once(" = ")
        .map(|(_, rest)| rest)
        .unwrap_or(declaration);
    let mut text = String::new();
    let mut rest = after_equals;
    while let Some(start) = rest.find("/*") {
        text.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    text.push_str(rest);
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line.trim_end_matches(';').trim().to_owned()
}
