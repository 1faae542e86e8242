//! Items off the board from the window: dismiss one, archive one, or put one back. The
//! board's archive filter (`DashboardQuery::archived`) finds them.

use super::invalid_input;
use super::records::FeedbackRecord;
use super::AppCore;
use handoff::domain::{ArchiveActor, ArchiveState, FeedbackId};
use handoff::error_code::CodedError;

/// Takes item `feedback_id` off the board as `how` (`dismissed` or `archived`).
pub async fn archive_item(
    core: &AppCore,
    feedback_id: i64,
    how: &str,
) -> Result<FeedbackRecord, CodedError> {
    let store = &core.store;
    let state = match ArchiveState::parse(how) {
        Some(state @ (ArchiveState::Dismissed | ArchiveState::Archived)) => state,
        _ => {
            return Err(invalid_input(format!(
                "an item is put away as dismissed or archived, not {how:?}"
            )))
        }
    };
    Ok(store
        .feedback()
        .set_archive_state(FeedbackId(feedback_id), Some(state), ArchiveActor::Owner)
        .await?
        .0
        .into())
}

/// Puts item `feedback_id` back on the board.
pub async fn restore_item(core: &AppCore, feedback_id: i64) -> Result<FeedbackRecord, CodedError> {
    let store = &core.store;
    Ok(store
        .feedback()
        .set_archive_state(FeedbackId(feedback_id), None, ArchiveActor::Owner)
        .await?
        .0
        .into())
}
