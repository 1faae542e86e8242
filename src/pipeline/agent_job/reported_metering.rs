//! A job's spend where no key forwarder stands (E2B): the agent's own reports, read
//! from its output as it comes (see [`crate::pipeline::reported_spend`]), recorded in
//! the spend ledger call by call as "as the agent reported", and the sandbox ended once
//! a budget is spent (a call already made is not undone: the run may end past its
//! budget by what the agent spent before it said so).

use tokio::sync::{mpsc, watch};

use crate::domain::call_reservation::CallRefusal;
use crate::domain::model_prices::PriceTable;
use crate::pipeline::reported_spend::ReportedSpend;
use crate::pipeline::run_log::RunLog;
use crate::sandbox::{OutputStream, SandboxEvent};
use crate::store::spend_ledger::LedgerRun;
use crate::store::Store;

/// The sandbox's side of a job metered from its agent's reports.
pub(crate) struct ReportedMetering {
    /// Where the sandbox sends its events (they reach the log through the meter).
    pub events: mpsc::UnboundedSender<SandboxEvent>,
    /// Turns true when the owner cancels or a budget is spent.
    pub cancel: watch::Receiver<bool>,
    /// Ends with the sandbox's events: the budget the agent's reports reached, if one.
    pub reached: tokio::task::JoinHandle<Option<CallRefusal>>,
}

/// Reads the job's output on its way to `to_log` for the agent's reports.
pub(crate) fn meter_reports(
    store: Store,
    run: LedgerRun,
    prices: PriceTable,
    log: RunLog,
    to_log: mpsc::UnboundedSender<SandboxEvent>,
    mut owner_cancel: watch::Receiver<bool>,
) -> ReportedMetering {
    let (events, mut from_sandbox) = mpsc::unbounded_channel();
    let (stop, cancel) = watch::channel(*owner_cancel.borrow());
    let reached = tokio::spawn(async move {
        let mut reports = ReportedSpend::default();
        let mut reached: Option<CallRefusal> = None;
        let mut owner_watched = true;
        loop {
            let event = tokio::select! {
                event = from_sandbox.recv() => event,
                changed = owner_cancel.changed(), if owner_watched => {
                    match changed {
                        Ok(()) if *owner_cancel.borrow() => { let _ended = stop.send(true); }
                        Ok(()) => {}
                        Err(_) => owner_watched = false,
                    }
                    continue;
                }
            };
            let Some(event) = event else {
                return reached;
            };
            if let SandboxEvent::Output {
                stream: OutputStream::Stdout,
                bytes,
            } = &event
            {
                for call in reports.feed(bytes, &prices) {
                    match store
                        .spend()
                        .record_reported_call(&run, &call.model, call.usd, call.tokens, store.now())
                        .await
                    {
                        Ok(Some(refusal)) if reached.is_none() => {
                            tracing::info!(run = %run.run_id, %refusal, "an agent's reported spend reached a budget; its sandbox is ended");
                            if let Err(error) = log
                                .say(&format!(
                                    "budget reached as the agent reported its spend: {}; the sandbox is ended",
                                    refusal.as_reached()
                                ))
                                .await
                            {
                                tracing::warn!(%error, "the run's log could not be written");
                            }
                            let _ended = stop.send(true);
                            reached = Some(refusal);
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(run = %run.run_id, %error, "an agent's reported call could not be recorded")
                        }
                    }
                }
            }
            if to_log.send(event).is_err() {
                tracing::trace!("a sandbox event after the run's log stopped listening");
            }
        }
    });
    ReportedMetering {
        events,
        cancel,
        reached,
    }
}
