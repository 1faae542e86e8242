//! Handoff's core: everything the desktop app and the `handoff` command line do, with
//! no dependency on Tauri, any UI or the command line's argument parser.
//!
//! - [`domain`]: the product's words as types and its rules (status transitions,
//!   iterate rules, head branch names).
//! - [`store`]: the local SQLite mirror.
//! - [`github`]: the GitHub client, managed comments, safe edits, sync, sign-in.
//! - [`secrets`]: the OS keyring, the only place secrets are kept, and the scrubbing of
//!   secrets out of what runs store; [`service_address`]: where a secret may be sent.
//! - [`pipeline`]: runs of the agent, code runs and QA stages, from working copy to PR;
//!   [`sandbox`]: where the agent runs (Docker, E2B, a local process); [`egress`]: the
//!   gate a Docker sandbox's traffic leaves through.
//! - [`setup_check`]: what a run needs, checked line by line; [`agent_image`]: the
//!   Docker images agents run in.
//! - [`dashboard`]: the feedback cards as the app and the CLI show them;
//!   [`pull_request_workspace`]: a PR's QA stages and comments as the mirror holds them.
//! - [`markdown`]: untrusted markdown to sanitized HTML; [`revealed_text`]: the raw text
//!   an approval lets through, with what the rendered view hides marked;
//!   [`comment_diff`]: two versions of a comment compared.
//! - [`log_file`]: the log file both front ends write; [`data_dir`]: where the data lives.
//! - [`error_code`]: the codes front ends act on instead of message text;
//!   [`http_client`]: the one HTTP client setup (rustls on ring).
//!
//! What the front ends ask of the core, in their shapes, is the `handoff-api` crate.

// The domain's crate, under the names the rest of the core and its callers know it by.
pub use handoff_domain as domain;
pub use handoff_domain::{dashboard, error_code, service_address, stored_text_enum};
// The egress gate's crate, with the key forwarder and its meter, and the HTTP client.
pub use handoff_egress as egress;
pub use handoff_egress::http_client;
// What Handoff keeps: the mirror, the keyring, the data folder and its locks.
pub use handoff_store as store;
pub use handoff_store::{data_dir, file_lock, secrets};
// Everything Handoff does with GitHub.
pub use handoff_github as github;
// Where the agent runs, and the images it runs in.
pub use handoff_sandbox as sandbox;
pub use handoff_sandbox::agent_image;

pub mod comment_diff;
pub mod log_file;
pub mod markdown;
pub mod pipeline;
pub mod pipeline_settings;
pub mod pull_request_workspace;
pub mod revealed_text;
pub mod setup_check;

pub use store::{Store, StoreError};
