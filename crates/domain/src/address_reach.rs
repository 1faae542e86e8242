//! Which network addresses a sandbox's traffic may go to, by the address alone.
//!
//! Three kinds:
//! - **public**: a global unicast address, the internet;
//! - **private**: the owner's own networks and the ranges that are not the internet
//!   (RFC 1918, shared address space, benchmarking and documentation ranges, unique
//!   local IPv6, and the gateway of a container network, which is always in one of
//!   them). A sandbox reaches one only when the owner listed that very address;
//!   a host name never leads to one, so no name can smuggle a private address in;
//! - **never**: this machine (loopback), "any address", link-local (where clouds
//!   answer with their instance metadata), multicast and broadcast, and the IPv6
//!   forms that carry an IPv4 address of another kind or tunnel it away (Teredo).
//!
//! IPv4 addresses carried in IPv6 (mapped, NAT64, 6to4) are judged as the IPv4 address
//! they carry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of destination an address is for a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressReach {
    /// The internet.
    Public,
    /// Not the internet; reached only when the owner listed the address itself.
    Private(&'static str),
    /// Never reached from a sandbox.
    Never(&'static str),
}

impl AddressReach {
    /// What kind of address `address` is.
    pub fn of(address: IpAddr) -> AddressReach {
        match address {
            IpAddr::V4(v4) => reach_of_v4(v4),
            IpAddr::V6(v6) => reach_of_v6(v6),
        }
    }

    /// The words for the kind of address, for a refusal.
    pub fn describe(self) -> &'static str {
        match self {
            AddressReach::Public => "a public address",
            AddressReach::Private(kind) | AddressReach::Never(kind) => kind,
        }
    }
}

fn in_v4(address: Ipv4Addr, network: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    u32::from(address) & mask == u32::from(Ipv4Addr::from(network)) & mask
}

fn reach_of_v4(address: Ipv4Addr) -> AddressReach {
    const NEVER: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "\"this network\" (0.0.0.0/8)"),
        ([127, 0, 0, 0], 8, "this machine (loopback)"),
        (
            [169, 254, 0, 0],
            16,
            "link-local (where clouds serve instance metadata)",
        ),
        ([224, 0, 0, 0], 4, "multicast"),
        ([240, 0, 0, 0], 4, "reserved or broadcast"),
    ];
    const PRIVATE: &[([u8; 4], u32, &str)] = &[
        ([10, 0, 0, 0], 8, "a private network (10.0.0.0/8)"),
        ([172, 16, 0, 0], 12, "a private network (172.16.0.0/12)"),
        ([192, 168, 0, 0], 16, "a private network (192.168.0.0/16)"),
        (
            [100, 64, 0, 0],
            10,
            "shared address space (carrier-grade NAT)",
        ),
        ([192, 0, 0, 0], 24, "IETF protocol assignments"),
        ([192, 0, 2, 0], 24, "a documentation range"),
        ([198, 51, 100, 0], 24, "a documentation range"),
        ([203, 0, 113, 0], 24, "a documentation range"),
        ([198, 18, 0, 0], 15, "a benchmarking range"),
        ([192, 88, 99, 0], 24, "the deprecated 6to4 relay range"),
    ];
    for (network, prefix, kind) in NEVER {
        if in_v4(address, *network, *prefix) {
            return AddressReach::Never(kind);
        }
    }
    for (network, prefix, kind) in PRIVATE {
        if in_v4(address, *network, *prefix) {
            return AddressReach::Private(kind);
        }
    }
    AddressReach::Public
}

