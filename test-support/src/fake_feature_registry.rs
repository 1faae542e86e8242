//! A fake OCI registry serving dev container features the way `ghcr.io` does, by the
//! OCI distribution API: a manifest (`application/vnd.oci.image.manifest.v1+json`, an
//! empty config of type `application/vnd.devcontainers`, an empty layer, then the
//! feature's `application/vnd.devcontainers.layer.v1+tar` layer) under its tag and its
//! digest, and each blob by its digest.
//!
//! It refuses what the real one refuses:
//! - anything without a bearer token answers 401 with a `WWW-Authenticate` challenge
//!   naming the token service, which gives anonymous pull tokens for one repository;
//! - a token works for the repository it was given for only;
//! - a manifest asked for without its media type in `Accept` is not found;
//! - a blob is redirected to a storage service on another address (as ghcr.io sends
//!   them to its package storage), which refuses a request carrying an
//!   `Authorization` header beside its signed address.
//!
//! The storage service also serves features as `.tgz` files at an address of their own.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest as _, Sha256};

const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const FEATURE_LAYER_TYPE: &str = "application/vnd.devcontainers.layer.v1+tar";
const EMPTY_DIGEST: &str =
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// One request the registry or its storage answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryRequest {
    pub path: String,
    pub had_authorization: bool,
    pub status: u16,
}

#[derive(Default)]
struct Registry {
    /// (repository, tag or manifest digest) → the manifest's bytes.
    manifests: HashMap<(String, String), Vec<u8>>,
    blobs: HashMap<String, Vec<u8>>,
    /// Token → the repository it gives pulls of.
    tokens: HashMap<String, String>,
    /// File name → a feature's `.tgz`, on the storage service.
    tarballs: HashMap<String, Vec<u8>>,
    requests: Vec<RegistryRequest>,
    next_token: u64,
}

#[derive(Clone)]
struct Shared {
    registry: Arc<Mutex<Registry>>,
    address: SocketAddr,
    storage: SocketAddr,
}

/// The registry and its storage service, each on an address of its own.
pub struct FakeFeatureRegistry {
    shared: Shared,
    servers: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for FakeFeatureRegistry {
    fn drop(&mut self) {
        for server in &self.servers {
            server.abort();
        }
    }
}

fn digest_of(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The files of a feature (path, text, mode) as a tar archive, as `devcontainer
/// features package` lays them out (each under `./`).
pub fn feature_archive(files: &[(&str, &str, u32)]) -> Vec<u8> {
    let mut archive = tar::Builder::new(Vec::new());
    for (path, text, mode) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(*mode);
        header.set_mtime(0);
        header.set_cksum();
        archive
            .append_data(&mut header, format!("./{path}"), text.as_bytes())
            .expect("a feature's file is packed");
    }
    archive.into_inner().expect("the feature is packed")
}

impl FakeFeatureRegistry {
    pub async fn start() -> FakeFeatureRegistry {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the registry listens");
        let storage_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the storage service listens");
        let shared = Shared {
            registry: Arc::default(),
            address: listener.local_addr().expect("its address"),
            storage: storage_listener.local_addr().expect("its address"),
        };
        let registry = axum::Router::new()
            .route("/token", get(token))
            .route("/v2/{*rest}", get(distribution))
            .with_state(shared.clone());
        let storage = axum::Router::new()
            .route("/blobs/{digest}", get(stored_blob))
            .route("/releases/{file}", get(tarball))
            .with_state(shared.clone());
        let servers = vec![
            tokio::spawn(async move {
                axum::serve(listener, registry)
                    .await
                    .expect("the registry serves");
            }),
            tokio::spawn(async move {
                axum::serve(storage_listener, storage)
                    .await
                    .expect("the storage service serves");
            }),
        ];
        FakeFeatureRegistry { shared, servers }
    }

    /// The registry's host and port, as a feature's reference starts.
    pub fn host(&self) -> String {
        self.shared.address.to_string()
    }

    /// Publishes a feature's files as `repository:tag`; returns its reference.
    pub fn publish(&self, repository: &str, tag: &str, files: &[(&str, &str, u32)]) -> String {
        let layer = feature_archive(files);
        let layer_digest = digest_of(&layer);
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": { "mediaType": "application/vnd.devcontainers", "digest": EMPTY_DIGEST, "size": 0 },
            "layers": [
                { "mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": EMPTY_DIGEST, "size": 0 },
                {
                    "mediaType": FEATURE_LAYER_TYPE,
                    "digest": layer_digest,
                    "size": layer.len(),
                    "annotations": { "org.opencontainers.image.title": format!("devcontainer-feature-{tag}.tgz") },
                },
            ],
            "annotations": { "com.github.package.type": "devcontainer_feature" },
        });
        let manifest = serde_json::to_vec(&manifest).expect("the manifest is JSON");
        let mut registry = self.shared.registry.lock().expect("registry");
        registry.blobs.insert(layer_digest, layer);
        registry.blobs.insert(EMPTY_DIGEST.to_owned(), Vec::new());
        let manifest_digest = digest_of(&manifest);
        for reference in [tag.to_owned(), manifest_digest] {
            registry
                .manifests
                .insert((repository.to_owned(), reference), manifest.clone());
        }
        format!("{}/{repository}:{tag}", self.host())
    }

    /// Offers a feature's files as a gzipped `.tgz` on the storage service; returns its
    /// address.
    pub fn offer_tarball(&self, file: &str, files: &[(&str, &str, u32)]) -> String {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gzip.write_all(&feature_archive(files))
            .expect("the tarball is compressed");
        let bytes = gzip.finish().expect("the tarball is compressed");
        let mut registry = self.shared.registry.lock().expect("registry");
        registry.tarballs.insert(file.to_owned(), bytes);
        format!("http://{}/releases/{file}", self.shared.storage)
    }

    /// Every request answered, in order.
    pub fn requests(&self) -> Vec<RegistryRequest> {
        self.shared
            .registry
            .lock()
            .expect("registry")
            .requests
            .clone()
    }
}

