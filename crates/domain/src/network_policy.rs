//! What a sandbox may reach on the network, per repository: nothing, only the hosts on a
//! list (the agent provider's API and what the owner adds), or everything.
//!
//! The rules about the list live here: an entry is a host name (or `*.` and a domain),
//! or an address, optionally with a port; addresses that are never reached (this
//! machine, the link-local range where clouds answer with their instance metadata, "any
//! address", multicast: see [`AddressReach`]) are never accepted, so a list cannot open
//! the way to them.
//!
//! And how a connection is judged, in two steps: the name or address asked for must be
//! admitted by the mode and the list, and then every address it resolves to must be
//! public. A private address (the owner's networks, a container network's gateway) is
//! reached only when the owner listed that very address; a name never leads to one.

use std::net::IpAddr;

use super::address_reach::AddressReach;

crate::stored_text_enum! {
    /// How much network a sandbox gets.
    #[derive(Default)]
    pub enum NetworkMode as "network mode" {
        /// No network at all.
        None => "none",
        /// Only the hosts on the list, through Handoff's egress proxy (the default).
        #[default]
        Allowlist => "allowlist",
        /// Any public address, through Handoff's egress gate; never this machine, its
        /// networks or the metadata address. Chosen explicitly.
        Open => "open",
    }
}

/// One entry of a list: `host`, `host:port` or `*.domain[:port]`; or a name pinned to an
/// address of the owner's own network, `name=address[:port]` (a package mirror there).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllowedHost {
    /// Lower case; `*.` in front for a domain and every name under it.
    pub host: String,
    /// `None`: the web ports, 443 and 80.
    pub port: Option<u16>,
    /// For a name pinned to an address: that address, the one place the name may lead
    /// even when it is not public.
    pub pinned: Option<IpAddr>,
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
    #[error("{0:?} pins a name to something that is not an address (name=10.0.0.5:80)")]
    BadPin(String),
}

impl serde::Serialize for AllowedHost {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.host)?;
        match self.pinned {
            Some(IpAddr::V6(v6)) => write!(f, "=[{v6}]")?,
            Some(IpAddr::V4(v4)) => write!(f, "={v4}")?,
            None => {}
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// Addresses no list may open: this machine, "any address", the link-local range where
/// cloud metadata services answer, multicast (see [`AddressReach`]).
pub fn is_forbidden_address(address: IpAddr) -> bool {
    matches!(AddressReach::of(address), AddressReach::Never(_))
}

impl std::str::FromStr for AllowedHost {
    type Err = AllowedHostError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let entry = text.trim().to_ascii_lowercase();
        if let Some((name, place)) = entry.split_once('=') {
            return pinned_entry(text, name, place);
        }
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
            return Ok(AllowedHost {
                host,
                port,
                pinned: None,
            });
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
        Ok(AllowedHost {
            host,
            port,
            pinned: None,
        })
    }
}

/// `name=address[:port]`: a host name (no wildcard) pinned to an address that may be
/// reached (not this machine, the metadata range or any address).
fn pinned_entry(text: &str, name: &str, place: &str) -> Result<AllowedHost, AllowedHostError> {
    let (address, port) = match place.strip_prefix('[') {
        Some(bracketed) => {
            let (address, rest) = bracketed
                .split_once(']')
                .ok_or_else(|| AllowedHostError::BadPin(text.to_owned()))?;
            (address, rest.strip_prefix(':'))
        }
        None => match place.split_once(':') {
            Some((address, port)) => (address, Some(port)),
            None => (place, None),
        },
    };
    let address: IpAddr = address
        .parse()
        .map_err(|_| AllowedHostError::BadPin(text.to_owned()))?;
    if is_forbidden_address(address) {
        return Err(AllowedHostError::Forbidden(text.to_owned()));
    }
    let named: AllowedHost = match port {
        Some(port) => format!("{name}:{port}").parse()?,
        None => name.parse()?,
    };
    if named.host.starts_with("*.") || named.host.parse::<IpAddr>().is_ok() {
        return Err(AllowedHostError::BadPin(text.to_owned()));
    }
    Ok(AllowedHost {
        pinned: Some(address),
        ..named
    })
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

/// Where a client asked to go: a host name (lower case, without a trailing dot) or an
/// address written as one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    Name(String),
    Address(IpAddr),
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Destination::Name(name) => f.write_str(name),
            Destination::Address(IpAddr::V6(v6)) => write!(f, "[{v6}]"),
            Destination::Address(IpAddr::V4(v4)) => write!(f, "{v4}"),
        }
    }
}

