//! A network link between Handoff and a fake service that a test can cut: every byte
//! of every connection passes through it, and `cut` closes the open connections at once
//! and every new one as soon as it opens, as when a machine loses its network in the
//! middle of a transfer. `restore` brings it back.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct NetworkLink {
    address: SocketAddr,
    up: watch::Sender<bool>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for NetworkLink {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Waits until the link is cut (never returns while it is up).
async fn until_cut(up: &mut watch::Receiver<bool>) {
    loop {
        if !*up.borrow_and_update() {
            return;
        }
        if up.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

async fn carry(mut client: TcpStream, target: SocketAddr, mut up: watch::Receiver<bool>) {
    let Ok(mut service) = TcpStream::connect(target).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut service) => {}
        _ = until_cut(&mut up) => {}
    }
    // Both sockets close here, without a word to either side.
}

impl NetworkLink {
    /// A link, up, to the service listening at `target`.
    pub async fn to(target: SocketAddr) -> NetworkLink {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the link listens");
        let address = listener.local_addr().expect("its address");
        let (up, _) = watch::channel(true);
        let watching = up.clone();
        let server = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                if !*watching.borrow() {
                    drop(client);
                    continue;
                }
                tokio::spawn(carry(client, target, watching.subscribe()));
            }
        });
        NetworkLink {
            address,
            up,
            server,
        }
    }

    /// `http://ADDRESS` of the link's end that Handoff talks to.
    pub fn base(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The network goes: open connections close, new ones close as they open.
    pub fn cut(&self) {
        self.up.send_replace(false);
    }

    /// The network is back.
    pub fn restore(&self) {
        self.up.send_replace(true);
    }
}
