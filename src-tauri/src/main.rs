//! Handoff's desktop app: a window over the same core the `handoff` command line uses.
//!
//! This crate is a thin shell: it opens the store, registers the commands in
//! [`commands`], and runs the [`background_tasks`]. Everything else is in the `handoff`
//! core crate.

// Hide the console window of release builds on Windows.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod background_tasks;
mod commands;
mod desktop_state;
mod native_confirmation;
mod notifications;
mod one_window;

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
        .plugin(tauri_plugin_notification::init())
        // Its dialogs are asked for by the Rust side only: no capability grants the page
        // a dialog command.
        .plugin(tauri_plugin_dialog::init())
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
        .invoke_handler(tauri::generate_handler![
            commands::app_info,
            commands::window_painted,
            commands::dashboard,
            commands::repos,
            commands::feedback_detail,
            commands::add_feedback,
            commands::add_follow_up,
            commands::include_follow_up,
            commands::approve_feedback,
            commands::approve_comment_version,
            commands::start_run,
            commands::cancel_run,
            commands::held_commits,
            commands::push_held_run,
            commands::follow_run_log,
            commands::preview_markdown,
            commands::preview_edit,
            commands::comment_history,
            commands::compare_versions,
            commands::pull_request_list,
            commands::open_workspace,
            commands::start_qa_stage,
            commands::outbox_items,
            commands::send_outbox_entry,
            commands::discard_outbox_entry,
            commands::open_workspace_pull_request,
            commands::save_comment,
            commands::resolve_comment_conflict,
            commands::session_status,
            commands::sign_in,
            commands::start_device_sign_in,
            commands::finish_device_sign_in,
            commands::cancel_device_sign_in,
            commands::sign_out,
            commands::key_states,
            commands::set_key,
            commands::remove_key,
            commands::check_setup,
            commands::build_agent_image,
            commands::repository_choices,
            commands::connect_repository,
            commands::repo_settings,
            commands::save_repo_settings,
            commands::set_stage_prompt,
            commands::disconnect_repository,
            commands::sync_now,
            commands::open_pull_request,
            commands::open_link,
            commands::log_view,
            commands::set_log_level,
            commands::open_log_folder,
        ])
        .run(tauri::generate_context!())
        .expect("Handoff's window could not start");
}
