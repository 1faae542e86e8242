//! Hostile requests for the egress proxy: each tries to reach something the rules do
//! not admit by writing it in a way a careless proxy reads differently from how it
//! connects. The tests send every one to the proxy (in process, and in the real gate
//! container) and check that it is refused and that nothing reached the listed service.
//! The rules they run under list one service, `{listed}:{port}`, by its address, and
//! `*.example.org:{port}` and `host.docker.internal:{port}` by name.

use std::net::Ipv4Addr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// How a hostile request must be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `400 Bad Request`: the request does not read as anything plain.
    BadRequest,
    /// `403 Forbidden`: it reads, and the rules refuse it.
    Forbidden,
}

impl Refusal {
    pub fn status(self) -> u16 {
        match self {
            Refusal::BadRequest => 400,
            Refusal::Forbidden => 403,
        }
    }
}

/// One hostile request.
#[derive(Debug, Clone)]
pub struct HostileRequest {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub refused_with: Refusal,
}

/// The entries of the list the corpus runs under.
pub fn corpus_allow_list(listed: Ipv4Addr, port: u16) -> String {
    format!("{listed}:{port} *.example.org:{port} host.docker.internal:{port}")
}

/// Every hostile request, for a listed service at `listed`:`port`.
pub fn hostile_requests(listed: Ipv4Addr, port: u16) -> Vec<HostileRequest> {
    let [a, b, c, d] = listed.octets();
    let as_number = u32::from(listed);
    let connect = |target: String| {
        format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").into_bytes()
    };
    let mut requests = vec![
        (
            "NUL byte after a listed address, before a listed domain",
            {
                let mut bytes = b"CONNECT ".to_vec();
                bytes.extend_from_slice(listed.to_string().as_bytes());
                bytes.push(0);
                bytes.extend_from_slice(format!(".example.org:{port} HTTP/1.1\r\n\r\n").as_bytes());
                bytes
            },
            Refusal::BadRequest,
        ),
        (
            "percent-encoded NUL",
            connect(format!("{listed}%00.example.org:{port}")),
            Refusal::BadRequest,
        ),
        (
            "percent-encoded address",
            connect(format!("%31%32%37.0.0.1:{port}")),
            Refusal::BadRequest,
        ),
        (
            "the listed address as one decimal number",
            connect(format!("{as_number}:{port}")),
            Refusal::BadRequest,
        ),
        (
            "the listed address as one hex number",
            connect(format!("0x{as_number:08x}:{port}")),
            Refusal::BadRequest,
        ),
        (
            "the listed address in dotted hex",
            connect(format!("0x{a:x}.0x{b:x}.0x{c:x}.0x{d:x}:{port}")),
            Refusal::BadRequest,
        ),
        (
            "the listed address in dotted octal",
            connect(format!("0{a:o}.0{b:o}.0{c:o}.0{d:o}:{port}")),
            Refusal::BadRequest,
        ),
        (
            "loopback shortened",
            connect(format!("127.1:{port}")),
            Refusal::BadRequest,
        ),
        (
            "a name ending in a number",
            connect(format!("evil.example.0x7f:{port}")),
            Refusal::BadRequest,
        ),
        ("loopback", connect(format!("127.0.0.1:{port}")), Refusal::Forbidden),
        ("localhost", connect(format!("localhost:{port}")), Refusal::Forbidden),
        ("IPv6 loopback", connect(format!("[::1]:{port}")), Refusal::Forbidden),
        (
            "IPv6-mapped loopback",
            connect(format!("[::ffff:127.0.0.1]:{port}")),
            Refusal::Forbidden,
        ),
        (
            "IPv6 link-local",
            connect(format!("[fe80::1]:{port}")),
            Refusal::Forbidden,
        ),
        (
            "IPv6 with a zone",
            connect(format!("[fe80::1%25eth0]:{port}")),
            Refusal::BadRequest,
        ),
        ("any address", connect(format!("0.0.0.0:{port}")), Refusal::Forbidden),
        (
            "the metadata address",
            connect("169.254.169.254:80".to_owned()),
            Refusal::Forbidden,
        ),
        (
            "the metadata address over plain http",
            b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"
                .to_vec(),
            Refusal::Forbidden,
        ),
        (
            "a listed name that resolves to the engine's gateway",
            connect(format!("host.docker.internal:{port}")),
            Refusal::Forbidden,
        ),
        (
            "a listed name with a trailing dot that resolves to the gateway",
            connect(format!("host.docker.internal.:{port}")),
            Refusal::Forbidden,
        ),
        (
            "the listed address on another port",
            connect(format!("{listed}:{}", port.wrapping_add(1).max(1))),
            Refusal::Forbidden,
        ),
        (
            "a Host field naming the metadata address",
            format!("GET http://{listed}:{port}/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n")
                .into_bytes(),
            Refusal::BadRequest,
        ),
        (
            "two Host fields",
            format!(
                "GET http://{listed}:{port}/ HTTP/1.1\r\nHost: {listed}:{port}\r\nHost: 127.0.0.1\r\n\r\n"
            )
            .into_bytes(),
            Refusal::BadRequest,
        ),
        (
            "a user part before the host",
            format!("GET http://user@{listed}:{port}/ HTTP/1.1\r\n\r\n").into_bytes(),
            Refusal::BadRequest,
        ),
        (
            "a listed name as the user part",
            format!("GET http://a.example.org:{port}@127.0.0.1:{port}/ HTTP/1.1\r\n\r\n")
                .into_bytes(),
            Refusal::BadRequest,
        ),
        (
            "https in absolute form",
            format!("GET https://{listed}:{port}/ HTTP/1.1\r\n\r\n").into_bytes(),
            Refusal::BadRequest,
        ),
        (
            "a relative request",
            format!("GET / HTTP/1.1\r\nHost: {listed}:{port}\r\n\r\n").into_bytes(),
            Refusal::BadRequest,
        ),
        (
            "a space inside the target",
            format!("CONNECT {listed} :{port} HTTP/1.1\r\n\r\n").into_bytes(),
            Refusal::BadRequest,
        ),
    ];
    let mut huge = format!("CONNECT {listed}:{port} HTTP/1.1\r\n").into_bytes();
    for line in 0..2000 {
        huge.extend_from_slice(format!("X-Padding-{line}: {}\r\n", "a".repeat(40)).as_bytes());
    }
    huge.extend_from_slice(b"\r\n");
    requests.push(("a request head over 64 KiB", huge, Refusal::BadRequest));
    requests
        .into_iter()
        .map(|(name, bytes, refused_with)| HostileRequest {
            name,
            bytes,
            refused_with,
        })
        .collect()
}

