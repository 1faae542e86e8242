//! A run's key held by the gate for as long as the control connection that brought it
//! stays open, and each of the run's model calls reserved through that connection in
//! the spend ledger of the Handoff that runs it.
//!
//! The gate runs in a container and cannot reach Handoff's database; Handoff keeps the
//! connection open (a `handoff-egress hold-key` it runs in the gate through the engine)
//! for the whole run. Over it the gate asks for each call's reservation before the call
//! leaves and reports each call's step as its answer ends, so that what the run spent is
//! written as it comes; when the connection closes the key goes with it, and the calls
//! still under way settle before the connection ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt as _;
use tokio::io::{AsyncWrite, AsyncWriteExt as _};
use tokio::sync::{mpsc, oneshot};

use super::gate_control::{GateAnswer, KeyForTheGate, LinkMessage, LinkReply};
use super::gate_state::GateState;
use crate::call_ledger::{CallLedger, LedgerEntry, LedgerRefusal};
use handoff_domain::agent_step::AgentStep;
use handoff_domain::budgets::SpendLimit;
use handoff_domain::call_reservation::{CallAsk, CallCharge};

/// How long a call waits for Handoff to answer its reservation.
const RESERVATION_WAIT: Duration = Duration::from_secs(60);
/// How long the calls under way when the key goes may take to settle.
const SETTLING_WAIT: Duration = Duration::from_secs(30);

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<LedgerEntry, LedgerRefusal>>>>>;

/// The ledger of a held key's calls: on the other end of its connection.
#[derive(Debug)]
struct LinkLedger {
    to_handoff: mpsc::UnboundedSender<LinkMessage>,
    waiting: Waiting,
    next_ask: AtomicU64,
}

fn lock(
    waiting: &Waiting,
) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Result<LedgerEntry, LedgerRefusal>>>> {
    waiting
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl CallLedger for LinkLedger {
    fn reserve(&self, ask: CallAsk) -> BoxFuture<'static, Result<LedgerEntry, LedgerRefusal>> {
        let ask_id = self.next_ask.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        lock(&self.waiting).insert(ask_id, answer);
        let sent = self.to_handoff.send(LinkMessage::Reserve { ask_id, ask });
        let waiting = self.waiting.clone();
        async move {
            let gone =
                || LedgerRefusal::Unavailable("Handoff's link to the gate closed".to_owned());
            if sent.is_err() {
                lock(&waiting).remove(&ask_id);
                return Err(gone());
            }
            match tokio::time::timeout(RESERVATION_WAIT, answered).await {
                Ok(Ok(reservation)) => reservation,
                Ok(Err(_)) => Err(gone()),
                Err(_) => {
                    lock(&waiting).remove(&ask_id);
                    Err(LedgerRefusal::Unavailable(
                        "Handoff did not answer the call's reservation in time".to_owned(),
                    ))
                }
            }
        }
        .boxed()
    }

    fn settle(
        &self,
        entry: LedgerEntry,
        _charge: CallCharge,
        step: AgentStep,
    ) -> BoxFuture<'static, ()> {
        // Handoff charges the step itself, from the reservation it holds.
        if self
            .to_handoff
            .send(LinkMessage::Settle { entry, step })
            .is_err()
        {
            tracing::warn!("a model call ended after its run's link closed; Handoff charges it all it reserved");
        }
        async {}.boxed()
    }
}

async fn write_line(
    writes: &mut (impl AsyncWrite + Unpin),
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut text = serde_json::to_string(value).map_err(std::io::Error::other)?;
    text.push('\n');
    writes.write_all(text.as_bytes()).await?;
    writes.flush().await
}

/// Holds `key` for as long as the connection (`lines` read from it, `writes` to it)
/// stays open, its calls reserved through it.
pub async fn hold_key<R>(
    key: KeyForTheGate,
    state: &GateState,
    mut lines: tokio::io::Lines<R>,
    mut writes: impl AsyncWrite + Unpin,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let (to_handoff, mut messages) = mpsc::unbounded_channel();
    let waiting: Waiting = Arc::default();
    let ledger = Arc::new(LinkLedger {
        to_handoff,
        waiting: waiting.clone(),
        next_ask: AtomicU64::new(0),
    });
    let placeholder = key.placeholder.clone();
    let until = std::time::Instant::now().checked_add(Duration::from_secs(key.valid_for_seconds));
    tracing::info!(host = %key.api_host, "egress: holding a run's key");
    // The run's budget is held at Handoff's end of the link, with its month and its day.
    let key = KeyForTheGate {
        limit: SpendLimit::none(),
        ..key
    };
    let forwarded = key.into_forwarded(Some(ledger));
    let meter = forwarded.meter.clone();
    state.keys.add_until(forwarded, until);
    write_line(&mut writes, &GateAnswer::done()).await?;
    let held = async {
        loop {
            tokio::select! {
                line = lines.next_line() => match line? {
                    Some(line) if line.trim().is_empty() => {}
                    Some(line) => match serde_json::from_str::<LinkReply>(&line) {
                        Ok(reply) => {
                            if let Some(answer) = lock(&waiting).remove(&reply.ask_id) {
                                let _unwaited = answer.send(reply.reservation);
                            }
                        }
                        Err(error) => tracing::warn!(%error, "egress: a reply on a held key's link does not read"),
                    },
                    None => return Ok::<(), std::io::Error>(()),
                },
                Some(message) = messages.recv() => write_line(&mut writes, &message).await?,
            }
        }
    };
    let ended = held.await;
    state.keys.remove(&placeholder);
    state.activity.touch();
    lock(&waiting).clear();
    tracing::info!("egress: a run's key given back");
    if ended.is_ok() {
        // The calls under way when the key went settle yet, within a while.
        let settled = tokio::time::timeout(SETTLING_WAIT, async {
            // Each call under way ends with its settlement, sent after it stops counting.
            while meter.calls_under_way() > 0 {
                match messages.recv().await {
                    Some(message) => write_line(&mut writes, &message).await?,
                    None => break,
                }
            }
            while let Ok(message) = messages.try_recv() {
                write_line(&mut writes, &message).await?;
            }
            Ok::<(), std::io::Error>(())
        })
        .await;
        match settled {
            Ok(written) => written?,
            Err(_) => tracing::warn!(
                under_way = meter.calls_under_way(),
                "egress: calls under way did not settle before the run's link closed"
            ),
        }
    }
    writes.shutdown().await?;
    ended
}
