//! The desktop window's tests, in one binary: each module drives the real app window
//! through WebDriver under Xvfb, or installs its package.
//!
//! WebKitWebDriver and the `.deb` are Linux's, so they are built and run on Linux only.

#![cfg(target_os = "linux")]

mod accessibility_window;
mod agent_fork_window;
mod archive_window;
mod automatic_updates_window;
mod daemon_window;
mod dashboard_window;
mod environment_window;
mod feedback_detail_window;
mod installed_package;
mod lessons_window;
mod log_window;
mod one_window;
mod page_backend;
mod page_contract_files;
mod pr_workspace_window;
mod queue_window;
mod real_agent_window;
mod repo_settings_window;
mod setup_window;
mod spend_window;
mod supervision_window;
mod unreadable_checks_window;
mod updates_window;
mod xss_window;
