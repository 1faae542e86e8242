//! One running window per data folder, in the place the owner left it: a second launch
//! on the same data brings the running window to the front instead of opening another
//! (two windows on one database would race), and the window's size and place are kept
//! between launches.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest as _, Sha256};
use tauri::{AppHandle, Emitter as _, Manager as _, Runtime, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt as _, StateFlags};

/// The D-Bus name that stands for the instance running on the data folder in use:
/// instances on other data folders (a second profile, the tests) run side by side.
pub fn instance_name() -> String {
    let folder = match handoff_api::data_folder() {
        Ok(dir) => dir.display().to_string(),
        Err(error) => {
            // The window then opens on its own; the data folder's error is shown by
            // the window itself when it opens the store.
            tracing::warn!(message = %error.message, "the data folder cannot be found; the one-window rule is kept under a name for no folder");
            String::new()
        }
    };
    let digest = Sha256::digest(folder.as_bytes());
    let hex: String = digest
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("dev.handoff.desktop.d{hex}")
}

/// What the running instance does when the owner launches Handoff again.
pub fn bring_to_front<R: Runtime>(app: &AppHandle<R>) {
    bring_to_front_quietly(app);
    if let Err(error) = app.emit(crate::page_events::SECOND_LAUNCH.name, ()) {
        tracing::warn!(%error, "telling the page about a second launch");
    }
}

/// Unminimizes, shows and focuses the main window.
pub fn bring_to_front_quietly<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else {
        tracing::warn!("no main window to bring to the front");
        return;
    };
    for (what, result) in [
        ("unminimize", window.unminimize()),
        ("show", window.show()),
        ("focus", window.set_focus()),
    ] {
        if let Err(error) = result {
            tracing::warn!(%error, "bringing the window to the front: {what} failed");
        }
    }
}

/// Saves the window's size and place shortly after it stops moving (the window-state
/// plugin saves only when the app exits, which a killed or crashed app never does).
pub fn remember_place<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else {
        return;
    };
    let generation = Arc::new(AtomicU64::new(0));
    let handle = app.clone();
    window.on_window_event(move |event| {
        if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
            return;
        }
        let mine = generation.fetch_add(1, Ordering::SeqCst) + 1;
        let generation = generation.clone();
        let handle = handle.clone();
        tauri::async_runtime::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            if generation.load(Ordering::SeqCst) != mine {
                return;
            }
            if let Err(error) = handle
                .save_window_state(StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED)
            {
                tracing::warn!(%error, "keeping the window's size and place");
            }
        });
    });
}