/// Sends `bytes` to the proxy at `proxy` and reads its answer until it closes (or 10 s).
pub async fn send(proxy: std::net::SocketAddr, bytes: &[u8]) -> String {
    let mut stream = tokio::net::TcpStream::connect(proxy)
        .await
        .expect("the proxy listens");
    if let Err(error) = stream.write_all(bytes).await {
        // The proxy may stop reading a huge head and answer at once.
        eprintln!("the request was cut short: {error}");
    }
    let mut answer = Vec::new();
    match tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await
    {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => eprintln!("the answer broke off: {error}"),
        Err(_) => eprintln!("the proxy kept the connection open"),
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status of an answer's first line, if it is HTTP.
pub fn status_of(answer: &str) -> Option<u16> {
    answer.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

/// A TLS ClientHello naming `name`, as a client writes it.
pub fn client_hello(name: &str) -> Vec<u8> {
    client_hello_naming(Some(name))
}

/// A TLS ClientHello that names no server (no server name extension).
pub fn client_hello_without_server_name() -> Vec<u8> {
    client_hello_naming(None)
}

fn client_hello_naming(name: Option<&str>) -> Vec<u8> {
    let mut extensions = Vec::new();
    if let Some(name) = name {
        let name = name.as_bytes();
        let mut server_name_list = vec![0u8];
        server_name_list.extend_from_slice(&(name.len() as u16).to_be_bytes());
        server_name_list.extend_from_slice(name);
        let mut sni = Vec::new();
        sni.extend_from_slice(&(server_name_list.len() as u16).to_be_bytes());
        sni.extend_from_slice(&server_name_list);
        extensions.extend_from_slice(&0u16.to_be_bytes());
        extensions.extend_from_slice(&(sni.len() as u16).to_be_bytes());
        extensions.extend_from_slice(&sni);
    }
    // signature_algorithms: ecdsa_secp256r1_sha256, rsa_pss_rsae_sha256
    extensions.extend_from_slice(&[0x00, 0x0d, 0x00, 0x06, 0x00, 0x04, 0x04, 0x03, 0x08, 0x04]);
    let mut body = vec![0x03, 0x03];
    body.extend_from_slice(&[7u8; 32]);
    body.push(0);
    body.extend_from_slice(&[0x00, 0x02, 0xc0, 0x2f]);
    body.extend_from_slice(&[0x01, 0x00]);
    body.extend_from_slice(&(extensions.len() as u16).to_be_bytes());
    body.extend_from_slice(&extensions);
    let mut handshake = vec![1u8];
    handshake.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    handshake.extend_from_slice(&body);
    let mut record = vec![22u8, 0x03, 0x01];
    record.extend_from_slice(&(handshake.len() as u16).to_be_bytes());
    record.extend_from_slice(&handshake);
    record
}
