//! OS notifications for runs that end and automatic updates that stop, and what clicking one opens: the PR's workspace
//! for a QA stage, the feedback item for a code run. On Linux the notification plugin
//! reports no clicks, so a notification is sent to the desktop's notification service
//! directly, with a default action, and a thread waits for its `ActionInvoked` signal
//! (or for the notification to close). Elsewhere the plugin shows it.

use handoff_api::session::{AutomaticUpdateNote, NotificationTarget, RunNotice};
use tauri::{AppHandle, Emitter as _};

/// The event that tells the page to open what a notification was about.
pub const OPEN_TARGET: &str = "open-target";

/// Shows `notice` as an OS notification whose click opens its target.
pub fn show(app: &AppHandle, notice: &RunNotice) {
    show_words(
        app,
        &notice.title,
        &notice.event.message,
        notice.target.clone(),
    );
}

/// Tells the owner what a sync decided about an automatic update that did not run
/// (stopped, or skipped): a run that started says so when it ends.
pub fn show_automatic_update(app: &AppHandle, note: &AutomaticUpdateNote) {
    show_words(
        app,
        note.title(),
        &note.reason,
        Some(NotificationTarget::Feedback {
            id: note.feedback_id,
        }),
    );
}

fn show_words(app: &AppHandle, title: &str, body: &str, target: Option<NotificationTarget>) {
    #[cfg(target_os = "linux")]
    show_with_click(app, title, body, target);
    #[cfg(not(target_os = "linux"))]
    show_with_plugin(app, title, body, target);
}

#[cfg(not(target_os = "linux"))]
fn show_with_plugin(app: &AppHandle, title: &str, body: &str, _: Option<NotificationTarget>) {
    use tauri_plugin_notification::NotificationExt as _;
    if let Err(error) = app.notification().builder().title(title).body(body).show() {
        tracing::warn!(%error, "a notification could not be shown");
    }
}

#[cfg(target_os = "linux")]
fn show_with_click(app: &AppHandle, title: &str, body: &str, target: Option<NotificationTarget>) {
    let mut notification = notify_rust::Notification::new();
    notification.appname("Handoff").summary(title).body(body);
    if target.is_some() {
        notification.action("default", "Open");
    }
    let app = app.clone();
    // Sending and waiting are blocking D-Bus calls: a thread of their own, ended when
    // the notification is clicked or closes.
    let spawned = std::thread::Builder::new()
        .name("notification".to_owned())
        .spawn(move || match notification.show() {
            Ok(handle) => handle.wait_for_action(|action| {
                if action == "default" {
                    if let Some(target) = target {
                        open(&app, &target);
                    }
                }
            }),
            Err(error) => tracing::warn!(%error, "a notification could not be shown"),
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "no thread for a notification");
    }
}

/// Brings the window to the front and asks the page to open `target`.
pub fn open(app: &AppHandle, target: &NotificationTarget) {
    crate::one_window::bring_to_front_quietly(app);
    if let Err(error) = app.emit(OPEN_TARGET, target) {
        tracing::warn!(%error, "telling the page to open a notification's target");
    }
}
