//! Whether this machine reaches the registry an agent image's package comes from (npm
//! for opencode, PyPI for the others): a build without it fails minutes in, so Check
//! setup says so before the owner presses Build image. Reachable means the registry's
//! name resolves and its port takes a connection; what is said over it (a network that
//! inspects TLS with an authority of its own, as some do) is the build's business.

use std::time::Duration;

/// How long the probe waits for the registry.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// `Ok` when `registry` (a URL) takes a connection; otherwise why not, in a few words.
pub async fn package_registry_reach(registry: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(registry).map_err(|error| error.to_string())?;
    let host = url
        .host_str()
        .ok_or_else(|| "the address names no host".to_owned())?
        .to_owned();
    let port = url
        .port_or_known_default()
        .ok_or_else(|| "the address names no port".to_owned())?;
    match tokio::time::timeout(PROBE_TIMEOUT, tokio::net::TcpStream::connect((host, port))).await {
        Ok(Ok(_connection)) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer in {} s", PROBE_TIMEOUT.as_secs())),
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