fn note(shared: &Shared, path: String, headers: &HeaderMap, status: StatusCode) {
    shared
        .registry
        .lock()
        .expect("registry")
        .requests
        .push(RegistryRequest {
            path,
            had_authorization: headers.contains_key(header::AUTHORIZATION),
            status: status.as_u16(),
        });
}

fn errors(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({ "errors": [{ "code": code, "message": message }] });
    (status, axum::Json(body)).into_response()
}

async fn token(
    State(shared): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let repository = query
        .get("scope")
        .and_then(|scope| scope.strip_prefix("repository:"))
        .and_then(|scope| scope.strip_suffix(":pull"))
        .map(str::to_owned);
    let service_matches = query.get("service") == Some(&shared.address.to_string());
    let Some(repository) = repository.filter(|_| service_matches) else {
        note(&shared, "/token".into(), &headers, StatusCode::BAD_REQUEST);
        return errors(
            StatusCode::BAD_REQUEST,
            "DENIED",
            "scope or service not recognised",
        );
    };
    let mut registry = shared.registry.lock().expect("registry");
    registry.next_token += 1;
    let token = format!("anonymous-{}", registry.next_token);
    registry.tokens.insert(token.clone(), repository);
    registry.requests.push(RegistryRequest {
        path: "/token".into(),
        had_authorization: headers.contains_key(header::AUTHORIZATION),
        status: 200,
    });
    axum::Json(serde_json::json!({ "token": token })).into_response()
}

async fn distribution(
    State(shared): State<Shared>,
    Path(rest): Path<String>,
    headers: HeaderMap,
) -> Response {
    let path = format!("/v2/{rest}");
    let (repository, kind, reference) = match rest
        .rsplit_once("/manifests/")
        .map(|(name, reference)| (name, "manifests", reference))
        .or_else(|| {
            rest.rsplit_once("/blobs/")
                .map(|(name, digest)| (name, "blobs", digest))
        }) {
        Some(parts) => parts,
        None => {
            note(&shared, path, &headers, StatusCode::NOT_FOUND);
            return errors(StatusCode::NOT_FOUND, "NAME_UNKNOWN", "no such route");
        }
    };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let allowed = token.is_some_and(|token| {
        shared.registry.lock().expect("registry").tokens.get(token) == Some(&repository.to_owned())
    });
    if !allowed {
        note(&shared, path, &headers, StatusCode::UNAUTHORIZED);
        let challenge = format!(
            r#"Bearer realm="http://{0}/token",service="{0}",scope="repository:{repository}:pull""#,
            shared.address
        );
        let mut answer = errors(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "authentication required",
        );
        answer.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            challenge.parse().expect("a header"),
        );
        return answer;
    }
    if kind == "blobs" {
        let known = shared
            .registry
            .lock()
            .expect("registry")
            .blobs
            .contains_key(reference);
        if !known {
            note(&shared, path, &headers, StatusCode::NOT_FOUND);
            return errors(
                StatusCode::NOT_FOUND,
                "BLOB_UNKNOWN",
                "blob unknown to registry",
            );
        }
        note(&shared, path, &headers, StatusCode::TEMPORARY_REDIRECT);
        let location = format!(
            "http://{}/blobs/{reference}?signature=signed",
            shared.storage
        );
        return (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, location)],
        )
            .into_response();
    }
    let accepts = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains(MANIFEST_TYPE));
    let manifest = shared
        .registry
        .lock()
        .expect("registry")
        .manifests
        .get(&(repository.to_owned(), reference.to_owned()))
        .cloned();
    match manifest.filter(|_| accepts) {
        Some(manifest) => {
            note(&shared, path, &headers, StatusCode::OK);
            let digest = digest_of(&manifest);
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, MANIFEST_TYPE.to_owned()),
                    (
                        header::HeaderName::from_static("docker-content-digest"),
                        digest,
                    ),
                ],
                manifest,
            )
                .into_response()
        }
        None => {
            note(&shared, path, &headers, StatusCode::NOT_FOUND);
            errors(
                StatusCode::NOT_FOUND,
                "MANIFEST_UNKNOWN",
                "manifest unknown",
            )
        }
    }
}

async fn stored_blob(
    State(shared): State<Shared>,
    Path(digest): Path<String>,
    headers: HeaderMap,
) -> Response {
    let path = format!("/blobs/{digest}");
    // A signed address carries its own authority; a second one is refused, as storage
    // services do.
    if headers.contains_key(header::AUTHORIZATION) {
        note(&shared, path, &headers, StatusCode::BAD_REQUEST);
        return (StatusCode::BAD_REQUEST, "Only one auth mechanism allowed").into_response();
    }
    let blob = shared
        .registry
        .lock()
        .expect("registry")
        .blobs
        .get(&digest)
        .cloned();
    match blob {
        Some(blob) => {
            note(&shared, path, &headers, StatusCode::OK);
            (StatusCode::OK, blob).into_response()
        }
        None => {
            note(&shared, path, &headers, StatusCode::NOT_FOUND);
            StatusCode::NOT_FOUND.into_response()
        }
    }
}

async fn tarball(
    State(shared): State<Shared>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    let bytes = shared
        .registry
        .lock()
        .expect("registry")
        .tarballs
        .get(&file)
        .cloned();
    let status = if bytes.is_some() {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    note(&shared, format!("/releases/{file}"), &headers, status);
    match bytes {
        Some(bytes) => (StatusCode::OK, bytes).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
