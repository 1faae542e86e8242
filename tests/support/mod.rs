//! Support code shared by the integration tests: temporary stores and seeded data.
// Each test crate uses a different part of the support code.
#![allow(dead_code, unused_imports)]

pub mod cli_process;
pub mod docker_images;
pub mod fake_e2b;
pub mod fake_github;
pub mod openapi_schema;
pub mod pipeline_world;
pub mod qa_directives;
pub mod raw_http;
pub mod secret_service;
pub mod seed;

use handoff::Store;
use tempfile::TempDir;

/// A store in a fresh temporary data folder; the folder lives as long as the guard.
pub async fn temp_store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let store = Store::open_in(dir.path()).await.expect("store opens");
    (dir, store)
}
