//! Support code for the tests of every package and for the benchmarks: temporary stores
//! and seeded data, the stateful fakes of GitHub and E2B, a real Secret Service, the
//! scripted agent and its images, and (feature `window`) the real app window driven
//! through WebDriver.

// Fixtures hold servers, processes and temporary folders; nothing prints them.
#![allow(missing_debug_implementations)]

pub mod cli_process;
pub mod debian_mirror;
pub mod docker_images;
pub mod egress_corpus;
pub mod eventually;
pub mod fake_e2b;
pub mod fake_feature_registry;
pub mod fake_github;
pub mod fake_provider;
pub mod kept_between_runs;
pub mod model_server;
pub mod network_link;
pub mod openapi_schema;
pub mod pipeline_world;
pub mod qa_directives;
pub mod raw_http;
pub mod real_agents;
pub mod scripted_repository;
pub mod secret_service;
pub mod seed;
pub mod store_tampering;
pub mod update_feed;
pub mod virtual_display;
#[cfg(feature = "window")]
pub mod window;
pub mod xss_corpus;

use handoff::Store;
use tempfile::TempDir;

/// A store in a fresh temporary data folder; the folder lives as long as the guard.
pub async fn temp_store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let store = Store::open_in(dir.path()).await.expect("store opens");
    (dir, store)
}

/// The path of a binary of this workspace that cargo built for the test being run.
///
/// cargo-nextest names it in `NEXTEST_BIN_EXE_<name>`; under `cargo test` it sits in the
/// target folder's profile directory, one level above the test executable in `deps/`.
pub fn cargo_binary(name: &str) -> std::path::PathBuf {
    if let Some(path) = std::env::var_os(format!("NEXTEST_BIN_EXE_{name}")) {
        return path.into();
    }
    let test_executable = std::env::current_exe().expect("the test knows its own path");
    let profile_folder = test_executable
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test executable sits in <target>/<profile>/deps");
    let binary = profile_folder.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.exists(),
        "{} is not built; run the tests of the package that holds it",
        binary.display()
    );
    binary
}
