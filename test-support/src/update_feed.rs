//! A feed of app updates on this machine, as Tauri's updater reads one: a manifest
//! (`latest.json`: the version, its notes, and per platform the package's address and
//! minisign signature) and the package itself. Packages are signed with the development
//! key (`test-support/keys/`), whose public half development builds trust; a test can
//! also serve a signature of other bytes, which the app must refuse.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use base64::Engine as _;

/// The development key's secret half (minisign, unencrypted): for tests only; its
/// public half is `HANDOFF_UPDATE_PUBLIC_KEY` in `.cargo/config.toml`.
pub const DEVELOPMENT_SECRET_KEY: &str = include_str!("../keys/update-signing-development.key");

/// The signature of `bytes` for version `version`, as a manifest carries it (the
/// signature file's text, in base64), with the version in the trusted comment.
pub fn signature_of(bytes: &[u8], version: &str) -> String {
    let secret = minisign::SecretKeyBox::from_string(DEVELOPMENT_SECRET_KEY)
        .and_then(|key| key.into_unencrypted_secret_key())
        .expect("the development key reads");
    signed_with(
        &secret,
        bytes,
        version,
        "signature from the development key",
    )
}

/// A good signature of `bytes`, but by a key of its own made for it (not the one the
/// app trusts): what someone who signed a package with their own key would serve.
pub fn signature_by_another_key(bytes: &[u8], version: &str) -> String {
    let other = minisign::KeyPair::generate_unencrypted_keypair().expect("a key is made");
    signed_with(&other.sk, bytes, version, "signature from another key")
}

fn signed_with(secret: &minisign::SecretKey, bytes: &[u8], version: &str, comment: &str) -> String {
    let trusted = format!("timestamp:1764547200\tfile:Handoff.AppImage\tversion:{version}");
    let signature = minisign::sign(
        None,
        secret,
        std::io::Cursor::new(bytes),
        Some(&trusted),
        Some(comment),
    )
    .expect("the package is signed");
    base64::engine::general_purpose::STANDARD.encode(signature.into_string())
}

#[derive(Default)]
struct Served {
    manifest: serde_json::Value,
    package: Vec<u8>,
    downloads: usize,
}

/// The feed: serves `/latest.json` and `/Handoff.AppImage`.
pub struct UpdateFeed {
    address: SocketAddr,
    served: Arc<Mutex<Served>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for UpdateFeed {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn manifest(State(served): State<Arc<Mutex<Served>>>) -> axum::Json<serde_json::Value> {
    axum::Json(served.lock().expect("served").manifest.clone())
}

async fn package(State(served): State<Arc<Mutex<Served>>>) -> (StatusCode, Vec<u8>) {
    let mut served = served.lock().expect("served");
    served.downloads += 1;
    (StatusCode::OK, served.package.clone())
}

impl UpdateFeed {
    pub async fn start() -> UpdateFeed {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the update feed listens");
        let address = listener.local_addr().expect("its address");
        let served = Arc::new(Mutex::new(Served::default()));
        let router = axum::Router::new()
            .route("/latest.json", get(manifest))
            .route("/Handoff.AppImage", get(package))
            .with_state(served.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, router)
                .await
                .expect("the update feed serves");
        });
        UpdateFeed {
            address,
            served,
            server,
        }
    }

    /// The manifest's address, for the `updates.feed` setting.
    pub fn manifest_address(&self) -> String {
        format!("http://127.0.0.1:{}/latest.json", self.address.port())
    }

    /// Offers `package` as version `version`, with `signature` (see [`signature_of`]).
    pub fn offer(&self, version: &str, package: Vec<u8>, signature: String, notes: &str) {
        let platform = serde_json::json!({
            "signature": signature,
            "url": format!("http://127.0.0.1:{}/Handoff.AppImage", self.address.port()),
        });
        let mut served = self.served.lock().expect("served");
        served.manifest = serde_json::json!({
            "version": version,
            "notes": notes,
            "pub_date": "2026-12-01T00:00:00Z",
            "platforms": {
                "linux-x86_64-appimage": platform.clone(),
                "linux-x86_64-deb": platform.clone(),
                "linux-x86_64": platform,
            },
        });
        served.package = package;
    }

    /// How many times the package was downloaded.
    pub fn downloads(&self) -> usize {
        self.served.lock().expect("served").downloads
    }
}
