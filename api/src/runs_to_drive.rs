//! Runs begun (checked and recorded as queued) and handed to the caller to drive: the
//! window drives them in tasks of their own, watched ([`drive_in_background`]), the
//! command line to their end in its foreground, printing what came of each. Each kind
//! keeps its report.
//!
//! [`drive_in_background`]: CodeRunToDrive::drive_in_background

use handoff::domain::{RepoName, Run};
use handoff::error_code::CodedError;
use handoff::pipeline::code_run::CodeRunReport;
use handoff::pipeline::github_commands::BegunCommandRun;
use handoff::pipeline::lessons_run::{BegunLessons, LessonsReport};
use handoff::pipeline::qa_run::{BegunQa, QaReport};
use handoff::pipeline::run_queue::AdoptedRun;
use handoff::pipeline::spawned_run::spawn_watched_run;
use handoff::pipeline::{BegunCodeRun, Pipeline};
use handoff::store::StartedCodeRun;

/// Says what each kind of begun run is, drives it, and keeps its report.
macro_rules! run_to_drive {
    ($(#[$doc:meta])* $name:ident, $begun:ty, $report:ty, $what:literal) => {
        $(#[$doc])*
        pub struct $name {
            begun: $begun,
            pipeline: Pipeline,
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("run_id", &self.begun.run_id())
                    .finish_non_exhaustive()
            }
        }

        impl $name {
            pub(crate) fn new(begun: $begun, pipeline: &Pipeline) -> Self {
                $name {
                    begun,
                    pipeline: pipeline.clone(),
                }
            }

            pub fn run_id(&self) -> i64 {
                self.begun.run_id().0
            }

            /// Drives the run to its end here (waiting for its slot first).
            pub async fn drive(self) -> Result<$report, CodedError> {
                Ok(self.begun.drive().await?)
            }

            /// Drives the run in a task of its own, watched: a driving that panics ends
            /// the run at once.
            pub fn drive_in_background(self) {
                let run_id = self.begun.run_id();
                spawn_watched_run(self.pipeline, run_id, $what, self.begun.drive());
            }
        }
    };
}

run_to_drive!(
    /// A code run (first run, Update PR, retry, an automatic update).
    CodeRunToDrive,
    BegunCodeRun,
    CodeRunReport,
    "a code run"
);
run_to_drive!(
    /// A QA stage, or the chain of them.
    QaToDrive,
    BegunQa,
    QaReport,
    "a QA stage"
);
run_to_drive!(
    /// A lessons run.
    LessonsToDrive,
    BegunLessons,
    LessonsReport,
    "a lessons run"
);
run_to_drive!(
    /// The run an owner's `@handoff` command began; driving it also answers the command.
    CommandRunToDrive,
    BegunCommandRun,
    Run,
    "a @handoff command's run"
);

impl CodeRunToDrive {
    /// The run as it was recorded, with its kind and the quota it took.
    pub fn started(&self) -> &StartedCodeRun {
        &self.begun.started
    }
}

impl QaToDrive {
    /// The run as it was recorded.
    pub fn run(&self) -> &Run {
        &self.begun.run
    }
}

impl LessonsToDrive {
    /// The run as it was recorded.
    pub fn run(&self) -> &Run {
        &self.begun.run
    }

    /// The repository whose lessons it draws.
    pub fn repo_name(&self) -> &RepoName {
        self.begun.repo_name()
    }
}

/// A run queued (or taken over), of any kind, for the caller to drive in this process.
pub struct RunToDrive {
    run: AdoptedRun,
    pipeline: Pipeline,
}

impl std::fmt::Debug for RunToDrive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunToDrive")
            .field("run_id", &self.run.run_id())
            .finish_non_exhaustive()
    }
}

impl RunToDrive {
    pub(crate) fn new(run: AdoptedRun, pipeline: &Pipeline) -> RunToDrive {
        RunToDrive {
            run,
            pipeline: pipeline.clone(),
        }
    }

    pub fn run_id(&self) -> i64 {
        self.run.run_id().0
    }

    /// Drives the run to its end here (waiting for its slot first); its id then. How
    /// it ended is on the run: an error of its driving is written to the log.
    pub async fn drive(self) -> i64 {
        let run_id = self.run.run_id();
        if let Err(error) = self.run.drive().await {
            tracing::error!(run = %run_id, %error, "a queued run ended with an error");
        }
        run_id.0
    }

    /// Drives the run in a task of its own, watched: a driving that panics ends the run
    /// at once.
    pub fn drive_in_background(self) {
        self.run.drive_in_background(self.pipeline);
    }
}
