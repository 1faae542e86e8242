//! A run in a container made ahead talks through the container's standard streams, not
//! the engine's archive copies (each of which starts a helper process on the engine):
//! - the run's files (`handoff/` and `out/`) go in as a tar on the waiting process's
//!   standard input, which it unpacks as the agent's user before it starts the job;
//! - the job's output comes back on standard output and error, as any run's does;
//! - at its end the job script writes a boundary line with its exit status and then a
//!   tar of `out/` on its standard error; that archive is unpacked here, only entries
//!   under `out/` and within the output caps.
//!
//! The run ends when that archive is whole: the engine's word that the container
//! stopped comes tens of milliseconds later (longer on a network), and the container is
//! removed after the run has what it needs (see the parent module). When no whole
//! archive came back (the job was killed, timed out, or stopped before its finish), the
//! container's end is awaited and `out/` is copied from it as for any run. The boundary
//! is random per run; an agent that wrote it itself could only hand back an `out/` and
//! an exit status of its own making, which it can do anyway, and end its run early.

use bollard::container::LogOutput;
use bollard::query_parameters::AttachContainerOptionsBuilder;
use tokio::io::AsyncWriteExt as _;

use super::*;
use crate::tar_transfer::{pack_folders, unpack_folder_into, whole_archive_length};
use crate::OUT_BOUNDARY_VARIABLE;

/// The file in the workspace's `handoff/` the waiting process reads the run's
/// variables from.
pub(super) const RUN_VARIABLES: &str = "handoff/sandbox.env";

/// The command of a container made ahead: it waits for the run's files on its standard
/// input, unpacks them into the workspace, reads the run's variables and runs the job.
/// An image without `tar` cannot take them: its container ends at once, and the run
/// makes its own.
pub(super) fn waiting_command() -> String {
    format!(
        "command -v tar >/dev/null 2>&1 || exit 0; \
         tar -x -f - -C {WORKSPACE} || {{ echo \"handoff: the run's files could not be unpacked in the container made ahead\" >&2; exit 95; }}; \
         set -a; . {WORKSPACE}/{RUN_VARIABLES}; set +a; \
         mkdir -p \"$HOME\" && exec sh {WORKSPACE}/handoff/job.sh"
    )
}

/// What came back on the job's standard error after its boundary line.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum StreamedOut {
    /// No boundary line came: the job did not reach its finish.
    Missing,
    /// The job's own end: the exit status on its boundary line, then a whole tar of
    /// `out/`.
    Whole { status: i64, archive: Vec<u8> },
    /// The boundary line came, but not a whole archive after it (the job was stopped
    /// while it wrote it).
    Cut,
    /// More came than `out/` may hold.
    OverCap,
}

/// The longest the exit status after the boundary may be, with its line's end.
const STATUS_LINE_BYTES: u64 = 24;

/// Finds the boundary line (`\x1e{nonce}\x1e{status}\n`) in a stream of standard
/// error read in chunks of any size: what comes before it is the job's output, what
/// comes after it the exit status and the archive.
#[derive(Debug)]
pub(super) struct BoundarySplit {
    boundary: Vec<u8>,
    /// The end of what was read that may be the start of the boundary, held back from
    /// the output until the next chunk says.
    held: Vec<u8>,
    /// What came after the boundary: the status line, then the archive.
    archive: Option<Vec<u8>>,
    over_cap: bool,
    cap: u64,
}

impl BoundarySplit {
    /// A split at the line that `nonce` makes, for an archive of at most `cap` bytes.
    pub(super) fn new(nonce: &str, cap: u64) -> Self {
        BoundarySplit {
            boundary: format!("\x1e{nonce}\x1e").into_bytes(),
            held: Vec::new(),
            archive: None,
            over_cap: false,
            cap,
        }
    }

