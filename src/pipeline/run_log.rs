//! A run's log (P5): what the sandbox prints and what Handoff says about the run, kept
//! in the store as it comes, so the app and `handoff runs logs --follow` (in any
//! process) watch it live and it stays afterwards. Huge or binary output is tamed:
//! text is kept as UTF-8 (invalid bytes replaced, NULs dropped) up to a limit per run,
//! after which the log says how much was left out.

use std::time::Duration;

use futures::Stream;
use tokio::sync::mpsc;

use crate::domain::{LogChunk, LogStream, RunId};
use crate::sandbox::{OutputStream, SandboxEvent};
use crate::store::{Store, StoreError};

/// The most log text a run keeps.
pub const LOG_LIMIT_BYTES: usize = 4 * 1024 * 1024;

/// How often buffered output is written.
const FLUSH_EVERY: Duration = Duration::from_millis(200);

/// Writes Handoff's own lines to a run's log.
#[derive(Debug, Clone)]
pub struct RunLog {
    store: Store,
    run_id: RunId,
}

impl RunLog {
    pub fn new(store: Store, run_id: RunId) -> Self {
        RunLog { store, run_id }
    }

    /// Adds a line from Handoff itself.
    pub async fn say(&self, line: &str) -> Result<(), StoreError> {
        self.store
            .append_run_log(self.run_id, LogStream::Handoff, &format!("{line}\n"))
            .await
            .map(|_| ())
    }
}

/// Output bytes as storable text.
fn as_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\0', "")
}

/// Drains a sandbox's events into the store until the channel closes; returns the
/// bytes that were left out for being over the limit.
pub async fn record_sandbox_events(
    store: Store,
    run_id: RunId,
    mut events: mpsc::UnboundedReceiver<SandboxEvent>,
) -> Result<usize, StoreError> {
    let mut kept = 0usize;
    let mut dropped = 0usize;
    let mut pending: Vec<(LogStream, Vec<u8>)> = Vec::new();
    let mut ticker = tokio::time::interval(FLUSH_EVERY);
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = ticker.tick() => {
                flush(&store, run_id, &mut pending, &mut kept, &mut dropped).await?;
                continue;
            }
        };
        match event {
            Some(SandboxEvent::Started { sandbox_id }) => {
                store.set_run_sandbox(run_id, &sandbox_id).await?;
            }
            Some(SandboxEvent::Output { stream, bytes }) => {
                let stream = match stream {
                    OutputStream::Stdout => LogStream::Stdout,
                    OutputStream::Stderr => LogStream::Stderr,
                };
                match pending.last_mut() {
                    Some((last, buffer)) if *last == stream => buffer.extend_from_slice(&bytes),
                    _ => pending.push((stream, bytes)),
                }
            }
            None => break,
        }
    }
    flush(&store, run_id, &mut pending, &mut kept, &mut dropped).await?;
    if dropped > 0 {
        store
            .append_run_log(
                run_id,
                LogStream::Handoff,
                &format!("[{dropped} more bytes of output were left out: the log keeps {LOG_LIMIT_BYTES} bytes]\n"),
            )
            .await?;
    }
    Ok(dropped)
}

async fn flush(
    store: &Store,
    run_id: RunId,
    pending: &mut Vec<(LogStream, Vec<u8>)>,
    kept: &mut usize,
    dropped: &mut usize,
) -> Result<(), StoreError> {
    for (stream, bytes) in pending.drain(..) {
        let room = LOG_LIMIT_BYTES.saturating_sub(*kept);
        let take = bytes.len().min(room);
        *dropped += bytes.len() - take;
        if take == 0 {
            continue;
        }
        let text = as_text(&bytes[..take]);
        *kept += take;
        store.append_run_log(run_id, stream, &text).await?;
    }
    Ok(())
}

/// A run's log as it grows: every chunk so far, then new ones as they are stored,
/// until the run has ended and everything is read. Polls the store, so it follows a
/// run driven by any process.
pub fn follow_run_log(
    store: Store,
    run_id: RunId,
    poll: Duration,
) -> impl Stream<Item = Result<LogChunk, StoreError>> {
    futures::stream::unfold(
        (store, 0i64, false, Vec::<LogChunk>::new()),
        move |(store, mut seen, mut ended, mut queue)| async move {
            loop {
                if !queue.is_empty() {
                    let chunk = queue.remove(0);
                    return Some((Ok(chunk), (store, seen, ended, queue)));
                }
                if ended {
                    return None;
                }
                let active = match store.run(run_id).await {
                    Ok(run) => run.status.is_active(),
                    Err(error) => return Some((Err(error), (store, seen, true, queue))),
                };
                match store.run_log(run_id, seen).await {
                    Ok(chunks) => {
                        if let Some(last) = chunks.last() {
                            seen = last.seq;
                        }
                        queue = chunks;
                    }
                    Err(error) => return Some((Err(error), (store, seen, true, queue))),
                }
                if !active {
                    // Read once more after the end was seen, then stop.
                    ended = true;
                    continue;
                }
                if queue.is_empty() {
                    tokio::time::sleep(poll).await;
                }
            }
        },
    )
}
