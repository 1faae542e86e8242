//! Handoff's desktop app: a window over the same core the `handoff` command line uses.
//!
//! This crate is a thin shell: it opens the store, registers the commands in
//! [`commands`], and runs the [`background_tasks`]. Everything else is in the `handoff`
//! core crate.

// Hide the console window of release builds on Windows.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// Every command the page may call, named once (the file is also included by `build.rs`
/// and by the test that holds the capability and the page to it).
#[macro_use]
mod command_names;

mod background_tasks;
mod commands;
mod desktop_state;
mod native_confirmation;
mod notifications;
mod one_window;
mod page_events;
mod updates;

/// The handler of every command in [`command_names`], each found in [`commands`].
macro_rules! registered_commands {
    ($($name:ident),* $(,)?) => {
        tauri::generate_handler![$(commands::$name),*]
    };
}

fn main() {
    let started = std::time::Instant::now();
    tauri::Builder::default()
        .plugin(
            tauri_plugin_single_instance::Builder::new()
                .dbus_id(one_window::instance_name())
                .callback(|app, _arguments, _folder| one_window::bring_to_front(app))
                .build(),
        )
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_opener::init())
        // Its dialogs are asked for by the Rust side only: no capability grants the page
        // a dialog command.
        .plugin(tauri_plugin_dialog::init())
        // Updates are checked and installed when the owner asks, in Settings → Updates.
        .plugin(tauri_plugin_updater::Builder::new().build())
        .manage(updates::PendingUpdate::default())
        .setup(move |app| {
            one_window::remember_place(app.handle());
            let state = tauri::async_runtime::block_on(desktop_state::DesktopState::open(started));
            match state.core() {
                Ok(core) => background_tasks::spawn_all(app.handle().clone(), core.clone()),
                Err(error) => tracing::warn!(
                    code = %error.code,
                    "no background tasks (sync, notifications, live updates): the database did not open"
                ),
            }
            tauri::Manager::manage(app, state);
            Ok(())
        })
        .invoke_handler(with_app_commands!(registered_commands))
        .run(tauri::generate_context!())
        .expect("Handoff's window could not start");
}

#[cfg(test)]
mod tests {
    /// Every build of the app, the packages' included, loads its page from the program
    /// itself and is no development build: Tauri's `custom-protocol` is on.
    #[test]
    fn the_app_is_built_as_a_release_never_as_a_development_build() {
        assert!(!tauri::is_dev());
    }
}
