//! The QA stages by themselves (the code stage and the full-auto chain are not stages
//! here), with the comment each writes and the comment each reads.

use serde::Serialize;

use crate::domain::{CommentKind, Stage};

/// One QA stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QaStage {
    Review,
    Plan,
    Test,
    Fix,
}

impl QaStage {
    /// The stages in the order a full-auto chain runs them.
    pub const CHAIN: [QaStage; 4] = [QaStage::Review, QaStage::Plan, QaStage::Test, QaStage::Fix];

    pub fn stage(self) -> Stage {
        match self {
            QaStage::Review => Stage::Review,
            QaStage::Plan => Stage::Plan,
            QaStage::Test => Stage::Test,
            QaStage::Fix => Stage::Fix,
        }
    }

    /// The QA stage `stage` is, if it is one.
    pub fn of(stage: Stage) -> Option<QaStage> {
        match stage {
            Stage::Review => Some(QaStage::Review),
            Stage::Plan => Some(QaStage::Plan),
            Stage::Test => Some(QaStage::Test),
            Stage::Fix => Some(QaStage::Fix),
            Stage::Code | Stage::FullAuto | Stage::Lessons => None,
        }
    }

    /// The managed comment the stage writes (test and fix share the results summary).
    pub fn comment(self) -> CommentKind {
        match self {
            QaStage::Review => CommentKind::Review,
            QaStage::Plan => CommentKind::Plan,
            QaStage::Test | QaStage::Fix => CommentKind::Results,
        }
    }

    /// The managed comment the stage reads as its input (fix reads stored results).
    pub fn input(self) -> Option<CommentKind> {
        match self {
            QaStage::Plan => Some(CommentKind::Review),
            QaStage::Test => Some(CommentKind::Plan),
            QaStage::Review | QaStage::Fix => None,
        }
    }
}

impl std::fmt::Display for QaStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.stage().fmt(f)
    }
}

/// What a QA run does: one stage, or the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QaPlan {
    One(QaStage),
    FullAuto,
}

impl QaPlan {
    /// The plan for `stage`, `None` for the code stage.
    pub fn of(stage: Stage) -> Option<QaPlan> {
        match stage {
            Stage::FullAuto => Some(QaPlan::FullAuto),
            other => QaStage::of(other).map(QaPlan::One),
        }
    }

    pub fn stage(self) -> Stage {
        match self {
            QaPlan::One(stage) => stage.stage(),
            QaPlan::FullAuto => Stage::FullAuto,
        }
    }

    /// The stages the plan may run, in order.
    pub fn stages(self) -> Vec<QaStage> {
        match self {
            QaPlan::One(stage) => vec![stage],
            QaPlan::FullAuto => QaStage::CHAIN.to_vec(),
        }
    }
}
