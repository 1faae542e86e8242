//! Where Handoff may send a secret: GitHub's API and git host (the token), E2B's API (its
//! key). Such an address must be `https`, or plain `http` only to this machine
//! (loopback: the fakes of the tests, a local proxy), so that no setting can send a
//! secret across a network in clear text.

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressRefusal {
    #[error("{0:?} is not an http(s) address")]
    NotHttp(String),
    #[error(
        "{0:?} is plain http to another machine: secrets go only over https (or to this machine)"
    )]
    PlainHttpElsewhere(String),
}

/// The host of an `http(s)://host[:port]/…` address, without the port (an IPv6
/// address without its brackets), read as a browser reads it (the WHATWG URL standard,
/// the `url` crate): `http://a.example\@127.0.0.1` is `a.example`.
pub fn host_of(address: &str) -> Option<String> {
    let parsed = url::Url::parse(address.trim()).ok()?;
    match parsed.host()? {
        url::Host::Domain(name) => Some(name.to_owned()),
        url::Host::Ipv4(v4) => Some(v4.to_string()),
        url::Host::Ipv6(v6) => Some(v6.to_string()),
    }
}

/// The host and port (when not the scheme's own) of an address: what keyring entries
/// of secrets sent there are named by.
pub fn authority_of(address: &str) -> Option<String> {
    let parsed = url::Url::parse(address.trim()).ok()?;
    let host = match parsed.host()? {
        url::Host::Domain(name) => name.to_owned(),
        url::Host::Ipv4(v4) => v4.to_string(),
        url::Host::Ipv6(v6) => format!("[{v6}]"),
    };
    Some(match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// Whether `address` names this machine (loopback).
fn names_this_machine(address: &url::Url) -> bool {
    match address.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(v4)) => v4.is_loopback(),
        Some(url::Host::Ipv6(v6)) => v6.is_loopback(),
        None => false,
    }
}

/// Checks that a secret may be sent to `address`.
pub fn check_secret_address(address: &str) -> Result<(), AddressRefusal> {
    let trimmed = address.trim();
    let not_http = || AddressRefusal::NotHttp(trimmed.to_owned());
    let parsed = url::Url::parse(trimmed).map_err(|_| not_http())?;
    if parsed.host().is_none() || !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(not_http());
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if names_this_machine(&parsed) => Ok(()),
        "http" => Err(AddressRefusal::PlainHttpElsewhere(trimmed.to_owned())),
        _ => Err(not_http()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_go_over_https_or_to_this_machine_only() {
        for allowed in [
            "https://api.github.com",
            "https://git.example.com/api/v3",
            "http://127.0.0.1:4000",
            "http://localhost:8080/x",
            "http://[::1]:9000",
            "HTTP://LOCALHOST:80",
        ] {
            assert_eq!(check_secret_address(allowed), Ok(()), "{allowed}");
        }
        for refused in [
            "http://api.github.com",
            "http://10.0.0.5",
            "http://127.0.0.1.evil.example",
            "http://localhost@evil.example",
            "http://evil.example\\@127.0.0.1",
            "http://evil.example\\@127.0.0.1:4000/v1",
            "http://user:pass@127.0.0.1",
            "ftp://x",
            "api.github.com",
            "https://",
        ] {
            assert!(check_secret_address(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn the_host_is_read_as_a_browser_reads_it() {
        assert_eq!(
            host_of("https://API.example.com:8443/v1").as_deref(),
            Some("api.example.com")
        );
        assert_eq!(
            host_of("http://evil.example\\@127.0.0.1").as_deref(),
            Some("evil.example")
        );
        assert_eq!(host_of("http://[::1]:9000").as_deref(), Some("::1"));
        assert_eq!(host_of("no address"), None);
    }
}
