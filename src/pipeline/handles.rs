//! The pipeline by area: one small handle per kind of work the front ends ask for,
//! each borrowed from the [`Pipeline`] (`pipeline.code_runs().begin_code_run(…)`), so
//! that no one type carries every use case. A handle owns nothing of its own; what the
//! kinds of work share (the agent's set-up, the working copy, the sandbox, the push)
//! stays on [`Pipeline`], for the handles to use.

use super::Pipeline;

/// Code runs: one item's, several at once, and the updates Handoff starts by itself.
#[derive(Debug, Clone, Copy)]
pub struct CodeRuns<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// The review, test-plan, test and fix stages of a pull request, alone or as a chain.
#[derive(Debug, Clone, Copy)]
pub struct QaRuns<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// Lessons: the runs that draw them from the owner's corrections, and the lessons file
/// written to the repository.
#[derive(Debug, Clone, Copy)]
pub struct LessonWork<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// The `@handoff` commands read from GitHub: carried out, and answered.
#[derive(Debug, Clone, Copy)]
pub struct GithubCommandWork<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// The run queue as the owner sees it: its order, a run cancelled, and the queued runs
/// of a process that is gone taken over.
#[derive(Debug, Clone, Copy)]
pub struct RunQueue<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// Runs whose process died or went silent: found and ended, with what they left.
#[derive(Debug, Clone, Copy)]
pub struct LeftBehindRuns<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// Runs whose commits wait for the owner's approval before they are pushed.
#[derive(Debug, Clone, Copy)]
pub struct HeldPushes<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// The items' kept working copies, pruned when they are no longer wanted.
#[derive(Debug, Clone, Copy)]
pub struct KeptCopies<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

/// The repositories' environments: what each base branch says the agent's is made of.
#[derive(Debug, Clone, Copy)]
pub struct Environments<'pipeline> {
    pub(crate) pipeline: &'pipeline Pipeline,
}

impl Pipeline {
    /// The repositories' environments.
    pub fn environments(&self) -> Environments<'_> {
        Environments { pipeline: self }
    }

    /// Code runs.
    pub fn code_runs(&self) -> CodeRuns<'_> {
        CodeRuns { pipeline: self }
    }

    /// The pull request stages.
    pub fn qa_runs(&self) -> QaRuns<'_> {
        QaRuns { pipeline: self }
    }

    /// Lessons and the lessons file.
    pub fn lessons(&self) -> LessonWork<'_> {
        LessonWork { pipeline: self }
    }

    /// The `@handoff` commands.
    pub fn github_commands(&self) -> GithubCommandWork<'_> {
        GithubCommandWork { pipeline: self }
    }

    /// The run queue.
    pub fn run_queue(&self) -> RunQueue<'_> {
        RunQueue { pipeline: self }
    }

    /// Runs left behind.
    pub fn left_behind(&self) -> LeftBehindRuns<'_> {
        LeftBehindRuns { pipeline: self }
    }

    /// Held pushes.
    pub fn held_pushes(&self) -> HeldPushes<'_> {
        HeldPushes { pipeline: self }
    }

    /// Kept working copies.
    pub fn kept_copies(&self) -> KeptCopies<'_> {
        KeptCopies { pipeline: self }
    }
}
