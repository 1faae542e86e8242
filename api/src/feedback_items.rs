//! Feedback items, as both front ends ask for them: add one, the board, an item with its
//! whole history, approve an item a visitor opened, take one off the board or put it
//! back. The window's records are made from these ([`super::feedback_view`],
//! [`super::archive`]); the command line prints them as they are.

use serde::Serialize;

use super::AppCore;
use handoff::dashboard::Dashboard;
use handoff::domain::{
    ArchiveActor, ArchiveChange, ArchiveState, AutomaticUpdate, Feedback, FeedbackId, FollowUp,
    Run, StatusChange,
};
use handoff::error_code::CodedError;
use handoff::store::{FeedbackFilter, NewFeedback, RunFilter};

/// Adds a feedback item.
pub async fn add_item(core: &AppCore, new: &NewFeedback) -> Result<Feedback, CodedError> {
    Ok(core.store.feedback().add_feedback(new).await?)
}

/// The board for `filter`: every card, grouped by status.
pub async fn board(core: &AppCore, filter: &FeedbackFilter) -> Result<Dashboard, CodedError> {
    Ok(core.store.feedback().dashboard(filter).await?)
}

/// One item with everything that happened to it.
#[derive(Debug, Clone, Serialize)]
pub struct ItemHistory {
    pub feedback: Feedback,
    pub status_history: Vec<StatusChange>,
    pub archive_history: Vec<ArchiveChange>,
    pub follow_ups: Vec<FollowUp>,
    pub runs: Vec<Run>,
    pub automatic_updates: Vec<AutomaticUpdate>,
}

/// Item `feedback_id` with its history.
pub async fn item_history(core: &AppCore, feedback_id: i64) -> Result<ItemHistory, CodedError> {
    let id = FeedbackId(feedback_id);
    let store = &core.store;
    Ok(ItemHistory {
        feedback: store.feedback().feedback(id).await?,
        status_history: store.feedback().status_history(id).await?,
        archive_history: store.feedback().archive_history(id).await?,
        follow_ups: store.feedback().follow_ups(id).await?,
        automatic_updates: store.automatic_updates().automatic_updates_of(id).await?,
        runs: store
            .runs()
            .runs(&RunFilter {
                feedback_id: Some(id),
                ..RunFilter::default()
            })
            .await?,
    })
}

/// The owner lets the agent run on item `feedback_id`, which a visitor opened (an item
/// of the owner's needs no approval and is returned as it is).
pub async fn approve_item(core: &AppCore, feedback_id: i64) -> Result<Feedback, CodedError> {
    Ok(core
        .store
        .feedback()
        .approve_feedback(FeedbackId(feedback_id))
        .await?)
}

/// Takes item `feedback_id` off the board as `state`, or puts it back (`None`); the
/// item, and whether anything changed.
pub async fn put_item_away(
    core: &AppCore,
    feedback_id: i64,
    state: Option<ArchiveState>,
) -> Result<(Feedback, bool), CodedError> {
    Ok(core
        .store
        .feedback()
        .set_archive_state(FeedbackId(feedback_id), state, ArchiveActor::Owner)
        .await?)
}

/// Adds the owner's follow-up `text` to item `feedback_id`: the new follow-up, and how
/// many the item's thread holds then.
pub async fn add_follow_up(
    core: &AppCore,
    feedback_id: i64,
    text: &str,
) -> Result<(FollowUp, usize), CodedError> {
    let id = FeedbackId(feedback_id);
    let added = core.store.feedback().add_owner_follow_up(id, text).await?;
    let count = core.store.feedback().follow_ups(id).await?.len();
    Ok((added, count))
}

/// Lets follow-up `follow_up_id` (a visitor's text, or a review or check from the PR)
/// into the prompts; the follow-up as it is then.
pub async fn include_follow_up(core: &AppCore, follow_up_id: i64) -> Result<FollowUp, CodedError> {
    Ok(core
        .store
        .feedback()
        .include_follow_up(handoff::domain::FollowUpId(follow_up_id))
        .await?)
}

/// Item `feedback_id`'s follow-ups, in order.
pub async fn follow_ups(core: &AppCore, feedback_id: i64) -> Result<Vec<FollowUp>, CodedError> {
    Ok(core
        .store
        .feedback()
        .follow_ups(FeedbackId(feedback_id))
        .await?)
}
