//! Addresses around a gate: the proxy and the key forwarder as the sandbox reaches
//! them, a provider on this machine's loopback as the gate reaches it, and this
//! machine's own addresses, which no sandbox traffic may reach.

use crate::SandboxError;
use bollard::Docker;
use handoff_egress::{FORWARDER_PORT, PROXY_PORT};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::OnceLock;

use super::*;

/// The addresses of this machine, which a sandbox never reaches unless the owner
/// listed one.
pub fn this_machines_addresses() -> Vec<IpAddr> {
    static FOUND: OnceLock<Vec<IpAddr>> = OnceLock::new();
    FOUND
        .get_or_init(|| match if_addrs::get_if_addrs() {
            Ok(interfaces) => interfaces.into_iter().map(|interface| interface.ip()).collect(),
            Err(error) => {
                tracing::warn!(%error, "this machine's addresses cannot be read; the gate refuses private ones all the same");
                Vec::new()
            }
        })
        .clone()
}

/// Where the gate reaches `upstream`: a provider address on this machine's loopback
/// (a local stand-in) is reached through the engine's host gateway.
pub fn upstream_seen_from_the_gate(upstream: &str) -> String {
    let Ok(mut address) = url::Url::parse(upstream) else {
        return upstream.to_owned();
    };
    let on_loopback = match address.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(v4)) => v4.is_loopback(),
        Some(url::Host::Ipv6(v6)) => v6.is_loopback(),
        None => false,
    };
    if on_loopback && address.set_host(Some("host.docker.internal")).is_ok() {
        return address.as_str().trim_end_matches('/').to_owned();
    }
    upstream.to_owned()
}

/// The proxy's address for the agent.
pub fn proxy_address() -> String {
    format!("http://{GATE_ALIAS}:{PROXY_PORT}")
}

/// The key forwarder's address for the agent.
pub fn forwarder_address() -> String {
    format!("http://{GATE_ALIAS}:{FORWARDER_PORT}")
}

/// The address containers on the engine's default network reach this machine at: the
/// network's gateway, or, for engines that leave it out, its range's first address.
pub async fn machine_address_on_default_network(docker: &Docker) -> Result<IpAddr, SandboxError> {
    let bridge = docker
        .inspect_network(
            "bridge",
            None::<bollard::query_parameters::InspectNetworkOptions>,
        )
        .await
        .map_err(|error| {
            unavailable(format!("cannot read the engine's default network: {error}"))
        })?;
    let config = bridge
        .ipam
        .and_then(|ipam| ipam.config)
        .and_then(|configs| {
            configs.into_iter().find(|config| {
                config
                    .subnet
                    .as_deref()
                    .is_some_and(|subnet| subnet.contains('.'))
            })
        })
        .ok_or_else(|| unavailable("the engine's default network has no IPv4 address range"))?;
    if let Some(gateway) = config.gateway.and_then(|gateway| gateway.parse().ok()) {
        return Ok(gateway);
    }
    let first = config
        .subnet
        .as_deref()
        .and_then(|subnet| subnet.split('/').next())
        .and_then(|network| network.parse::<Ipv4Addr>().ok())
        .ok_or_else(|| unavailable("the engine's default network has no IPv4 address range"))?;
    Ok(IpAddr::V4(Ipv4Addr::from(u32::from(first) + 1)))
}
