//! The allow-list proxy: the one way out of a sandbox's network.
//!
//! For each connection it reads one request head ([`super::request_target`]), judges the
//! name or address asked for against the repository's rules, resolves a name itself,
//! judges every address it resolves to (a name never leads to this machine, its
//! networks or the metadata address), and connects to one of exactly those addresses,
//! so that what was judged is what is reached. A tunnel whose TLS handshake names
//! another server than the one `CONNECT` named is closed ([`super::client_hello`]).
//! A plain http request goes on in origin form with `Connection: close`; the proxy
//! follows no redirect, so each place a client is sent to is judged as a new request.
//! Every refusal is answered with its reason and written to the log.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use super::client_hello::{first_message, FirstMessage, LARGEST_CLIENT_HELLO_BYTES};
use super::request_target::{parse_request_head, RequestKind, LARGEST_HEAD_BYTES};
use super::GateActivity;
use handoff_domain::network_policy::{Destination, EgressRefusal, NetworkPolicy};

/// How long a client has to send its request head, or its first TLS message.
const CLIENT_WAIT: Duration = Duration::from_secs(30);
/// How long a tunnel's client has to say its first words.
const FIRST_MESSAGE_WAIT: Duration = Duration::from_secs(600);
/// How long connecting to the destination may take.
const CONNECT_WAIT: Duration = Duration::from_secs(15);

/// What the proxy lets through: the repository's mode and list, and the addresses of
/// the machine the sandbox runs on (never reached, unless the owner listed one).
#[derive(Debug, Clone, Default)]
pub struct EgressRules {
    pub policy: NetworkPolicy,
    pub this_machine: Vec<IpAddr>,
}

/// The rules as the proxy reads them; replaced whole while it runs.
pub type SharedRules = Arc<RwLock<EgressRules>>;

/// Resolves a host name to its addresses.
pub type Resolve = Arc<
    dyn Fn(String, u16) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>
        + Send
        + Sync,
>;

/// The system's resolver.
pub fn system_resolver() -> Resolve {
    Arc::new(|name, port| {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((name.as_str(), port))
                .await?
                .map(|address| address.ip())
                .collect())
        })
    })
}

/// Serves proxy clients on `listener` until the task is dropped.
pub async fn serve_proxy(
    listener: TcpListener,
    rules: SharedRules,
    resolve: Resolve,
    activity: GateActivity,
) {
    loop {
        let (client, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "the egress proxy could not accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let rules = rules.clone();
        let resolve = resolve.clone();
        let activity = activity.clone();
        tokio::spawn(async move {
            let _busy = activity.connection_began();
            handle_client(client, peer, &rules, &resolve).await;
        });
    }
}

/// A refusal as the client gets it.
fn answer(status: &str, reason: &str) -> Vec<u8> {
    let body = format!("{reason}\n");
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn refuse(client: &mut TcpStream, peer: SocketAddr, status: &str, reason: &str) {
    tracing::warn!(client = %peer, "egress refused: {reason}");
    let sent = async {
        client.write_all(&answer(status, reason)).await?;
        client.shutdown().await
    };
    if let Err(error) = sent.await {
        tracing::debug!(client = %peer, %error, "the refusal could not be sent");
        return;
    }
    // Read what the client still sends for a moment, so that closing does not reset
    // the connection before it has read the refusal.
    let mut drained = 0usize;
    let mut chunk = [0u8; 8192];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while drained < 1024 * 1024 {
        match tokio::time::timeout_at(deadline, client.read(&mut chunk)).await {
            Ok(Ok(read)) if read > 0 => drained += read,
            _ => break,
        }
    }
}

/// Reads bytes until the blank line that ends a request head; returns the head and what
/// came after it.
async fn read_head(client: &mut TcpStream) -> Result<(Vec<u8>, Vec<u8>), &'static str> {
    let mut received = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = received.windows(4).position(|window| window == b"\r\n\r\n") {
            let rest = received.split_off(end + 4);
            return Ok((received, rest));
        }
        if received.len() > LARGEST_HEAD_BYTES {
            return Err("the request head is too large");
        }
        let read = tokio::time::timeout(CLIENT_WAIT, client.read(&mut chunk))
            .await
            .map_err(|_| "the request head did not come in time")?
            .map_err(|_| "the connection broke while the request head came")?;
        if read == 0 {
            return Err("the connection closed before a whole request head came");
        }
        received.extend_from_slice(&chunk[..read]);
    }
}

