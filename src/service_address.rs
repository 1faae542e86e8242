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

/// The host of an `http(s)://host[:port]/…` address, without the port.
pub fn host_of(address: &str) -> Option<&str> {
    let rest = address.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if let Some(bracketed) = authority.strip_prefix('[') {
        return bracketed.split_once(']').map(|(host, _)| host);
    }
    Some(authority.split(':').next().unwrap_or(authority))
}

/// Whether `host` is this machine.
pub fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Checks that a secret may be sent to `address`.
pub fn check_secret_address(address: &str) -> Result<(), AddressRefusal> {
    let trimmed = address.trim();
    let (scheme, _) = trimmed
        .split_once("://")
        .ok_or_else(|| AddressRefusal::NotHttp(trimmed.to_owned()))?;
    let host = host_of(trimmed)
        .filter(|host| !host.is_empty())
        .ok_or_else(|| AddressRefusal::NotHttp(trimmed.to_owned()))?;
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(()),
        "http" if is_loopback(host) => Ok(()),
        "http" => Err(AddressRefusal::PlainHttpElsewhere(trimmed.to_owned())),
        _ => Err(AddressRefusal::NotHttp(trimmed.to_owned())),
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
        ] {
            assert_eq!(check_secret_address(allowed), Ok(()), "{allowed}");
        }
        for refused in [
            "http://api.github.com",
            "http://10.0.0.5",
            "http://127.0.0.1.evil.example",
            "http://localhost@evil.example",
            "ftp://x",
            "api.github.com",
            "https://",
        ] {
            assert!(check_secret_address(refused).is_err(), "{refused}");
        }
    }
}
