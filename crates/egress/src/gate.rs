//! The gate as a program: the proxy, the key forwarder and the control socket in one
//! process, and the `configure` side that Handoff runs next to it.
//!
//! The gate starts with no network allowed and no key; it takes its rules and keys
//! from the control socket, and it stops by itself once it has held no key and served
//! nothing for a while, so a repository's gate costs nothing between busy spells.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[cfg(unix)]
use super::gate_control::{GateAnswer, GateCommand};
pub use super::gate_state::GateState;
#[cfg(unix)]
use super::proxy::EgressRules;

// Serving the gate and talking to its control socket need Unix sockets: the gate runs
// only in a Linux container, so on other hosts only its state and commands are built.
#[cfg(unix)]
use super::proxy::{serve_proxy, system_resolver};
#[cfg(unix)]
use crate::key_forwarding::forwarding_router;
#[cfg(unix)]
use std::{
    path::Path,
    sync::{Arc, RwLock},
};
#[cfg(unix)]
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWriteExt as _, BufReader};

/// The line the gate prints once it serves.
pub const LISTENING: &str = "handoff-egress: listening";

/// Where and how the gate serves.
#[derive(Debug, Clone)]
pub struct GateOptions {
    pub proxy: SocketAddr,
    pub forwarder: SocketAddr,
    pub control: PathBuf,
    /// Stop after this long with no key held and nothing served; `None`: never.
    pub idle_exit: Option<Duration>,
}

/// Serves until the gate has been idle for `idle_exit`.
#[cfg(unix)]
pub async fn serve_gate(options: GateOptions) -> std::io::Result<()> {
    let state = GateState {
        rules: Arc::new(RwLock::new(EgressRules::default())),
        ..GateState::default()
    };
    let proxy_listener = tokio::net::TcpListener::bind(options.proxy).await?;
    let forwarder_listener = tokio::net::TcpListener::bind(options.forwarder).await?;
    match std::fs::remove_file(&options.control) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let control = tokio::net::UnixListener::bind(&options.control)?;
    let router = forwarding_router(state.keys.clone(), state.activity.clone())?;
    let proxy = tokio::spawn(serve_proxy(
        proxy_listener,
        state.rules.clone(),
        system_resolver(),
        state.activity.clone(),
    ));
    let forwarder = tokio::spawn(async move {
        if let Err(error) = axum::serve(forwarder_listener, router).await {
            tracing::error!(%error, "the key forwarder stopped");
        }
    });
    let controlled = state.clone();
    let control_task = tokio::spawn(async move {
        loop {
            match control.accept().await {
                Ok((stream, _)) => {
                    let state = controlled.clone();
                    tokio::spawn(async move {
                        if let Err(error) = serve_control(stream, &state).await {
                            tracing::warn!(%error, "a control connection broke");
                        }
                    });
                }
                Err(error) => {
                    tracing::warn!(%error, "the control socket could not accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    });
    eprintln!("{LISTENING}");
    let check_every = Duration::from_secs(5);
    loop {
        tokio::time::sleep(check_every).await;
        if proxy.is_finished() || control_task.is_finished() || forwarder.is_finished() {
            return Err(std::io::Error::other("a part of the gate stopped"));
        }
        let expired = state.keys.forget_expired();
        if expired > 0 {
            tracing::info!(
                expired,
                "egress: keys of runs that never gave them back expired"
            );
        }
        if let Some(idle_exit) = options.idle_exit {
            if state.keys.is_empty() && state.activity.idle_for() >= idle_exit {
                tracing::info!(idle_seconds = idle_exit.as_secs(), "egress: idle, stopping");
                return Ok(());
            }
        }
    }
}

/// Reads commands from one control connection, answering each.
#[cfg(unix)]
async fn serve_control(stream: tokio::net::UnixStream, state: &GateState) -> std::io::Result<()> {
    let (reads, mut writes) = stream.into_split();
    let mut lines = BufReader::new(reads).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        // The line may hold a key: it is never written anywhere but parsed here.
        let answer = match serde_json::from_str::<GateCommand>(&line) {
            Ok(GateCommand::HoldKey { key }) => {
                state.activity.touch();
                return super::key_link::hold_key(key, state, lines, writes).await;
            }
            Ok(command) => state.apply(command),
            Err(error) => GateAnswer::failed(format!("the command does not read: {error}")),
        };
        let mut text = serde_json::to_string(&answer).map_err(std::io::Error::other)?;
        text.push('\n');
        writes.write_all(text.as_bytes()).await?;
    }
    Ok(())
}

/// The gate's control socket at `control`, waiting up to `wait` for the gate to listen.
#[cfg(unix)]
async fn connect_control(
    control: &Path,
    wait: Duration,
) -> std::io::Result<tokio::net::UnixStream> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::net::UnixStream::connect(control).await {
            Ok(stream) => return Ok(stream),
            Err(error) if tokio::time::Instant::now() >= deadline => return Err(error),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Connects `input` and `output` to the gate's control socket at `control` both ways,
/// until the gate closes it (a held key's link): waits up to `wait` for the gate.
#[cfg(unix)]
pub async fn relay(
    control: &Path,
    mut input: impl AsyncRead + Unpin,
    mut output: impl tokio::io::AsyncWrite + Unpin,
    wait: Duration,
) -> std::io::Result<()> {
    let stream = connect_control(control, wait).await?;
    let (mut reads, mut writes) = stream.into_split();
    let to_gate = async {
        tokio::io::copy(&mut input, &mut writes).await?;
        writes.shutdown().await
    };
    let from_gate = async {
        tokio::io::copy(&mut reads, &mut output).await?;
        output.flush().await
    };
    tokio::pin!(to_gate);
    tokio::pin!(from_gate);
    let mut sending = true;
    // The link ends when the gate closes it; the input may stay open past that.
    loop {
        tokio::select! {
            sent = &mut to_gate, if sending => {
                sending = false;
                if let Err(error) = sent {
                    tracing::debug!(%error, "the link's input broke off");
                }
            }
            received = &mut from_gate => return received,
        }
    }
}

/// Sends the commands read from `input` (one per line) to the gate at `control`,
/// waiting up to `wait` for the gate to listen, and writes each answer to `output`.
/// Whether every command succeeded.
#[cfg(unix)]
pub async fn configure(
    control: &Path,
    input: impl AsyncRead + Unpin,
    mut output: impl tokio::io::AsyncWrite + Unpin,
    wait: Duration,
) -> std::io::Result<bool> {
    let stream = connect_control(control, wait).await?;
    let (reads, mut writes) = stream.into_split();
    let mut commands = BufReader::new(input).lines();
    let mut answers = BufReader::new(reads).lines();
    let mut all_ok = true;
    while let Some(command) = commands.next_line().await? {
        if command.trim().is_empty() {
            continue;
        }
        writes.write_all(command.as_bytes()).await?;
        writes.write_all(b"\n").await?;
        let answer = answers
            .next_line()
            .await?
            .ok_or_else(|| std::io::Error::other("the gate closed the control connection"))?;
        all_ok &= serde_json::from_str::<GateAnswer>(&answer).is_ok_and(|answer| answer.ok);
        output.write_all(answer.as_bytes()).await?;
        output.write_all(b"\n").await?;
    }
    output.flush().await?;
    Ok(all_ok)
}
