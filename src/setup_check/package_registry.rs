//! Whether this machine reaches the registry an agent image's package comes from (npm
//! for opencode, PyPI for the others): a build without it fails minutes in, so Check
//! setup says so before the owner presses Build image. Reachable means the host
//! answered at all (any HTTP status, or a TLS handshake this probe does not trust);
//! only a name that does not resolve, a refused connection or silence count as not.

use std::time::Duration;

/// How long the probe waits for the registry.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// `Ok` when `registry` (a URL) answers; otherwise why not, in a few words.
pub async fn package_registry_reach(registry: &str) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| error.to_string())?;
    match client.head(registry).send().await {
        Ok(_) => Ok(()),
        Err(error) if error.is_connect() || error.is_timeout() => {
            // The cause names what failed (no such name, refused), not the URL again.
            let mut cause: &dyn std::error::Error = &error;
            while let Some(source) = cause.source() {
                cause = source;
            }
            Err(if error.is_timeout() {
                format!("no answer in {} s", PROBE_TIMEOUT.as_secs())
            } else {
                cause.to_string()
            })
        }
        Err(error) => {
            tracing::debug!(%registry, error = %error.without_url(), "the package registry answered, though not as expected");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_registry_that_answers_is_reachable_whatever_it_says() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let router =
            axum::Router::new().fallback(|| async { (axum::http::StatusCode::FORBIDDEN, "no") });
        let server = tokio::spawn(async move { axum::serve(listener, router).await });
        assert_eq!(
            package_registry_reach(&format!("http://{address}/")).await,
            Ok(())
        );
        server.abort();
    }

    #[tokio::test]
    async fn a_refused_connection_or_an_unknown_name_is_not() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let refused = package_registry_reach(&format!("http://{address}/")).await;
        assert!(refused.is_err(), "{refused:?}");
        let unknown = package_registry_reach("http://registry.handoff.invalid/").await;
        assert!(unknown.is_err(), "{unknown:?}");
    }
}
