//! The name a TLS client asks for in its first message (SNI), read without answering.
//!
//! A tunnel is opened to the address of the name that `CONNECT` named. A client that
//! then names another server in its TLS handshake is trying to reach a different
//! service behind the same address (domain fronting); the proxy reads the handshake's
//! first message, compares, and closes such a tunnel. The parsing is rustls's.

use rustls::server::Acceptor;

/// The most bytes read while waiting for a whole first message.
pub const LARGEST_CLIENT_HELLO_BYTES: usize = 32 * 1024;

/// What the first bytes of a tunnel are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstMessage {
    /// Not TLS (the tunnel carries something else).
    NotTls,
    /// More bytes are needed.
    Incomplete,
    /// A TLS handshake naming this server (lower case, no trailing dot), or none.
    ClientHello { server_name: Option<String> },
    /// TLS, but not a handshake that can be read.
    Malformed,
}

/// Reads the first message of a tunnel from the bytes received so far.
pub fn first_message(received: &[u8]) -> FirstMessage {
    match received.first() {
        None => return FirstMessage::Incomplete,
        // A TLS record carrying a handshake starts with 22.
        Some(22) => {}
        Some(_) => return FirstMessage::NotTls,
    }
    let mut acceptor = Acceptor::default();
    let mut remaining = received;
    while !remaining.is_empty() {
        match acceptor.read_tls(&mut remaining) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => return FirstMessage::Malformed,
        }
    }
    match acceptor.accept() {
        Ok(None) => FirstMessage::Incomplete,
        Ok(Some(accepted)) => FirstMessage::ClientHello {
            server_name: accepted
                .client_hello()
                .server_name()
                .map(|name| name.trim_end_matches('.').to_ascii_lowercase()),
        },
        Err(_) => FirstMessage::Malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_tls_handshake_is_told_apart() {
        assert_eq!(first_message(&[]), FirstMessage::Incomplete);
        assert_eq!(
            first_message(b"SSH-2.0-OpenSSH_9.2\r\n"),
            FirstMessage::NotTls
        );
        assert_eq!(first_message(&[22, 3, 1]), FirstMessage::Incomplete);
        let mut garbage = vec![22u8, 3, 1, 0, 4];
        garbage.extend_from_slice(&[9, 9, 9, 9]);
        assert_eq!(first_message(&garbage), FirstMessage::Malformed);
    }
}
