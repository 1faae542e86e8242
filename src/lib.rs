//! Handoff's core: everything the desktop app and the `handoff` command line do, with
//! no dependency on Tauri or any UI.
//!
//! - [`domain`]: the product's words as types and its rules (status transitions,
//!   iterate rules, head branch names).
//! - [`store`]: the local SQLite mirror.
//! - [`github`]: the GitHub client, managed comments, safe edits, sync, sign-in.
//! - [`secrets`]: the OS keyring, the only place secrets are kept, and the scrubbing of
//!   secrets out of what runs store; [`service_address`]: where a secret may be sent.
//! - [`dashboard`]: the feedback cards as the app and the CLI show them.
//! - [`cli`]: the `handoff` command line.
//! - [`app_commands`]: what the desktop app asks of the core, with coded errors.

pub mod agent_image;
pub mod app_commands;
pub mod cli;
pub mod comment_diff;
pub mod dashboard;
pub mod data_dir;
pub mod domain;
pub mod error_code;
pub mod github;
pub mod markdown;
pub mod pipeline;
pub mod pull_request_workspace;
pub mod sandbox;
pub mod secrets;
pub mod service_address;
pub mod setup_check;
pub mod store;

pub use store::{Store, StoreError};