    /// Takes the next chunk of standard error; returns what of it (and of what was held
    /// back) is the job's output.
    pub(super) fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.archive.is_some() {
            self.add_to_archive(chunk);
            return Vec::new();
        }
        let mut data = std::mem::take(&mut self.held);
        data.extend_from_slice(chunk);
        if let Some(at) = data
            .windows(self.boundary.len())
            .position(|window| window == self.boundary.as_slice())
        {
            self.archive = Some(Vec::new());
            let after = data.split_off(at + self.boundary.len());
            data.truncate(at);
            self.add_to_archive(&after);
            return data;
        }
        let keep = (1..self.boundary.len().min(data.len() + 1))
            .rev()
            .find(|length| data.ends_with(&self.boundary[..*length]))
            .unwrap_or(0);
        self.held = data.split_off(data.len() - keep);
        data
    }

    fn add_to_archive(&mut self, bytes: &[u8]) {
        let Some(archive) = &mut self.archive else {
            return;
        };
        if self.over_cap
            || (archive.len() + bytes.len()) as u64 > self.cap.saturating_add(STATUS_LINE_BYTES)
        {
            self.over_cap = true;
            archive.clear();
            return;
        }
        archive.extend_from_slice(bytes);
    }

    /// The exit status and the length of the archive after it (from the status line's
    /// end), once both have wholly come.
    fn whole(&self) -> Option<(i64, usize, usize)> {
        let after = self.archive.as_ref().filter(|_| !self.over_cap)?;
        let line_end = after.iter().position(|byte| *byte == b'\n')?;
        let status = std::str::from_utf8(&after[..line_end]).ok()?.parse().ok()?;
        let start = line_end + 1;
        let length = whole_archive_length(&after[start..])?;
        (length as u64 <= self.cap).then_some((status, start, length))
    }

    /// Whether the exit status and a whole archive have come.
    pub(super) fn is_whole(&self) -> bool {
        self.whole().is_some()
    }

    /// The end of the stream: what was held back (output after all), and the archive.
    pub(super) fn finish(self) -> (Vec<u8>, StreamedOut) {
        let whole = self.whole();
        let streamed = match (self.archive, whole) {
            _ if self.over_cap => StreamedOut::OverCap,
            (Some(mut after), Some((status, start, length))) => {
                after.truncate(start + length);
                StreamedOut::Whole {
                    status,
                    archive: after.split_off(start),
                }
            }
            (Some(_), None) => StreamedOut::Cut,
            (None, _) => StreamedOut::Missing,
        };
        (self.held, streamed)
    }
}

/// A random nonce for a run's boundary line.
fn boundary_nonce() -> String {
    format!("handoff-out-archive-{:032x}", rand::random::<u128>())
}

/// Passes the attached container's output to the run's log as it comes, the archive
/// after the boundary line aside, until the container's streams end or the archive is
/// whole (then `whole` is told the job's exit status).
fn follow_attached(
    mut output: std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>,
    >,
    control: JobControl,
    mut split: BoundarySplit,
    whole: tokio::sync::oneshot::Sender<i64>,
) -> tokio::task::JoinHandle<StreamedOut> {
    let report = move |stream, bytes: Vec<u8>| {
        if !bytes.is_empty() {
            control.report(SandboxEvent::Output { stream, bytes });
        }
    };
    tokio::spawn(async move {
        while let Some(next) = output.next().await {
            match next {
                Ok(LogOutput::StdErr { message }) => {
                    report(OutputStream::Stderr, split.feed(&message));
                    if split.is_whole() {
                        break;
                    }
                }
                Ok(LogOutput::StdOut { message } | LogOutput::Console { message }) => {
                    report(OutputStream::Stdout, message.to_vec());
                }
                Ok(LogOutput::StdIn { .. }) => {}
                Err(error) => {
                    tracing::warn!(%error, "the container's output stream broke; the rest of its output is not in the run's log");
                    report(
                        OutputStream::Stderr,
                        format!(
                            "handoff: the sandbox's output could not be read further ({error})\n"
                        )
                        .into_bytes(),
                    );
                    break;
                }
            }
        }
        let (held, streamed) = split.finish();
        report(OutputStream::Stderr, held);
        if let StreamedOut::Whole { status, .. } = &streamed {
            // Nobody waits for it when the container's end came first.
            let _ = whole.send(*status);
        }
        streamed
    })
}

