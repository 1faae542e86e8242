//! The one way the core makes an HTTP client (E2B's API, the key forwarder's calls to a
//! model provider): reqwest on rustls, with ring as the process's crypto provider, as
//! octocrab and the desktop's updater use them, so that one TLS stack serves every
//! request; certificates are checked against the operating system's store.

use std::sync::Once;

/// Makes ring the process's rustls crypto provider, once. Another provider installed
/// first (by a library, say) is kept: either serves.
pub fn install_crypto_provider() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        if rustls::crypto::ring::default_provider()
            .install_default()
            .is_err()
        {
            tracing::debug!("a rustls crypto provider was installed already; it is kept");
        }
    });
}

/// A client builder with the crypto provider in place.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
}

/// A client with reqwest's defaults.
pub fn default_client() -> reqwest::Client {
    install_crypto_provider();
    reqwest::Client::new()
}
