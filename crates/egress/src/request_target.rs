//! Reading what a proxy client asks for: `CONNECT host:port` (a tunnel, for https and
//! anything else on TCP) or a plain `http://host[:port]/path` request.
//!
//! Host names are read strictly, so that the name judged is the name connected to:
//! - a name is letters, digits and hyphens in dot-separated labels (at most 63 each,
//!   253 in all), lower-cased, one trailing dot dropped;
//! - an IPv4 address is only the dotted-decimal form with four parts and no leading
//!   zeros; every other spelling of a number (`127.1`, `2130706433`, `0x7f.0.0.1`,
//!   `0177.0.0.1`) is refused, as is any name whose last label is a number;
//! - an IPv6 address only in brackets, without a zone;
//! - nothing else: no NUL or other control bytes, no percent-encoding, no user part,
//!   no spaces, nothing beyond ASCII.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use handoff_domain::network_policy::Destination;

/// The largest request head the proxy reads.
pub const LARGEST_HEAD_BYTES: usize = 64 * 1024;
/// The most header fields a request may carry.
const MOST_HEADERS: usize = 100;

/// Why a request was refused before anything was resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefusal {
    #[error("the request is not HTTP: {0}")]
    NotHttp(String),
    #[error("{0:?} is not a host name or an address written plainly")]
    BadHost(String),
    #[error("{0:?} has no port, or one that is not a number from 1 to 65535")]
    BadPort(String),
    #[error("only CONNECT and plain http:// requests go through this proxy, not {0:?}")]
    UnsupportedTarget(String),
    #[error("the Host field ({host:?}) names another place than the request ({target:?})")]
    HostMismatch { host: String, target: String },
}

/// What the client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRequest {
    pub destination: Destination,
    pub port: u16,
    pub kind: RequestKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestKind {
    /// `CONNECT`: a tunnel of bytes once admitted.
    Tunnel,
    /// A plain http request, passed on as `head` (the request line in origin form and
    /// the fields, without the proxy's own and with `Connection: close`).
    Plain { head: Vec<u8> },
}

/// Reads a request head (everything up to and including the blank line).
pub fn parse_request_head(head: &[u8]) -> Result<ProxyRequest, TargetRefusal> {
    let mut fields = [httparse::EMPTY_HEADER; MOST_HEADERS];
    let mut request = httparse::Request::new(&mut fields);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(TargetRefusal::NotHttp(
                "the request head is incomplete".into(),
            ))
        }
        Err(error) => return Err(TargetRefusal::NotHttp(error.to_string())),
    }
    let method = request.method.unwrap_or_default();
    let target = request.path.unwrap_or_default();
    if method == "CONNECT" {
        let (destination, port) = parse_authority(target, None)?;
        return Ok(ProxyRequest {
            destination,
            port,
            kind: RequestKind::Tunnel,
        });
    }
    let Some(rest) = strip_prefix_ignoring_case(target, "http://") else {
        return Err(TargetRefusal::UnsupportedTarget(target.to_owned()));
    };
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    if path.contains('#') {
        return Err(TargetRefusal::UnsupportedTarget(target.to_owned()));
    }
    let (destination, port) = parse_authority(authority, Some(80))?;
    check_host_field(request.headers, authority, &destination, port)?;
    let head = head_passed_on(&request, method, path, authority);
    Ok(ProxyRequest {
        destination,
        port,
        kind: RequestKind::Plain { head },
    })
}

/// Refuses a request with more than one Host field, or one naming another place than
/// its target's `authority` (`destination`, `port`).
fn check_host_field(
    fields: &[httparse::Header],
    authority: &str,
    destination: &Destination,
    port: u16,
) -> Result<(), TargetRefusal> {
    let host_fields: Vec<&httparse::Header> = fields
        .iter()
        .filter(|field| field.name.eq_ignore_ascii_case("host"))
        .collect();
    if host_fields.len() > 1 {
        return Err(TargetRefusal::NotHttp("more than one Host field".into()));
    }
    if let Some(field) = host_fields.first() {
        let text = std::str::from_utf8(field.value)
            .map_err(|_| TargetRefusal::BadHost(String::from_utf8_lossy(field.value).into()))?;
        let named = parse_authority(text.trim(), Some(80))?;
        if named != (destination.clone(), port) {
            return Err(TargetRefusal::HostMismatch {
                host: text.to_owned(),
                target: authority.to_owned(),
            });
        }
    }
    Ok(())
}