/// Why a connection out of a sandbox is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressRefusal {
    #[error("the sandbox has no network")]
    NoNetwork,
    #[error("{destination}:{port} is not on the repository's list")]
    NotListed { destination: Destination, port: u16 },
    #[error("{destination} resolves to {address}, {kind}, which a host name never leads to")]
    NameLeadsInward {
        destination: Destination,
        address: IpAddr,
        kind: &'static str,
    },
    #[error("{address} is {kind}, reached only when the repository's list names it")]
    AddressNotPublic { address: IpAddr, kind: &'static str },
    #[error("{address} is {kind}: never reached from a sandbox")]
    NeverReached { address: IpAddr, kind: &'static str },
    #[error("{address} is an address of the machine the sandbox runs on")]
    ThisMachine { address: IpAddr },
}

impl AllowedHost {
    /// Whether this entry names `address` itself (with the port), as opposed to a name.
    pub fn names_address(&self, address: IpAddr, port: u16) -> bool {
        let port_ok = match self.port {
            Some(own) => own == port,
            None => port == 443 || port == 80,
        };
        port_ok
            && self
                .host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|own| canonical(own) == canonical(address))
    }
}

/// An IPv4 address written in IPv6's mapped form is that IPv4 address.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

impl NetworkPolicy {
    /// Whether a connection to `host`:`port` may go out, by the name alone.
    pub fn admits(&self, host: &str, port: u16) -> bool {
        match self.mode {
            NetworkMode::None => false,
            NetworkMode::Open => true,
            NetworkMode::Allowlist => self.allowed.iter().any(|entry| entry.admits(host, port)),
        }
    }

    /// The first step of judging a connection: whether the name or address asked for
    /// may be reached at all, before anything is resolved.
    pub fn admits_destination(
        &self,
        destination: &Destination,
        port: u16,
    ) -> Result<(), EgressRefusal> {
        let listed = match destination {
            Destination::Name(name) => self.allowed.iter().any(|entry| entry.admits(name, port)),
            Destination::Address(address) => self
                .allowed
                .iter()
                .any(|entry| entry.names_address(*address, port)),
        };
        match self.mode {
            NetworkMode::None => Err(EgressRefusal::NoNetwork),
            NetworkMode::Open => Ok(()),
            NetworkMode::Allowlist if listed => Ok(()),
            NetworkMode::Allowlist => Err(EgressRefusal::NotListed {
                destination: destination.clone(),
                port,
            }),
        }
    }

