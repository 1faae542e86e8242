//! Questions the owner answers in a dialog the operating system draws, not the page.
//!
//! Some settings make Handoff run a command as the owner, with no isolation: choosing the
//! local backend, or changing the command it runs there. A script that got into the page
//! could set those and start a run, so the page's own "are you sure" is not enough: the
//! shell asks in a native dialog, which no script in the page can answer.

use tauri::AppHandle;
use tauri_plugin_dialog::{DialogExt as _, MessageDialogButtons, MessageDialogKind};

/// The dialog's title, which the window tests find it by.
pub const TITLE: &str = "Handoff: run without isolation?";

/// Asks `question`; true when the owner chose to go ahead.
pub async fn owner_confirms(app: &AppHandle, question: String) -> bool {
    let app = app.clone();
    let asked = tokio::task::spawn_blocking(move || {
        app.dialog()
            .message(question)
            .title(TITLE)
            .kind(MessageDialogKind::Warning)
            .buttons(MessageDialogButtons::OkCancelCustom(
                "Run without isolation".to_owned(),
                "Keep it as it was".to_owned(),
            ))
            .blocking_show()
    })
    .await;
    match asked {
        Ok(confirmed) => {
            tracing::info!(confirmed, "the owner answered the no-isolation question");
            confirmed
        }
        Err(error) => {
            tracing::warn!(%error, "the no-isolation question could not be asked; taken as no");
            false
        }
    }
}
