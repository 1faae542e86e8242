//! Fetching a dev container feature's files from where it is published: an OCI registry
//! (as `ghcr.io` serves them, by the OCI distribution API: the manifest of its tag, then
//! its feature layer, `application/vnd.devcontainers.layer.v1+tar`) or the address of
//! its `.tgz`. Public features only: a registry's anonymous pull token is asked for
//! when it answers 401, and no credential of the owner's is ever sent. A blob a
//! registry redirects to (a storage service's signed address) is fetched without the
//! registry's token, and every blob is checked against its digest.

use std::io::Read as _;

use handoff_domain::dev_container_feature::RegistryReference;
use reqwest::header::{ACCEPT, AUTHORIZATION, LOCATION, WWW_AUTHENTICATE};
use reqwest::{Client, StatusCode};
use sha2::{Digest as _, Sha256};

/// The media type of a feature's layer in its manifest.
pub const FEATURE_LAYER_MEDIA_TYPE: &str = "application/vnd.devcontainers.layer.v1+tar";
/// The media type of an OCI image manifest, which a feature's is.
pub const OCI_MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The largest feature Handoff fetches.
const MOST_FEATURE_BYTES: usize = 64 * 1024 * 1024;
/// The most redirects followed for one blob.
const MOST_REDIRECTS: usize = 5;

/// The client every fetch uses: no redirect followed on its own, so that a registry's
/// token never goes to the address it redirects to.
pub fn feature_client() -> Result<Client, String> {
    handoff_egress::http_client::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(120))
        .build()
        .map_err(|error| format!("cannot make an HTTP client: {error}"))
}

/// The feature `reference`'s files, as the tar archive its layer is.
pub async fn fetch_from_registry(
    http: &Client,
    reference: &RegistryReference,
) -> Result<Vec<u8>, String> {
    let scheme = if reference.is_on_this_machine() {
        "http"
    } else {
        "https"
    };
    let root = format!(
        "{scheme}://{}/v2/{}",
        reference.registry, reference.repository
    );
    let manifest_address = format!("{root}/manifests/{}", reference.version);
    let mut token: Option<String> = None;
    let mut answer = registry_get(http, &manifest_address, token.as_deref()).await?;
    if answer.status() == StatusCode::UNAUTHORIZED {
        token = Some(anonymous_token(http, &reference.registry, &answer).await?);
        answer = registry_get(http, &manifest_address, token.as_deref()).await?;
    }
    let manifest: serde_json::Value = match answer.status() {
        status if status.is_success() => answer.json().await.map_err(|error| {
            format!(
                "{} sent a manifest that is not JSON: {error}",
                reference.registry
            )
        })?,
        StatusCode::NOT_FOUND => {
            return Err(format!(
                "{} has no {}:{}",
                reference.registry, reference.repository, reference.version
            ))
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            return Err(format!(
                "{} gives {} only to those signed in: Handoff fetches public features only",
                reference.registry, reference.repository
            ))
        }
        status => return Err(format!("{} answered {status}", reference.registry)),
    };
    let layer = manifest["layers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|layer| layer["mediaType"] == FEATURE_LAYER_MEDIA_TYPE)
        .ok_or_else(|| {
            format!(
                "{}:{} is not a dev container feature: its manifest has no {FEATURE_LAYER_MEDIA_TYPE} layer",
                reference.repository, reference.version
            )
        })?;
    let digest = layer["digest"]
        .as_str()
        .ok_or("the feature's layer has no digest")?;
    let blob = fetch_blob(http, &format!("{root}/blobs/{digest}"), token.as_deref()).await?;
    check_digest(&blob, digest)?;
    Ok(blob)
}

/// The files of the feature whose `.tgz` is at `address`, as a tar archive.
pub async fn fetch_tarball(http: &Client, address: &str) -> Result<Vec<u8>, String> {
    let bytes = fetch_blob(http, address, None).await?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut unpacked = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .take(MOST_FEATURE_BYTES as u64 + 1)
            .read_to_end(&mut unpacked)
            .map_err(|error| format!("{address} is not a gzip archive: {error}"))?;
        if unpacked.len() > MOST_FEATURE_BYTES {
            return Err(format!(
                "{address} unpacks to more than {MOST_FEATURE_BYTES} bytes"
            ));
        }
        return Ok(unpacked);
    }
    Ok(bytes)
}

async fn registry_get(
    http: &Client,
    address: &str,
    token: Option<&str>,
) -> Result<reqwest::Response, String> {
    let mut request = http.get(address).header(ACCEPT, OCI_MANIFEST_MEDIA_TYPE);
    if let Some(token) = token {
        request = request.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    request
        .send()
        .await
        .map_err(|error| unreachable(address, &error))
}

fn unreachable(address: &str, error: &reqwest::Error) -> String {
    let host = url::Url::parse(address)
        .ok()
        .and_then(|url| {
            url.host_str().map(|host| {
                format!(
                    "{host}{}",
                    url.port().map(|p| format!(":{p}")).unwrap_or_default()
                )
            })
        })
        .unwrap_or_else(|| address.to_owned());
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        detail = format!("{detail}: {cause}");
        source = cause.source();
    }
    format!("{host} cannot be reached ({detail})")
}