/// The head sent on to the destination: the request line with the path alone, the
/// fields but those meant for the proxy or the connection, a Host field, and
/// `Connection: close`.
fn head_passed_on(
    request: &httparse::Request,
    method: &str,
    path: &str,
    authority: &str,
) -> Vec<u8> {
    let path = if path.is_empty() {
        "/".to_owned()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let mut passed = format!(
        "{method} {path} HTTP/1.{}\r\n",
        request.version.unwrap_or(1)
    )
    .into_bytes();
    let mut has_host = false;
    for field in request.headers.iter() {
        let name = field.name.to_ascii_lowercase();
        if name.starts_with("proxy-")
            || matches!(
                name.as_str(),
                "connection" | "keep-alive" | "te" | "upgrade"
            )
        {
            continue;
        }
        has_host |= name == "host";
        passed.extend_from_slice(field.name.as_bytes());
        passed.extend_from_slice(b": ");
        passed.extend_from_slice(field.value);
        passed.extend_from_slice(b"\r\n");
    }
    if !has_host {
        passed.extend_from_slice(format!("Host: {authority}\r\n").as_bytes());
    }
    passed.extend_from_slice(b"Connection: close\r\n\r\n");
    passed
}

fn strip_prefix_ignoring_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Reads `host:port` (or `[v6]:port`); `default_port` when the port may be left out.
pub fn parse_authority(
    authority: &str,
    default_port: Option<u16>,
) -> Result<(Destination, u16), TargetRefusal> {
    let bad_port = || TargetRefusal::BadPort(authority.to_owned());
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed
            .split_once(']')
            .ok_or_else(|| TargetRefusal::BadHost(authority.to_owned()))?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return Err(TargetRefusal::BadHost(authority.to_owned())),
        };
        (format!("[{inside}]"), port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (authority.to_owned(), None),
        }
    };
    let port = match port {
        Some(digits) => {
            if digits.is_empty()
                || digits.len() > 5
                || !digits.bytes().all(|byte| byte.is_ascii_digit())
            {
                return Err(bad_port());
            }
            digits
                .parse::<u16>()
                .ok()
                .filter(|port| *port > 0)
                .ok_or_else(bad_port)?
        }
        None => default_port.ok_or_else(bad_port)?,
    };
    Ok((parse_host(&host)?, port))
}

/// Reads a host as written in a request: a name, a dotted-decimal IPv4 address, or an
/// IPv6 address in brackets.
pub fn parse_host(text: &str) -> Result<Destination, TargetRefusal> {
    let bad = || TargetRefusal::BadHost(text.to_owned());
    if let Some(inside) = text.strip_prefix('[') {
        let inside = inside.strip_suffix(']').ok_or_else(bad)?;
        // Only hex digits, colons and dots: no zone (`%eth0`), nothing else.
        if !inside
            .bytes()
            .all(|byte| byte.is_ascii_hexdigit() || byte == b':' || byte == b'.')
        {
            return Err(bad());
        }
        let v6: Ipv6Addr = inside.parse().map_err(|_| bad())?;
        return Ok(Destination::Address(IpAddr::V6(v6)));
    }
    if text.is_empty() || text.len() > 254 {
        return Err(bad());
    }
    let lower = text.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if let Some(v4) = strict_dotted_decimal(name) {
        return Ok(Destination::Address(IpAddr::V4(v4)));
    }
    let labels: Vec<&str> = name.split('.').collect();
    let well_formed = !name.is_empty()
        && name.len() <= 253
        && labels.iter().all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
        });
    if !well_formed {
        return Err(bad());
    }
    // A last label that is a number makes the whole an address in some spelling
    // (`127.1`, `2130706433`, `0x7f.1`): never a name.
    let last = labels.last().copied().unwrap_or_default();
    let numeric = last.bytes().all(|byte| byte.is_ascii_digit())
        || (last.starts_with("0x") && last[2..].bytes().all(|byte| byte.is_ascii_hexdigit()));
    if numeric {
        return Err(bad());
    }
    Ok(Destination::Name(name.to_owned()))
}