/// Judges and resolves where a request may go: the addresses it may be connected to,
/// in the resolver's order.
pub async fn admitted_addresses(
    rules: &EgressRules,
    resolve: &Resolve,
    destination: &Destination,
    port: u16,
) -> Result<Vec<IpAddr>, AdmissionRefusal> {
    rules.policy.admits_destination(destination, port)?;
    let addresses = match destination {
        Destination::Address(address) => vec![*address],
        Destination::Name(name) => resolve(name.clone(), port)
            .await
            .map_err(|error| AdmissionRefusal::Unresolved(format!("{name}: {error}")))?,
    };
    if addresses.is_empty() {
        return Err(AdmissionRefusal::Unresolved(format!(
            "{destination} has no address"
        )));
    }
    // Every address a name has must be admitted: a name that leads inward by one of its
    // addresses is refused whole, whichever the client would have got.
    for address in &addresses {
        rules
            .policy
            .admits_address(destination, port, *address, &rules.this_machine)?;
    }
    Ok(addresses)
}

/// Why a request goes nowhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionRefusal {
    #[error(transparent)]
    Refused(#[from] EgressRefusal),
    #[error("cannot resolve {0}")]
    Unresolved(String),
}

async fn connect_to_one(addresses: &[IpAddr], port: u16) -> std::io::Result<TcpStream> {
    let mut last_error = None;
    for address in addresses {
        match tokio::time::timeout(
            CONNECT_WAIT,
            TcpStream::connect((address.to_canonical(), port)),
        )
        .await
        {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(error)) => last_error = Some(error),
            Err(_) => {
                last_error = Some(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no answer in time",
                ))
            }
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::other("no address")))
}

