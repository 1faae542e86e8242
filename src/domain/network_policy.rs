//! What a sandbox may reach on the network, per repository: nothing, only the hosts on a
//! list (the agent provider's API and what the owner adds), or everything.
//!
//! The rules about the list live here: an entry is a host name (or `*.` and a domain),
//! optionally with a port; addresses that name this machine, the link-local range (where
//! clouds answer with their instance metadata) or "any address" are never accepted, so a
//! list cannot open the way to them.

use std::net::IpAddr;

crate::stored_text_enum! {
    /// How much network a sandbox gets.
    #[derive(Default)]
    pub enum NetworkMode as "network mode" {
        /// No network at all.
        None => "none",
        /// Only the hosts on the list, through Handoff's egress proxy (the default).
        #[default]
        Allowlist => "allowlist",
        /// Everything the engine's default network reaches; chosen explicitly.
        Open => "open",
    }
}

/// One entry of a list: `host`, `host:port` or `*.domain[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllowedHost {
    /// Lower case; `*.` in front for a domain and every name under it.
    pub host: String,
    /// `None`: the web ports, 443 and 80.
    pub port: Option<u16>,
}

/// Why an entry of the list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowedHostError {
    #[error("{0:?} is not a host name (letters, digits, '-' and '.', or '*.' and a domain)")]
    NotAHostName(String),
    #[error("{0:?} has a port that is not a number from 1 to 65535")]
    BadPort(String),
    #[error("{0:?} names this machine, the link-local range or any address: never allowed")]
    Forbidden(String),
}

impl serde::Serialize for AllowedHost {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

/// Addresses no list may open: this machine, "any address", and the link-local range
/// where cloud metadata services answer.
pub fn is_forbidden_address(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xffc0) == 0xfe80
        }
    }
}

impl std::str::FromStr for AllowedHost {
    type Err = AllowedHostError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let entry = text.trim().to_ascii_lowercase();
        let (host, port) = match entry.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => {
                let port: u16 = port
                    .parse()
                    .ok()
                    .filter(|port| *port > 0)
                    .ok_or_else(|| AllowedHostError::BadPort(text.to_owned()))?;
                (host.to_owned(), Some(port))
            }
            _ => (entry.clone(), None),
        };
        if let Ok(address) = host.parse::<IpAddr>() {
            if is_forbidden_address(address) {
                return Err(AllowedHostError::Forbidden(text.to_owned()));
            }
            return Ok(AllowedHost { host, port });
        }
        if host == "localhost" || host.ends_with(".localhost") {
            return Err(AllowedHostError::Forbidden(text.to_owned()));
        }
        let name = host.strip_prefix("*.").unwrap_or(&host);
        let well_formed = !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if !well_formed {
            return Err(AllowedHostError::NotAHostName(text.to_owned()));
        }
        Ok(AllowedHost { host, port })
    }
}

impl AllowedHost {
    /// Whether a connection to `host`:`port` is on this entry.
    pub fn admits(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(own) => own == port,
            None => port == 443 || port == 80,
        };
        let host = host.to_ascii_lowercase();
        let host_ok = match self.host.strip_prefix("*.") {
            Some(domain) => host.ends_with(&format!(".{domain}")),
            None => host == self.host,
        };
        port_ok && host_ok
    }
}

/// The owner's list as stored: one entry per line. Entries are checked when they are
/// set; a stored line that no longer parses is skipped (and so allows nothing).
pub fn parse_allowed_hosts(text: &str) -> Result<Vec<AllowedHost>, AllowedHostError> {
    text.split(|c: char| c == '\n' || c == ',' || c.is_whitespace())
        .filter(|entry| !entry.trim().is_empty())
        .map(str::parse)
        .collect()
}

/// What one sandbox may reach: the mode and, for an allow-list, every host on it (the
/// agent provider's API host included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    pub mode: NetworkMode,
    pub allowed: Vec<AllowedHost>,
}

impl NetworkPolicy {
    /// Whether a connection to `host`:`port` may go out.
    pub fn admits(&self, host: &str, port: u16) -> bool {
        match self.mode {
            NetworkMode::None => false,
            NetworkMode::Open => true,
            NetworkMode::Allowlist => self.allowed.iter().any(|entry| entry.admits(host, port)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_address_and_this_machine_can_never_be_listed() {
        for entry in [
            "169.254.169.254",
            "169.254.169.254:80",
            "127.0.0.1:8080",
            "localhost",
            "api.localhost",
            "0.0.0.0",
            "[::1]",
            "::1",
            "fe80::1",
        ] {
            let refused = entry.parse::<AllowedHost>();
            assert!(
                matches!(
                    refused,
                    Err(AllowedHostError::Forbidden(_) | AllowedHostError::NotAHostName(_))
                ),
                "{entry} was accepted: {refused:?}"
            );
        }
        assert!(is_forbidden_address("169.254.169.254".parse().unwrap()));
    }

    #[test]
    fn entries_admit_their_host_and_ports_only() {
        let api: AllowedHost = "API.Anthropic.com".parse().unwrap();
        assert!(api.admits("api.anthropic.com", 443));
        assert!(!api.admits("api.anthropic.com", 22));
        assert!(!api.admits("evil-api.anthropic.com", 443));
        let registry: AllowedHost = "*.pypi.org:8443".parse().unwrap();
        assert!(registry.admits("files.pypi.org", 8443));
        assert!(!registry.admits("pypi.org", 8443));
        assert!(!registry.admits("files.pypi.org", 443));
        assert_eq!(registry.to_string(), "*.pypi.org:8443");
    }

    #[test]
    fn a_bad_entry_is_named() {
        assert_eq!(
            "exa mple".parse::<AllowedHost>(),
            Err(AllowedHostError::NotAHostName("exa mple".to_owned()))
        );
        assert_eq!(
            "example.org:0".parse::<AllowedHost>(),
            Err(AllowedHostError::BadPort("example.org:0".to_owned()))
        );
        assert_eq!(
            parse_allowed_hosts("a.example\nb.example:8080, *.c.example")
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn the_modes_admit_nothing_the_list_or_everything() {
        let policy = |mode| NetworkPolicy {
            mode,
            allowed: vec!["registry.npmjs.org".parse().unwrap()],
        };
        assert!(!policy(NetworkMode::None).admits("registry.npmjs.org", 443));
        assert!(policy(NetworkMode::Allowlist).admits("registry.npmjs.org", 443));
        assert!(!policy(NetworkMode::Allowlist).admits("example.org", 443));
        assert!(policy(NetworkMode::Open).admits("example.org", 443));
    }
}
