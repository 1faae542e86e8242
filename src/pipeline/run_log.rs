//! A run's log: what the sandbox prints and what Handoff says about the run, kept in
//! the store as it comes, so the app and `handoff runs logs --follow` (in any process)
//! watch it live and it stays afterwards. Huge or binary output is tamed: text is kept
//! as UTF-8 (invalid bytes replaced, NULs dropped) up to a limit per run, after which
//! the log says how much was left out. Every secret of the run is scrubbed out before
//! anything is stored, even one split across two pieces of output. The agents' JSON
//! event lines are stored as the text they stand for (see [`super::agent_events`]).

use std::time::Duration;

use futures::Stream;
use tokio::sync::mpsc;

use super::agent_events::EventLines;
use crate::domain::{LogChunk, LogStream, RunId};
use crate::sandbox::{OutputStream, SandboxEvent};
use crate::secrets::Redactor;
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
    redactor: Redactor,
}

impl RunLog {
    pub fn new(store: Store, run_id: RunId, redactor: Redactor) -> Self {
        RunLog {
            store,
            run_id,
            redactor,
        }
    }

    /// Adds a line from Handoff itself.
    pub async fn say(&self, line: &str) -> Result<(), StoreError> {
        self.store
            .runs()
            .append_run_log(
                self.run_id,
                LogStream::Handoff,
                &format!("{}\n", self.redactor.redact(line)),
            )
            .await
            .map(|_| ())
    }

    /// The run whose log this is.
    pub fn run_id(&self) -> RunId {
        self.run_id
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }
}

/// Output of one stream on its way to the log: what is held back because it may be the
/// start of a secret (or of a character) that the next piece completes.
#[derive(Debug, Default)]
struct HeldOutput {
    held: Vec<u8>,
}

impl HeldOutput {
    /// Takes `bytes`, scrubs secrets, and returns what can be stored now; with `last`,
    /// everything.
    fn release(&mut self, bytes: &[u8], redactor: &Redactor, last: bool) -> Vec<u8> {
        self.held.extend_from_slice(bytes);
        let clean = redactor.redact_bytes(&self.held);
        let keep = if last {
            0
        } else {
            redactor.possible_secret_start(&clean)
        };
        let mut cut = clean.len() - keep;
        // Never cut a UTF-8 character in two.
        let mut steps = 0;
        while cut > 0 && cut < clean.len() && (clean[cut] & 0b1100_0000) == 0b1000_0000 && steps < 3
        {
            cut -= 1;
            steps += 1;
        }
        self.held = clean[cut..].to_vec();
        clean[..cut].to_vec()
    }
}

/// Output bytes as storable text.
fn as_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\0', "")
}

/// Drains a sandbox's events into the store until the channel closes, every secret of
/// `redactor` scrubbed; returns the bytes that were left out for being over the limit.
pub async fn record_sandbox_events(
    store: Store,
    run_id: RunId,
    redactor: Redactor,
    mut events: mpsc::UnboundedReceiver<SandboxEvent>,
) -> Result<usize, StoreError> {
    let mut recorder = Recorder {
        store: store.clone(),
        run_id,
        redactor,
        kept: 0,
        dropped: 0,
        stdout: HeldOutput::default(),
        stderr: HeldOutput::default(),
        stdout_events: EventLines::default(),
        stderr_events: EventLines::default(),
    };
    let mut pending: Vec<(LogStream, Vec<u8>)> = Vec::new();
    let mut ticker = tokio::time::interval(FLUSH_EVERY);
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = ticker.tick() => {
                recorder.flush(&mut pending, false).await?;
                continue;
            }
        };
        match event {
            Some(SandboxEvent::Started { sandbox_id }) => {
                store.runs().set_run_sandbox(run_id, &sandbox_id).await?;
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
    recorder.flush(&mut pending, true).await?;
    let dropped = recorder.dropped;
    if dropped > 0 {
        store
            .runs().append_run_log(
                run_id,
                LogStream::Handoff,
                &format!("[{dropped} more bytes of output were left out: the log keeps {LOG_LIMIT_BYTES} bytes]\n"),
            )
            .await?;
    }
    Ok(dropped)
}

/// Where a run's output goes, with what is held back and what was kept.
struct Recorder {
    store: Store,
    run_id: RunId,
    redactor: Redactor,
    kept: usize,
    dropped: usize,
    stdout: HeldOutput,
    stderr: HeldOutput,
    /// The agents' JSON event lines of each stream, shown as text.
    stdout_events: EventLines,
    stderr_events: EventLines,
}

impl Recorder {
    /// Stores what is pending (scrubbed, within the limit); with `last`, also what was
    /// held back.
    async fn flush(
        &mut self,
        pending: &mut Vec<(LogStream, Vec<u8>)>,
        last: bool,
    ) -> Result<(), StoreError> {
        if last {
            pending.push((LogStream::Stdout, Vec::new()));
            pending.push((LogStream::Stderr, Vec::new()));
        }
        for (stream, bytes) in pending.drain(..) {
            let (held, events) = match stream {
                LogStream::Stderr => (&mut self.stderr, &mut self.stderr_events),
                _ => (&mut self.stdout, &mut self.stdout_events),
            };
            let bytes = events.take(&bytes, last);
            let bytes = held.release(&bytes, &self.redactor, last);
            let room = LOG_LIMIT_BYTES.saturating_sub(self.kept);
            let take = bytes.len().min(room);
            self.dropped += bytes.len() - take;
            if take == 0 {
                continue;
            }
            let text = as_text(&bytes[..take]);
            self.kept += take;
            self.store
                .runs()
                .append_run_log(self.run_id, stream, &text)
                .await?;
        }
        Ok(())
    }
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
                let active = match store.runs().run(run_id).await {
                    Ok(run) => run.status.is_active(),
                    Err(error) => return Some((Err(error), (store, seen, true, queue))),
                };
                match store.runs().run_log(run_id, seen).await {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::Secret;

    #[test]
    fn a_secret_split_across_two_pieces_of_output_is_still_scrubbed() {
        let key = Secret::new("sk-live-0123456789abcdef");
        let redactor = Redactor::new([&key]);
        let mut held = HeldOutput::default();
        let first = held.release(b"line one\nKEY=sk-live-01234", &redactor, false);
        assert_eq!(
            first, b"line one\nKEY=",
            "only what may start a secret waits"
        );
        let mut out = first;
        out.extend(held.release(b"56789abcdef and \xc3", &redactor, false));
        out.extend(held.release(b"\xa9t\xc3\xa9\n", &redactor, true));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "line one\nKEY=[redacted] and \u{e9}t\u{e9}\n"
        );
        let plain = held.release(b"no secret here\n", &redactor, false);
        assert_eq!(plain, b"no secret here\n", "ordinary output never waits");
    }
}
