//! What a repository lists for its environment's build to reach Debian's mirror from
//! this machine through its egress gate: the mirror's name; and where the name resolves
//! here to an address that is not public (on the machines CI runs on, the mirror
//! answers at a documentation address), the name pinned to that address, as an owner
//! lists a mirror on their own network.

use std::net::ToSocketAddrs as _;

use handoff::domain::address_reach::AddressReach;

/// Debian's mirror, as the test image's `sources.list` names it.
pub const DEBIAN_MIRROR: &str = "deb.debian.org";

/// The allow-list entries that let a build's `apt-get` reach the mirror here.
pub fn debian_mirror_allowed_hosts() -> Vec<String> {
    let resolved = (DEBIAN_MIRROR, 80)
        .to_socket_addrs()
        .map(|addresses| addresses.collect::<Vec<_>>())
        .unwrap_or_default();
    let inward = resolved
        .iter()
        .find(|address| !matches!(AddressReach::of(address.ip()), AddressReach::Public));
    match inward {
        Some(address) => vec![format!("{DEBIAN_MIRROR}={}:80", address.ip())],
        None => vec![format!("{DEBIAN_MIRROR}:80")],
    }
}
