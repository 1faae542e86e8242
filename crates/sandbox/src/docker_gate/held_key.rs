//! A run's key held by the repository's gate on a link of its own: a `handoff-egress
//! hold-key` run in the gate through the engine, open for the whole run (see
//! [`handoff_egress::key_link`] for the gate's side).
//!
//! Over the link the gate asks for each model call's reservation, answered from the
//! run's meter here (and so from the spend ledger every run shares), and reports each
//! call's step as its answer ends, which settles it here as it comes. Closing the link
//! takes the key back; a link the gate closes first (it stopped) marks the meter lost,
//! so that the run fails saying so, with what it was charged up to then.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::Mutex;

use super::{unavailable, AttachedInput, AttachedOutput, EgressGate};
use crate::run_meter::RunMeter;
use crate::SandboxError;
use handoff_egress::gate_control::{
    GateAnswer, GateCommand, KeyForTheGate, LinkMessage, LinkReply,
};

/// How long the gate may take to settle the calls under way once the key is given back.
const RELEASE_WAIT: Duration = Duration::from_secs(45);

/// The gate's output, read line by line.
struct OutputLines {
    output: AttachedOutput,
    pending: Vec<u8>,
}

impl OutputLines {
    /// The next line the program wrote on its standard output; `None` once it ended.
    async fn next_line(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.pending.iter().position(|byte| *byte == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return Some(String::from_utf8_lossy(&line).trim_end().to_owned());
            }
            match self.output.next().await? {
                Ok(bollard::container::LogOutput::StdOut { message }) => {
                    self.pending.extend_from_slice(&message);
                }
                Ok(other) => {
                    tracing::debug!(said = %other, "the gate's key link said");
                }
                Err(error) => {
                    tracing::warn!(%error, "the gate's key link broke off");
                    return None;
                }
            }
        }
    }
}

/// A run's key the gate holds; [`HeldKey::release`] gives it back.
pub struct HeldKey {
    input: Arc<Mutex<AttachedInput>>,
    released: Arc<AtomicBool>,
    reader: tokio::task::JoinHandle<()>,
    /// Turns true when the gate closes the link while the run is under way.
    lost: tokio::sync::watch::Receiver<bool>,
}

impl std::fmt::Debug for HeldKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldKey")
            .field("released", &self.released)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for OutputLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputLines").finish_non_exhaustive()
    }
}

async fn send_line(
    input: &Mutex<AttachedInput>,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut line = serde_json::to_string(value).map_err(std::io::Error::other)?;
    line.push('\n');
    let mut input = input.lock().await;
    input.write_all(line.as_bytes()).await?;
    input.flush().await
}

impl EgressGate {
    /// Has the gate hold `key` for the run whose meter is `meter`, until released.
    pub async fn hold_key(
        &self,
        key: KeyForTheGate,
        meter: Arc<RunMeter>,
    ) -> Result<HeldKey, SandboxError> {
        let (_exec, output, input) = self.attach("hold-key").await?;
        let input = Arc::new(Mutex::new(input));
        // The line holds the key: it goes to the gate and nowhere else.
        send_line(&input, &GateCommand::HoldKey { key })
            .await
            .map_err(|error| {
                unavailable(format!(
                    "the run's key could not reach the egress gate: {error}"
                ))
            })?;
        let mut lines = OutputLines {
            output,
            pending: Vec::new(),
        };
        let answer = lines
            .next_line()
            .await
            .and_then(|line| serde_json::from_str::<GateAnswer>(&line).ok());
        match answer {
            Some(answer) if answer.ok => {}
            Some(answer) => {
                return Err(unavailable(format!(
                    "the egress gate did not take the run's key: {}",
                    answer.error.unwrap_or_default()
                )))
            }
            None => {
                return Err(unavailable(
                    "the egress gate did not answer for the run's key",
                ))
            }
        }
        let released = Arc::new(AtomicBool::new(false));
        let (lose, lost) = tokio::sync::watch::channel(false);
        let reader = tokio::spawn(serve_link(
            lines,
            input.clone(),
            meter,
            released.clone(),
            lose,
        ));
        Ok(HeldKey {
            input,
            released,
            reader,
            lost,
        })
    }
}

/// Answers the gate's reservations from `meter` and settles its calls there, until the
/// link ends.
async fn serve_link(
    mut lines: OutputLines,
    input: Arc<Mutex<AttachedInput>>,
    meter: Arc<RunMeter>,
    released: Arc<AtomicBool>,
    lose: tokio::sync::watch::Sender<bool>,
) {
    while let Some(line) = lines.next_line().await {
        match serde_json::from_str::<LinkMessage>(&line) {
            Ok(LinkMessage::Reserve { ask_id, ask }) => {
                let meter = meter.clone();
                let input = input.clone();
                tokio::spawn(async move {
                    let reservation = meter
                        .reserve(ask)
                        .await
                        .map(|id| i64::try_from(id).unwrap_or(i64::MAX));
                    let reply = LinkReply {
                        ask_id,
                        reservation,
                    };
                    if let Err(error) = send_line(&input, &reply).await {
                        tracing::warn!(%error, "a reservation's answer could not reach the egress gate");
                    }
                });
            }
            Ok(LinkMessage::Settle { entry, step }) => {
                meter.settle(u64::try_from(entry).unwrap_or(u64::MAX), step);
            }
            Err(error) => tracing::warn!(%error, "a line of the gate's key link does not read"),
        }
    }
    if !released.load(Ordering::SeqCst) {
        tracing::warn!("the egress gate closed a run's key link while the run was under way");
        meter.lose("the egress gate stopped while the run was under way");
        lose.send_replace(true);
    }
}

impl HeldKey {
    /// `owner_cancel`, turned true also when the gate closes the link while the run is
    /// under way: a run whose calls can no longer be metered is stopped.
    pub fn stop_with(
        &self,
        mut owner_cancel: tokio::sync::watch::Receiver<bool>,
    ) -> tokio::sync::watch::Receiver<bool> {
        let (stop, stopped) = tokio::sync::watch::channel(*owner_cancel.borrow());
        let mut lost = self.lost.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = crate::until_cancelled(&mut owner_cancel) => {}
                () = crate::until_cancelled(&mut lost) => {}
                () = stop.closed() => return,
            }
            stop.send_replace(true);
        });
        stopped
    }

    /// Gives the key back, once the calls under way have settled (within a while).
    pub async fn release(self) {
        self.released.store(true, Ordering::SeqCst);
        if let Err(error) = self.input.lock().await.shutdown().await {
            tracing::warn!(%error, "the gate's key link could not be closed; the gate forgets the key when its time is up");
        }
        match tokio::time::timeout(RELEASE_WAIT, self.reader).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "the gate's key link stopped badly"),
            Err(_) => tracing::warn!("the gate did not close a run's key link in time"),
        }
    }
}