/// The anonymous pull token a registry's 401 says where to ask for
/// (`WWW-Authenticate: Bearer realm="…",service="…",scope="…"`).
async fn anonymous_token(
    http: &Client,
    registry: &str,
    refused: &reqwest::Response,
) -> Result<String, String> {
    let challenge = refused
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .ok_or_else(|| {
            format!("{registry} asks to sign in, and not for a token Handoff can ask for")
        })?;
    let parameters = challenge_parameters(challenge);
    let realm = parameters
        .iter()
        .find(|(name, _)| name == "realm")
        .map(|(_, value)| value.clone())
        .ok_or_else(|| format!("{registry}'s sign-in challenge names no realm"))?;
    let mut address = url::Url::parse(&realm)
        .map_err(|error| format!("{registry}'s token service {realm:?} is no address: {error}"))?;
    for (name, value) in parameters
        .iter()
        .filter(|(name, _)| name == "service" || name == "scope")
    {
        address.query_pairs_mut().append_pair(name, value);
    }
    let answer = http
        .get(address)
        .send()
        .await
        .map_err(|error| unreachable(&realm, &error))?;
    if !answer.status().is_success() {
        return Err(format!(
            "{registry} gives no anonymous token ({}): Handoff fetches public features only",
            answer.status()
        ));
    }
    let body: serde_json::Value = answer
        .json()
        .await
        .map_err(|error| format!("{registry}'s token answer is not JSON: {error}"))?;
    body["token"]
        .as_str()
        .or_else(|| body["access_token"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| format!("{registry}'s token answer holds no token"))
}

/// The `name="value"` pairs of a challenge, in order.
fn challenge_parameters(challenge: &str) -> Vec<(String, String)> {
    let mut parameters = Vec::new();
    let mut rest = challenge.trim();
    while let Some((name, after)) = rest.split_once('=') {
        let name = name.trim().trim_start_matches(',').trim().to_owned();
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.split_once('"') {
                Some((value, after)) => (value.to_owned(), after),
                None => (quoted.to_owned(), ""),
            },
            None => match after.split_once(',') {
                Some((value, after)) => (value.to_owned(), after),
                None => (after.to_owned(), ""),
            },
        };
        parameters.push((name, value));
        rest = after.trim_start_matches(',').trim();
    }
    parameters
}

/// A blob, following redirects; the token goes to `address` only, never where it
/// redirects to.
async fn fetch_blob(http: &Client, address: &str, token: Option<&str>) -> Result<Vec<u8>, String> {
    let mut current = url::Url::parse(address).map_err(|error| format!("{address}: {error}"))?;
    let mut token = token;
    for _ in 0..=MOST_REDIRECTS {
        let mut request = http.get(current.clone());
        if let Some(token) = token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let mut answer = request
            .send()
            .await
            .map_err(|error| unreachable(current.as_str(), &error))?;
        if answer.status().is_redirection() {
            let location = answer
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or_else(|| format!("{current} redirects nowhere"))?;
            current = current
                .join(location)
                .map_err(|error| format!("{current} redirects to {location}: {error}"))?;
            token = None;
            continue;
        }
        if !answer.status().is_success() {
            return Err(format!(
                "{} answered {} for {current}",
                current.host_str().unwrap_or(""),
                answer.status()
            ));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = answer
            .chunk()
            .await
            .map_err(|error| unreachable(current.as_str(), &error))?
        {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MOST_FEATURE_BYTES {
                return Err(format!(
                    "{current} is larger than {MOST_FEATURE_BYTES} bytes"
                ));
            }
        }
        return Ok(bytes);
    }
    Err(format!(
        "{address} redirects more than {MOST_REDIRECTS} times"
    ))
}

fn check_digest(blob: &[u8], digest: &str) -> Result<(), String> {
    let expected = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| format!("the layer's digest {digest} is not a sha256"))?;
    let actual: String = Sha256::digest(blob)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if actual != expected {
        return Err(format!(
            "the feature's layer does not match its digest {digest} (it hashes to sha256:{actual})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_is_read_into_its_parameters() {
        assert_eq!(
            challenge_parameters(
                r#"realm="https://ghcr.io/token",service="ghcr.io",scope="repository:devcontainers/features/node:pull""#
            ),
            [
                ("realm".to_owned(), "https://ghcr.io/token".to_owned()),
                ("service".to_owned(), "ghcr.io".to_owned()),
                (
                    "scope".to_owned(),
                    "repository:devcontainers/features/node:pull".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_layer_that_does_not_match_its_digest_is_refused() {
        let digest = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        assert!(check_digest(b"hello", digest).is_ok());
        assert!(check_digest(b"hullo", digest).is_err());
        assert!(check_digest(b"hello", "md5:abc").is_err());
    }
}
