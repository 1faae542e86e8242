//! Items off the board. An item is closed when its issue was closed on GitHub (and on
//! the board again when the issue is reopened), dismissed when the owner will not act on
//! it, archived when the owner is done with it. Nothing of it is deleted, a filter finds
//! it, and the owner can put it back. No run starts on an item off the board, and one
//! with a run going cannot be put away.

use chrono::{DateTime, Utc};
use serde::Serialize;

crate::stored_text_enum! {
    /// Why an item is off the board.
    pub enum ArchiveState as "archive state" {
        /// Its issue was closed on GitHub.
        Closed => "closed",
        /// The owner will not act on it.
        Dismissed => "dismissed",
        /// The owner is done with it.
        Archived => "archived",
    }
}

impl ArchiveState {
    /// How the window and the command line say it.
    pub fn label(self) -> &'static str {
        match self {
            ArchiveState::Closed => "closed on GitHub",
            ArchiveState::Dismissed => "dismissed",
            ArchiveState::Archived => "archived",
        }
    }
}

crate::stored_text_enum! {
    /// Who put an item away or back.
    pub enum ArchiveActor as "archive actor" {
        /// The owner, in the window or the command line.
        Owner => "owner",
        /// GitHub: the item's issue was closed or reopened.
        Github => "github",
    }
}

/// One change of an item's place on or off the board, as kept in its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArchiveChange {
    /// `None`: back on the board.
    pub archived_as: Option<ArchiveState>,
    pub changed_by: ArchiveActor,
    pub changed_at: DateTime<Utc>,
}
