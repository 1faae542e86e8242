//! Handoff's desktop app: a window over the same core the `handoff` command line uses.
//!
//! This crate is a thin shell: it opens the store, registers the commands in
//! [`commands`], and tells the page when the mirror changed. Everything else is in the
//! `handoff` core crate.

// Hide the console window of release builds on Windows.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod desktop_state;
mod mirror_change_events;

fn main() {
    tauri::Builder::default()
        .plugin(tauri_plugin_opener::init())
        .setup(|app| {
            let state = tauri::async_runtime::block_on(desktop_state::DesktopState::open());
            mirror_change_events::spawn(app.handle().clone(), &state);
            tauri::Manager::manage(app, state);
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::app_info,
            commands::dashboard,
            commands::repos,
            commands::open_pull_request,
        ])
        .run(tauri::generate_context!())
        .expect("Handoff's window could not start");
}