async fn handle_client(
    mut client: TcpStream,
    peer: SocketAddr,
    rules: &SharedRules,
    resolve: &Resolve,
) {
    let (head, rest) = match read_head(&mut client).await {
        Ok(read) => read,
        Err(reason) => return refuse(&mut client, peer, "400 Bad Request", reason).await,
    };
    let request = match parse_request_head(&head) {
        Ok(request) => request,
        Err(refusal) => {
            return refuse(&mut client, peer, "400 Bad Request", &refusal.to_string()).await
        }
    };
    let target = format!("{}:{}", request.destination, request.port);
    let rules_now = match rules.read() {
        Ok(rules) => rules.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    let addresses =
        match admitted_addresses(&rules_now, resolve, &request.destination, request.port).await {
            Ok(addresses) => addresses,
            Err(AdmissionRefusal::Unresolved(reason)) => {
                return refuse(
                    &mut client,
                    peer,
                    "502 Bad Gateway",
                    &format!("cannot resolve {reason}"),
                )
                .await
            }
            Err(refusal) => {
                return refuse(&mut client, peer, "403 Forbidden", &refusal.to_string()).await
            }
        };
    let mut upstream = match connect_to_one(&addresses, request.port).await {
        Ok(upstream) => upstream,
        Err(error) => {
            return refuse(
                &mut client,
                peer,
                "502 Bad Gateway",
                &format!("cannot reach {target}: {error}"),
            )
            .await
        }
    };
    match request.kind {
        RequestKind::Tunnel => {
            if let Err(error) = client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
            {
                tracing::debug!(client = %peer, %error, "the tunnel's client left");
                return;
            }
            tracing::info!(client = %peer, "egress: tunnel to {target}");
            relay_tunnel(client, upstream, rest, &request.destination, peer, &target).await;
        }
        RequestKind::Plain { head } => {
            tracing::info!(client = %peer, "egress: http request to {target}");
            let mut sent = head;
            sent.extend_from_slice(&rest);
            if let Err(error) = upstream.write_all(&sent).await {
                tracing::debug!(client = %peer, %error, "{target} left before the request");
                return;
            }
            if let Err(error) = tokio::io::copy_bidirectional(&mut client, &mut upstream).await {
                tracing::debug!(client = %peer, %error, "the connection to {target} ended");
            }
        }
    }
}

/// Passes a tunnel's bytes both ways. What the destination says flows at once (some
/// protocols speak first); what the client says flows once its first message is read
/// and, if it is a TLS handshake, names the tunnel's own server.
async fn relay_tunnel(
    client: TcpStream,
    upstream: TcpStream,
    already_sent: Vec<u8>,
    destination: &Destination,
    peer: SocketAddr,
    target: &str,
) {
    let (mut client_reads, mut client_writes) = client.into_split();
    let (mut upstream_reads, mut upstream_writes) = upstream.into_split();
    let downstream = tokio::spawn(async move {
        if let Err(error) = tokio::io::copy(&mut upstream_reads, &mut client_writes).await {
            tracing::debug!(%error, "a tunnel's answer stream ended");
        }
        if let Err(error) = client_writes.shutdown().await {
            tracing::debug!(%error, "a tunnel's client was already gone");
        }
    });
    let mut first = already_sent;
    match check_first_message(&mut client_reads, &mut first, destination).await {
        Ok(()) => {
            let sent = async {
                upstream_writes.write_all(&first).await?;
                tokio::io::copy(&mut client_reads, &mut upstream_writes).await?;
                upstream_writes.shutdown().await
            };
            if let Err(error) = sent.await {
                tracing::debug!(client = %peer, %error, "the tunnel to {target} ended");
            }
            if let Err(error) = downstream.await {
                tracing::warn!(client = %peer, %error, "a tunnel's relay task failed");
            }
        }
        Err(reason) => {
            tracing::warn!(client = %peer, "egress closed the tunnel to {target}: {reason}");
            downstream.abort();
        }
    }
}

/// What a tunnel's first message allows, once it can be told: `None` while more bytes
/// are needed. A tunnel to a named host must say in a TLS handshake which server it
/// wants, and name that host: anything else (another protocol, a handshake naming no
/// server or another one) could reach another service behind the same address unseen.
/// A tunnel to an address may carry anything but a handshake naming a server.
pub fn judge_first_message(
    message: &FirstMessage,
    destination: &Destination,
) -> Option<Result<(), String>> {
    let named_host = matches!(destination, Destination::Name(_));
    Some(match message {
        FirstMessage::Incomplete => return None,
        FirstMessage::NotTls if named_host => Err(format!(
            "it carries no TLS handshake, and a tunnel to {destination} must name it in one"
        )),
        FirstMessage::NotTls => Ok(()),
        FirstMessage::Malformed => Err("its first TLS message cannot be read".to_owned()),
        FirstMessage::ClientHello { server_name: None } if named_host => Err(format!(
            "its TLS handshake names no server, and a tunnel to {destination} must name it"
        )),
        FirstMessage::ClientHello { server_name: None } => Ok(()),
        FirstMessage::ClientHello {
            server_name: Some(named),
        } => match destination {
            Destination::Name(asked) if asked == named => Ok(()),
            _ => Err(format!(
                "its TLS handshake names {named}, not {destination}"
            )),
        },
    })
}

/// Reads the tunnel's first message into `first` and refuses what
/// [`judge_first_message`] refuses.
async fn check_first_message(
    client: &mut tokio::net::tcp::OwnedReadHalf,
    first: &mut Vec<u8>,
    destination: &Destination,
) -> Result<(), String> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(judged) = judge_first_message(&first_message(first), destination) {
            return judged;
        }
        if first.len() > LARGEST_CLIENT_HELLO_BYTES {
            return Err("its first TLS message is too large".to_owned());
        }
        let read = tokio::time::timeout(FIRST_MESSAGE_WAIT, client.read(&mut chunk))
            .await
            .map_err(|_| "no first message came in time".to_owned())?
            .map_err(|error| format!("the client left ({error})"))?;
        if read == 0 {
            // The client closed before sending anything: nothing to pass on.
            return if first.is_empty() {
                Ok(())
            } else {
                Err("the client left in the middle of its first message".to_owned())
            };
        }
        first.extend_from_slice(&chunk[..read]);
    }
}
