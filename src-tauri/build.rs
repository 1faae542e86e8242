//! Tauri's build step: reads tauri.conf.json and capabilities/, embeds ../ui, and
//! declares the app's own commands so that a capability must grant each one.

/// Every command the shell registers; capabilities/main-window.json grants them.
const APP_COMMANDS: &[&str] = &[
    "app_info",
    "window_painted",
    "dashboard",
    "repos",
    "feedback_detail",
    "add_feedback",
    "add_follow_up",
    "include_follow_up",
    "approve_feedback",
    "approve_comment_version",
    "start_run",
    "cancel_run",
    "held_commits",
    "push_held_run",
    "follow_run_log",
    "preview_markdown",
    "preview_edit",
    "comment_history",
    "compare_versions",
    "pull_request_list",
    "open_workspace",
    "start_qa_stage",
    "outbox_items",
    "send_outbox_entry",
    "discard_outbox_entry",
    "open_workspace_pull_request",
    "save_comment",
    "resolve_comment_conflict",
    "session_status",
    "sign_in",
    "start_device_sign_in",
    "finish_device_sign_in",
    "cancel_device_sign_in",
    "sign_out",
    "key_states",
    "set_key",
    "remove_key",
    "check_setup",
    "build_agent_image",
    "repository_choices",
    "connect_repository",
    "repo_settings",
    "save_repo_settings",
    "set_stage_prompt",
    "disconnect_repository",
    "sync_now",
    "open_pull_request",
    "open_link",
    "log_view",
    "set_log_level",
    "open_log_folder",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(APP_COMMANDS));
    tauri_build::try_build(attributes).expect("tauri build step");
}