impl DockerSandbox {
    /// Runs `job` in the ready container `id`: its files and `variables` in through the
    /// waiting process's standard input, then followed to its end through the
    /// container's streams, `out/` back from its standard error.
    pub(super) async fn run_in_ready(
        &self,
        id: &str,
        job: &SandboxJob,
        mut control: JobControl,
        variables: &[String],
    ) -> Result<SandboxEnd, SandboxError> {
        let nonce = boundary_nonce();
        let mut text: String = variables
            .iter()
            .filter_map(|variable| variable.split_once('='))
            .map(|(name, value)| format!("{name}='{}'\n", value.replace('\'', r"'\''")))
            .collect();
        text.push_str(&format!("{OUT_BOUNDARY_VARIABLE}='{nonce}'\n"));
        std::fs::write(job.workspace.join(RUN_VARIABLES), text).map_err(|error| {
            SandboxError::Transfer(format!("cannot write the run's variables: {error}"))
        })?;
        let files = pack_folders(&job.workspace, &["handoff", "out"]).map_err(|error| {
            SandboxError::Transfer(format!("cannot pack the run's files: {error}"))
        })?;
        let attached = self
            .docker
            .attach_container(
                id,
                Some(
                    AttachContainerOptionsBuilder::default()
                        .stdin(true)
                        .stdout(true)
                        .stderr(true)
                        .stream(true)
                        .build(),
                ),
            )
            .await
            .map_err(|error| failed(format!("cannot reach the container made ahead: {error}")))?;
        let cap = job.limits.output.archive_bytes();
        let (whole, whole_came) = tokio::sync::oneshot::channel();
        let streamed = follow_attached(
            attached.output,
            control.clone(),
            BoundarySplit::new(&nonce, cap),
            whole,
        );
        let mut input = attached.input;
        let sent = async {
            input.write_all(&files).await?;
            input.flush().await?;
            input.shutdown().await
        }
        .await;
        if let Err(error) = sent {
            return Err(failed(format!(
                "cannot hand the run's files to the container made ahead: {error}"
            )));
        }
        // The job's own end, as its streams tell it, or as the engine does (its exit,
        // its time limit, a cancel), whichever comes first.
        let end = tokio::select! {
            Ok(status) = whole_came => SandboxEnd::Exited(status),
            end = self.wait_for_end(id, job, &mut control) => end?,
        };
        let streamed = match tokio::time::timeout(Duration::from_secs(10), streamed).await {
            Ok(Ok(streamed)) => streamed,
            Ok(Err(error)) => {
                tracing::warn!(container = id, %error, "following the container's output failed");
                StreamedOut::Missing
            }
            Err(_) => {
                tracing::warn!(
                    container = id,
                    "the container's streams did not end within 10 s; its tail may be missing"
                );
                StreamedOut::Missing
            }
        };
        self.out_from_the_stream(id, job, end, streamed).await
    }