/// `a.b.c.d` with four decimal parts from 0 to 255 and no leading zeros.
fn strict_dotted_decimal(text: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (octet, part) in octets.iter_mut().zip(&parts) {
        if part.is_empty()
            || part.len() > 3
            || (part.len() > 1 && part.starts_with('0'))
            || !part.bytes().all(|byte| byte.is_ascii_digit())
        {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    Some(Ipv4Addr::from(octets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> Destination {
        Destination::Name(text.to_owned())
    }

    fn address(text: &str) -> Destination {
        Destination::Address(text.parse().unwrap())
    }

    #[test]
    fn names_and_addresses_written_plainly_are_read() {
        assert_eq!(parse_host("API.Example.org"), Ok(name("api.example.org")));
        assert_eq!(parse_host("api.example.org."), Ok(name("api.example.org")));
        assert_eq!(parse_host("x-1.example"), Ok(name("x-1.example")));
        assert_eq!(parse_host("172.17.0.1"), Ok(address("172.17.0.1")));
        assert_eq!(parse_host("0.0.0.0"), Ok(address("0.0.0.0")));
        assert_eq!(parse_host("[::1]"), Ok(address("::1")));
        assert_eq!(
            parse_host("[::ffff:127.0.0.1]"),
            Ok(address("::ffff:127.0.0.1"))
        );
        assert_eq!(
            parse_authority("[2606:4700::1111]:443", None),
            Ok((address("2606:4700::1111"), 443))
        );
        assert_eq!(
            parse_authority("api.example.org:8443", None),
            Ok((name("api.example.org"), 8443))
        );
        assert_eq!(
            parse_authority("api.example.org", Some(80)),
            Ok((name("api.example.org"), 80))
        );
    }

    #[test]
    fn hosts_that_hide_what_they_are_are_refused() {
        for hostile in [
            "172.17.0.1\0.example.org",
            "evil.example\0",
            "127.1",
            "127.0.1",
            "2130706433",
            "0x7f000001",
            "0x7f.0.0.1",
            "0177.0.0.1",
            "017.0.0.1",
            "127.000.000.001",
            "1.2.3.4.5",
            "example.0x1f",
            "api%2eexample.org",
            "%31%32%37.0.0.1",
            "user@api.example.org",
            "api.example.org@evil.example",
            "api example.org",
            "api.example.org\r\nX: y",
            "ex_ample.org",
            "пример.рф",
            "..",
            "a..b",
            "-a.example",
            "a-.example",
            ".",
            "",
            "[fe80::1%eth0]",
            "[::1",
            "::1",
            "[127.0.0.1]",
            "[v1.fe]",
        ] {
            assert!(
                parse_host(hostile).is_err(),
                "{hostile:?} was read as {:?}",
                parse_host(hostile)
            );
        }
        let long_label = format!("{}.example", "a".repeat(64));
        assert!(parse_host(&long_label).is_err());
    }

    #[test]
    fn ports_are_plain_numbers_in_range() {
        for bad in [
            "a.example:0",
            "a.example:65536",
            "a.example:+443",
            "a.example:443 ",
            "a.example:0443x",
            "a.example:",
            "a.example",
            "a.example:443:443",
            "[::1]443",
        ] {
            assert!(parse_authority(bad, None).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_connect_request_names_its_tunnel() {
        let request =
            parse_request_head(b"CONNECT api.example.org:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(request.destination, name("api.example.org"));
        assert_eq!(request.port, 443);
        assert_eq!(request.kind, RequestKind::Tunnel);
        assert!(
            parse_request_head(b"CONNECT 172.17.0.1\0.example.org:18443 HTTP/1.1\r\n\r\n").is_err()
        );
        assert!(
            parse_request_head(b"CONNECT 172.17.0.1%00.example.org:443 HTTP/1.1\r\n\r\n").is_err()
        );
    }

    #[test]
    fn a_plain_request_is_passed_on_in_origin_form_without_the_proxys_fields() {
        let request = parse_request_head(
            b"GET http://Files.Example.org/a/b?c=d HTTP/1.1\r\nHost: files.example.org\r\n\
              Proxy-Authorization: Basic x\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!(request.destination, name("files.example.org"));
        assert_eq!(request.port, 80);
        let RequestKind::Plain { head } = request.kind else {
            panic!("a plain request");
        };
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "GET /a/b?c=d HTTP/1.1\r\nHost: files.example.org\r\nAccept: */*\r\n\
             Connection: close\r\n\r\n"
        );
    }

    #[test]
    fn a_host_field_that_names_another_place_is_refused() {
        let mismatch = parse_request_head(
            b"GET http://files.example.org/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
        );
        assert!(
            matches!(mismatch, Err(TargetRefusal::HostMismatch { .. })),
            "{mismatch:?}"
        );
        let two = parse_request_head(
            b"GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
        );
        assert!(two.is_err());
        for unsupported in [
            &b"GET /relative HTTP/1.1\r\nHost: a.example\r\n\r\n"[..],
            b"GET https://a.example/ HTTP/1.1\r\n\r\n",
            b"GET ftp://a.example/ HTTP/1.1\r\n\r\n",
            b"GET http://a.example/#frag HTTP/1.1\r\n\r\n",
            b"GET http://user@a.example/ HTTP/1.1\r\n\r\n",
            b"GET http://a.example%2f@b.example/ HTTP/1.1\r\n\r\n",
            b"not http at all\r\n\r\n",
        ] {
            assert!(
                parse_request_head(unsupported).is_err(),
                "{}",
                String::from_utf8_lossy(unsupported)
            );
        }
    }
}
