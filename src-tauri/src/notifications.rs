//! OS notifications for runs that end and automatic updates that stop, and what clicking one
//! opens: the PR's workspace for a QA stage, the feedback item for a code run.
//!
//! One path on every desktop: notify-rust hands the notification to the desktop's own
//! service (the notification service on the D-Bus session on Linux, the user notification
//! center on macOS, a toast on Windows), with a default action, and a thread of its own waits
//! for what the owner does with it. A click on the notification, or on its Open button, brings
//! the window to the front and opens the target. What differs per desktop is only the name a
//! notification is sent under (`name_the_sender`).

use handoff_api::session::{AutomaticUpdateNote, NotificationTarget, RunNotice};
use notify_rust::NotificationResponse;
use tauri::{AppHandle, Emitter as _};

use crate::page_events::OPEN_TARGET;

/// The action a click on the notification itself reports: the Desktop Notifications
/// Specification's default action, which a notification must offer for its clicks to be
/// reported, and the key of the Open button on macOS and Windows.
const CLICK_ACTION: &str = "default";

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
    let mut notification = notify_rust::Notification::new();
    let product = app.config().product_name.as_deref().unwrap_or("Handoff");
    notification.appname(product).summary(title).body(body);
    if target.is_some() {
        notification.action(CLICK_ACTION, "Open");
    }
    name_the_sender(app, &mut notification);
    let app = app.clone();
    // Sending and waiting block (D-Bus calls, the notification center's answer, the toast's
    // events): a thread of its own, ended when the notification is clicked or goes away.
    let spawned = std::thread::Builder::new()
        .name("notification".to_owned())
        .spawn(move || {
            let handle = match notification.show() {
                Ok(handle) => handle,
                Err(error) => {
                    tracing::warn!(%error, "a notification could not be shown");
                    return;
                }
            };
            let waited = handle.wait_for_response(|response: &NotificationResponse| {
                if opens_target(response) {
                    if let Some(target) = &target {
                        open(&app, target);
                    }
                }
            });
            if let Err(error) = waited {
                tracing::warn!(%error, "what was done with a notification could not be read");
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "no thread for a notification");
    }
}

/// Whether what the owner did with a notification asks for what it was about: a click on
/// the notification itself, or on its Open button. Closing it, letting it expire or
/// answering it asks for nothing.
fn opens_target(response: &NotificationResponse) -> bool {
    match response {
        NotificationResponse::Default => true,
        NotificationResponse::Action(action) => action == CLICK_ACTION,
        NotificationResponse::Reply(_) | NotificationResponse::Closed(_) => false,
    }
}

/// Linux: the service shows the application name each notification carries, so nothing
/// more is needed.
#[cfg(all(unix, not(target_os = "macos")))]
fn name_the_sender(_: &AppHandle, _: &mut notify_rust::Notification) {}

/// macOS: the notification center posts for an application bundle, chosen once per
/// process. A development build has no bundle of its own and posts as Terminal's; a
/// package posts as Handoff's, so its clicks come back to Handoff.
#[cfg(target_os = "macos")]
fn name_the_sender(app: &AppHandle, _: &mut notify_rust::Notification) {
    static CHOSEN: std::sync::Once = std::sync::Once::new();
    CHOSEN.call_once(|| {
        let bundle = if tauri::is_dev() {
            "com.apple.Terminal"
        } else {
            app.config().identifier.as_str()
        };
        if let Err(error) = notify_rust::set_application(bundle) {
            tracing::warn!(%error, bundle, "notifications cannot be posted as this application");
        }
    });
}

/// Windows: a toast is sent under an AppUserModelID that Windows knows, or it is dropped.
/// Handoff's installers register its identifier; a program run from a cargo build folder
/// has none, so its toasts go under PowerShell's (notify-rust's default).
#[cfg(windows)]
fn name_the_sender(app: &AppHandle, notification: &mut notify_rust::Notification) {
    match std::env::current_exe() {
        Ok(program) if !ran_from_a_cargo_build(&program) => {
            notification.app_id(&app.config().identifier);
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "the program's own path is unknown"),
    }
}

/// Whether `program` lies in a cargo build folder (`target/debug`, `target/release`, or
/// either under a target's triple): cargo marks the root of each with a `CACHEDIR.TAG`.
#[cfg_attr(not(windows), allow(dead_code))]
fn ran_from_a_cargo_build(program: &std::path::Path) -> bool {
    program
        .ancestors()
        .skip(2)
        .take(2)
        .any(|folder| folder.join("CACHEDIR.TAG").is_file())
}

/// Brings the window to the front and asks the page to open `target`.
pub fn open(app: &AppHandle, target: &NotificationTarget) {
    crate::one_window::bring_to_front_quietly(app);
    if let Err(error) = app.emit(OPEN_TARGET.name, target) {
        tracing::warn!(%error, "telling the page to open a notification's target");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify_rust::CloseReason;

    #[test]
    fn a_click_on_the_notification_or_its_open_button_opens_its_target() {
        assert!(opens_target(&NotificationResponse::Default));
        assert!(opens_target(&NotificationResponse::Action(
            "default".to_owned()
        )));
    }

    #[test]
    fn closing_expiring_or_answering_a_notification_opens_nothing() {
        for response in [
            NotificationResponse::Closed(CloseReason::Dismissed),
            NotificationResponse::Closed(CloseReason::Expired),
            NotificationResponse::Closed(CloseReason::CloseAction),
            NotificationResponse::Action("snooze".to_owned()),
            NotificationResponse::Reply("later".to_owned()),
        ] {
            assert!(!opens_target(&response), "{response:?}");
        }
    }

    #[test]
    fn a_program_in_a_cargo_build_folder_is_told_from_an_installed_one() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("target");
        for folder in ["debug", "x86_64-pc-windows-msvc/release"] {
            std::fs::create_dir_all(target.join(folder)).unwrap();
        }
        std::fs::write(
            target.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
        assert!(ran_from_a_cargo_build(
            &target.join("debug/handoff-desktop.exe")
        ));
        assert!(ran_from_a_cargo_build(
            &target.join("x86_64-pc-windows-msvc/release/handoff-desktop.exe")
        ));

        let installed = root.path().join("AppData/Local/Handoff");
        std::fs::create_dir_all(&installed).unwrap();
        assert!(!ran_from_a_cargo_build(
            &installed.join("handoff-desktop.exe")
        ));
    }
}