    /// `out/` from the archive the job wrote on its standard error when it ended by
    /// itself with a whole one; otherwise copied from the container as for any run.
    async fn out_from_the_stream(
        &self,
        id: &str,
        job: &SandboxJob,
        end: SandboxEnd,
        streamed: StreamedOut,
    ) -> Result<SandboxEnd, SandboxError> {
        match streamed {
            StreamedOut::OverCap => Err(SandboxError::Transfer(format!(
                "cannot copy out/ back: it is over the cap of {} bytes",
                job.limits.output.total_bytes
            ))),
            StreamedOut::Whole { archive, .. } if matches!(end, SandboxEnd::Exited(_)) => {
                match unpack_folder_into(&archive, &job.workspace, "out", &job.limits.output) {
                    Ok(()) => Ok(end),
                    Err(error) => {
                        tracing::info!(container = id, %error, "the job's out/ archive could not be read; out/ is copied from the container");
                        let out = job.workspace.join("out");
                        std::fs::remove_dir_all(&out)
                            .and_then(|()| std::fs::create_dir_all(&out))
                            .map_err(|error| {
                                SandboxError::Transfer(format!("cannot empty out/: {error}"))
                            })?;
                        self.copy_out_back(id, job, end).await
                    }
                }
            }
            StreamedOut::Whole { .. } | StreamedOut::Cut | StreamedOut::Missing => {
                self.copy_out_back(id, job, end).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(split: &mut BoundarySplit, chunks: &[&[u8]]) -> Vec<u8> {
        chunks.iter().flat_map(|chunk| split.feed(chunk)).collect()
    }

    /// A tar of `out/summary.md` as `tar -c` writes it, padded to a whole record; and
    /// the length of the archive up to its end.
    fn out_archive() -> (Vec<u8>, usize) {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(5);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, "out/summary.md", &b"done\n"[..])
            .unwrap();
        let mut bytes = builder.into_inner().unwrap();
        let end = bytes.len();
        bytes.resize(10240, 0);
        (bytes, end)
    }

    #[test]
    fn the_archive_after_the_boundary_is_kept_apart_from_the_output() {
        let (archive, end) = out_archive();
        let mut split = BoundarySplit::new("n1", 1 << 20);
        let output = fed(
            &mut split,
            &[
                b"handoff: the agent exited with 0\n\x1en1\x1e0\n",
                &archive[..700],
            ],
        );
        assert_eq!(output, b"handoff: the agent exited with 0\n");
        assert!(!split.is_whole(), "half an archive is not whole");
        assert!(fed(&mut split, &[&archive[700..]]).is_empty());
        assert!(split.is_whole());
        assert_eq!(
            split.finish(),
            (
                Vec::new(),
                StreamedOut::Whole {
                    status: 0,
                    archive: archive[..end].to_vec()
                }
            )
        );
    }

    #[test]
    fn a_boundary_split_across_chunks_is_still_found_with_its_status() {
        let (archive, end) = out_archive();
        let mut split = BoundarySplit::new("nonce", 1 << 20);
        let output = fed(
            &mut split,
            &[b"log\n\x1enon", b"ce\x1e", b"3", b"\n", &archive],
        );
        assert_eq!(output, b"log\n");
        assert_eq!(
            split.finish().1,
            StreamedOut::Whole {
                status: 3,
                archive: archive[..end].to_vec()
            }
        );
    }

    #[test]
    fn an_archive_the_stream_ends_in_the_middle_of_is_cut() {
        let (archive, _) = out_archive();
        let mut split = BoundarySplit::new("n", 1 << 20);
        fed(&mut split, &[b"\x1en\x1e0\n", &archive[..600]]);
        assert!(!split.is_whole());
        assert_eq!(split.finish().1, StreamedOut::Cut);
    }

    #[test]
    fn a_status_that_is_not_a_number_never_makes_the_end_whole() {
        let (archive, _) = out_archive();
        let mut split = BoundarySplit::new("n", 1 << 20);
        fed(&mut split, &[b"\x1en\x1ezero\n", &archive]);
        assert!(!split.is_whole());
        assert_eq!(split.finish().1, StreamedOut::Cut);
    }

    #[test]
    fn output_that_only_looks_like_the_boundary_start_reaches_the_log() {
        let mut split = BoundarySplit::new("nonce", 1024);
        let mut output = fed(&mut split, &[b"a\x1enon", b"sense\n"]);
        assert_eq!(output, b"a\x1enonsense\n");
        let tail = fed(&mut split, &[b"ends with \x1eno"]);
        output.extend(tail);
        let (held, streamed) = split.finish();
        output.extend(held);
        assert_eq!(output, b"a\x1enonsense\nends with \x1eno");
        assert_eq!(streamed, StreamedOut::Missing);
    }

    #[test]
    fn an_archive_over_the_cap_is_refused() {
        let mut split = BoundarySplit::new("n", 4);
        fed(
            &mut split,
            &[b"\x1en\x1e0\n1234567890", b"12345678901234567890"],
        );
        assert_eq!(split.finish().1, StreamedOut::OverCap);
    }
}