fn reach_of_v6(address: Ipv6Addr) -> AddressReach {
    let segments = address.segments();
    if address.is_unspecified() {
        return AddressReach::Never("\"any address\" (::)");
    }
    if address.is_loopback() {
        return AddressReach::Never("this machine (loopback)");
    }
    // ::ffff:a.b.c.d, an IPv4 address in IPv6's clothes.
    if let Some(v4) = address.to_ipv4_mapped() {
        return reach_of_v4(v4);
    }
    // ::a.b.c.d, the deprecated IPv4-compatible form.
    if segments[..6].iter().all(|segment| *segment == 0) {
        return AddressReach::Never("an IPv4-compatible IPv6 address (deprecated)");
    }
    // 64:ff9b::a.b.c.d, NAT64: the IPv4 address it translates to decides.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [_, _, _, _, _, _, high, low] = segments;
        return reach_of_v4(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)));
    }
    // 2002:a.b.c.d::/48, 6to4: the IPv4 address it tunnels to decides.
    if segments[0] == 0x2002 {
        return reach_of_v4(Ipv4Addr::from(
            (u32::from(segments[1]) << 16) | u32::from(segments[2]),
        ));
    }
    if segments[0] == 0x2001 && segments[1] == 0 {
        return AddressReach::Never("Teredo, a tunnel to an address it hides");
    }
    if segments[0] & 0xff00 == 0xff00 {
        return AddressReach::Never("multicast");
    }
    if segments[0] & 0xffc0 == 0xfe80 {
        return AddressReach::Never("link-local");
    }
    if segments[0] & 0xffc0 == 0xfec0 {
        return AddressReach::Private("site-local (deprecated)");
    }
    if segments[0] & 0xfe00 == 0xfc00 {
        return AddressReach::Private("a unique local IPv6 network");
    }
    if (segments[0] == 0x2001 && segments[1] == 0x0db8)
        || (segments[0] == 0x3fff && segments[1] & 0xf000 == 0)
    {
        return AddressReach::Private("a documentation range");
    }
    if segments[0] == 0x2001 && (segments[1] & 0xfff0) == 0x0010 {
        return AddressReach::Never("ORCHID, not a routable address");
    }
    if segments[0] == 0x2001 && segments[1] == 0x0002 && segments[2] == 0 {
        return AddressReach::Private("a benchmarking range");
    }
    if segments[..4] == [0x0100, 0, 0, 0] {
        return AddressReach::Never("the discard range");
    }
    // Global unicast is 2000::/3; anything else is not the internet.
    if segments[0] & 0xe000 == 0x2000 {
        AddressReach::Public
    } else {
        AddressReach::Never("an unassigned IPv6 range")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(text: &str) -> AddressReach {
        AddressReach::of(text.parse().unwrap())
    }

    #[test]
    fn the_internet_is_public() {
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "160.79.104.10",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(reach(public), AddressReach::Public, "{public}");
        }
    }

    #[test]
    fn the_owners_networks_and_the_gateways_are_private() {
        for private in [
            "10.1.2.3",
            "172.17.0.1",
            "172.31.255.254",
            "192.168.1.1",
            "100.64.0.1",
            "198.18.0.1",
            "192.0.2.1",
            "fd00::1",
            "fc12::1",
            "::ffff:172.17.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::1",
            "2001:db8::1",
            "3fff::1",
        ] {
            assert!(
                matches!(reach(private), AddressReach::Private(_)),
                "{private}: {:?}",
                reach(private)
            );
        }
        assert_eq!(reach("172.32.0.1"), AddressReach::Public);
        assert_eq!(reach("100.128.0.1"), AddressReach::Public);
    }

    #[test]
    fn this_machine_metadata_multicast_and_tunnels_are_never_reached() {
        for never in [
            "127.0.0.1",
            "127.255.255.254",
            "0.0.0.0",
            "0.1.2.3",
            "169.254.169.254",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2001:0:4136:e378::1",
            "fe80::1",
            "febf::1",
            "ff02::1",
            "100::1",
            "2001:10::1",
            "4000::1",
        ] {
            assert!(
                matches!(reach(never), AddressReach::Never(_)),
                "{never}: {:?}",
                reach(never)
            );
        }
    }
}