    /// The second step: whether `address`, which `destination` resolved to (an address
    /// asked for resolves to itself), may be connected to. `this_machine` holds the
    /// addresses of the machine the sandbox runs on.
    pub fn admits_address(
        &self,
        destination: &Destination,
        port: u16,
        address: IpAddr,
        this_machine: &[IpAddr],
    ) -> Result<(), EgressRefusal> {
        self.admits_destination(destination, port)?;
        let address = canonical(address);
        let reach = AddressReach::of(address);
        if let AddressReach::Never(kind) = reach {
            return Err(EgressRefusal::NeverReached { address, kind });
        }
        // The owner named this very address: a private one of theirs may be reached,
        // asked for by that address, or by a name the owner pinned to it.
        let listed_by_address = match destination {
            Destination::Address(asked) => {
                canonical(*asked) == address
                    && self
                        .allowed
                        .iter()
                        .any(|entry| entry.names_address(address, port))
            }
            Destination::Name(name) => self.allowed.iter().any(|entry| {
                entry.admits(name, port)
                    && entry
                        .pinned
                        .is_some_and(|pinned| canonical(pinned) == address)
            }),
        };
        if listed_by_address {
            return Ok(());
        }
        if this_machine.iter().any(|own| canonical(*own) == address) {
            return Err(EgressRefusal::ThisMachine { address });
        }
        match (reach, destination) {
            (AddressReach::Public, _) => Ok(()),
            (AddressReach::Private(kind), Destination::Name(_)) => {
                Err(EgressRefusal::NameLeadsInward {
                    destination: destination.clone(),
                    address,
                    kind,
                })
            }
            (AddressReach::Private(kind), Destination::Address(_)) => {
                Err(EgressRefusal::AddressNotPublic { address, kind })
            }
            (AddressReach::Never(kind), _) => Err(EgressRefusal::NeverReached { address, kind }),
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

    fn allowlist(entries: &str) -> NetworkPolicy {
        NetworkPolicy {
            mode: NetworkMode::Allowlist,
            allowed: parse_allowed_hosts(entries).unwrap(),
        }
    }

    fn name(text: &str) -> Destination {
        Destination::Name(text.to_owned())
    }

    fn address(text: &str) -> Destination {
        Destination::Address(text.parse().unwrap())
    }

    #[test]
    fn a_listed_name_is_reached_only_at_public_addresses() {
        let policy = allowlist("api.example.org:443");
        let asked = name("api.example.org");
        assert_eq!(policy.admits_destination(&asked, 443), Ok(()));
        assert_eq!(
            policy.admits_address(&asked, 443, "93.184.216.34".parse().unwrap(), &[]),
            Ok(())
        );
        for inward in ["172.17.0.1", "10.0.0.5", "192.168.1.1", "fd00::1"] {
            assert!(
                matches!(
                    policy.admits_address(&asked, 443, inward.parse().unwrap(), &[]),
                    Err(EgressRefusal::NameLeadsInward { .. })
                ),
                "{inward}"
            );
        }
        for never in ["127.0.0.1", "169.254.169.254", "::1", "::ffff:127.0.0.1"] {
            assert!(
                matches!(
                    policy.admits_address(&asked, 443, never.parse().unwrap(), &[]),
                    Err(EgressRefusal::NeverReached { .. })
                ),
                "{never}"
            );
        }
        assert!(matches!(
            policy.admits_destination(&name("other.example.org"), 443),
            Err(EgressRefusal::NotListed { .. })
        ));
        assert!(matches!(
            policy.admits_destination(&asked, 8443),
            Err(EgressRefusal::NotListed { .. })
        ));
    }

    #[test]
    fn a_name_pinned_to_an_address_of_the_owners_network_reaches_it_and_nothing_else() {
        let policy = allowlist("mirror.internal=10.0.0.5:80\napi.example.org:443");
        let mirror = name("mirror.internal");
        assert_eq!(
            policy.admits_address(&mirror, 80, "10.0.0.5".parse().unwrap(), &[]),
            Ok(())
        );
        // Resolving anywhere else inward, or asked for at another port, it is refused;
        // an unpinned listed name still never leads inward.
        assert!(matches!(
            policy.admits_address(&mirror, 80, "10.0.0.6".parse().unwrap(), &[]),
            Err(EgressRefusal::NameLeadsInward { .. })
        ));
        assert!(matches!(
            policy.admits_destination(&mirror, 443),
            Err(EgressRefusal::NotListed { .. })
        ));
        assert!(matches!(
            policy.admits_address(
                &name("api.example.org"),
                443,
                "10.0.0.5".parse().unwrap(),
                &[]
            ),
            Err(EgressRefusal::NameLeadsInward { .. })
        ));
        // The entry reads back as written; IPv6 in brackets.
        let entries =
            parse_allowed_hosts("Mirror.Internal=10.0.0.5:80\nm6.internal=[fd00::5]:8080").unwrap();
        assert_eq!(entries[0].to_string(), "mirror.internal=10.0.0.5:80");
        assert_eq!(entries[1].to_string(), "m6.internal=[fd00::5]:8080");
        assert_eq!(
            entries[1].to_string().parse::<AllowedHost>().unwrap(),
            entries[1]
        );
    }

    #[test]
    fn a_pin_to_no_address_a_wildcard_or_a_never_reached_address_is_refused() {
        for (entry, expected) in [
            ("mirror.internal=mirror2.internal", "pins a name"),
            ("*.internal=10.0.0.5", "pins a name"),
            ("10.0.0.4=10.0.0.5", "pins a name"),
            ("cloud.internal=169.254.169.254:80", "never allowed"),
            ("self.internal=127.0.0.1", "never allowed"),
            ("mirror.internal=10.0.0.5:0", "not a number"),
        ] {
            let refused = entry.parse::<AllowedHost>().unwrap_err().to_string();
            assert!(refused.contains(expected), "{entry}: {refused}");
        }
    }

    #[test]
    fn a_private_address_is_reached_only_when_listed_as_that_address() {
        let policy = allowlist("172.17.0.1:8080");
        let gateway = address("172.17.0.1");
        let machine: Vec<IpAddr> = vec!["172.17.0.1".parse().unwrap()];
        assert_eq!(
            policy.admits_address(&gateway, 8080, "172.17.0.1".parse().unwrap(), &machine),
            Ok(())
        );
        assert!(policy
            .admits_address(&gateway, 8081, "172.17.0.1".parse().unwrap(), &machine)
            .is_err());
        assert!(matches!(
            policy.admits_destination(&address("172.17.0.2"), 8080),
            Err(EgressRefusal::NotListed { .. })
        ));
        // The mapped form is the same address, and is judged the same way.
        assert_eq!(
            policy.admits_destination(&address("::ffff:172.17.0.1"), 8080),
            Ok(())
        );
    }

    #[test]
    fn open_means_the_internet_not_this_machine_or_its_neighbours() {
        let policy = NetworkPolicy {
            mode: NetworkMode::Open,
            allowed: Vec::new(),
        };
        let public: IpAddr = "8.8.8.8".parse().unwrap();
        assert_eq!(
            policy.admits_address(&name("anything.example"), 22, public, &[]),
            Ok(())
        );
        assert!(matches!(
            policy.admits_address(
                &address("172.17.0.1"),
                80,
                "172.17.0.1".parse().unwrap(),
                &[]
            ),
            Err(EgressRefusal::AddressNotPublic { .. })
        ));
        assert!(matches!(
            policy.admits_address(
                &address("169.254.169.254"),
                80,
                "169.254.169.254".parse().unwrap(),
                &[]
            ),
            Err(EgressRefusal::NeverReached { .. })
        ));
        // A public address of the machine itself is refused too.
        assert_eq!(
            policy.admits_address(&name("me.example"), 443, public, &[public]),
            Err(EgressRefusal::ThisMachine { address: public })
        );
        let none = NetworkPolicy {
            mode: NetworkMode::None,
            allowed: Vec::new(),
        };
        assert_eq!(
            none.admits_destination(&name("a.example"), 443),
            Err(EgressRefusal::NoNetwork)
        );
    }
}
