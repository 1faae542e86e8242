//! A job in its container: the workspace copied in (owned by the agent's user), the
//! container started, its output followed into the run's log, its end awaited (exit,
//! time limit, cancel), and `out/` copied back within the output caps.

use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, LogsOptionsBuilder, UploadToContainerOptionsBuilder,
    WaitContainerOptionsBuilder,
};

use super::*;

impl DockerSandbox {
    pub(super) async fn run_in(
        &self,
        id: &str,
        job: &SandboxJob,
        control: JobControl,
        owner: (u64, u64),
    ) -> Result<SandboxEnd, SandboxError> {
        self.copy_workspace_in(id, job, owner).await?;
        self.docker
            .start_container(id, None)
            .await
            .map_err(|error| failed(format!("cannot start the container: {error}")))?;
        self.follow_to_the_end(id, job, control).await
    }

    /// The started job's output followed into the run's log until its end, then
    /// `out/` brought back.
    pub(super) async fn follow_to_the_end(
        &self,
        id: &str,
        job: &SandboxJob,
        mut control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let logs = self.follow_output(id, control.clone());
        let end = self.wait_for_end(id, job, &mut control).await?;
        if tokio::time::timeout(Duration::from_secs(10), logs)
            .await
            .is_err()
        {
            tracing::warn!(
                container = id,
                "the container's log did not end within 10 s; its tail may be missing"
            );
        }

        self.copy_out_back(id, job, end).await
    }

    /// The workspace, packed as owned by `owner`, into the container's volume (its root
    /// is read-only).
    pub(super) async fn copy_workspace_in(
        &self,
        id: &str,
        job: &SandboxJob,
        owner: (u64, u64),
    ) -> Result<(), SandboxError> {
        let archive = pack_dir_owned_by(&job.workspace, "workspace", false, Some(owner)).map_err(
            |error| SandboxError::Transfer(format!("cannot pack the workspace: {error}")),
        )?;
        self.docker
            .upload_to_container(
                id,
                Some(
                    UploadToContainerOptionsBuilder::default()
                        .path(VOLUME)
                        .build(),
                ),
                bollard::body_full(archive.into()),
            )
            .await
            .map_err(|error| {
                SandboxError::Transfer(format!("cannot copy the workspace in: {error}"))
            })?;
        Ok(())
    }

    /// Passes the container's output to the run's log as it comes, until it ends.
    fn follow_output(&self, id: &str, control: JobControl) -> tokio::task::JoinHandle<()> {
        let mut stream = self.docker.logs(
            id,
            Some(
                LogsOptionsBuilder::default()
                    .follow(true)
                    .stdout(true)
                    .stderr(true)
                    .build(),
            ),
        );
        tokio::spawn(async move {
            while let Some(next) = stream.next().await {
                let output = match next {
                    Ok(output) => output,
                    Err(error) => {
                        // The job goes on and its end is still awaited; only its
                        // output stops reaching the run's log.
                        tracing::warn!(%error, "the container's output stream broke; the rest of its output is not in the run's log");
                        control.report(SandboxEvent::Output {
                            stream: OutputStream::Stderr,
                            bytes: format!("handoff: the sandbox's output could not be read further ({error})\n").into_bytes(),
                        });
                        break;
                    }
                };
                let (stream, bytes) = match output {
                    bollard::container::LogOutput::StdErr { message } => {
                        (OutputStream::Stderr, message)
                    }
                    bollard::container::LogOutput::StdOut { message }
                    | bollard::container::LogOutput::Console { message } => {
                        (OutputStream::Stdout, message)
                    }
                    bollard::container::LogOutput::StdIn { .. } => continue,
                };
                control.report(SandboxEvent::Output {
                    stream,
                    bytes: bytes.to_vec(),
                });
            }
        })
    }

    /// Waits for the job's end: its exit, its time limit (then it is killed), or the
    /// owner's cancel (likewise).
    pub(super) async fn wait_for_end(
        &self,
        id: &str,
        job: &SandboxJob,
        control: &mut JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let mut wait = self.docker.wait_container(
            id,
            Some(
                WaitContainerOptionsBuilder::default()
                    .condition("not-running")
                    .build(),
            ),
        );
        let end = tokio::select! {
            result = wait.next() => match result {
                Some(Ok(response)) => SandboxEnd::Exited(response.status_code),
                // A non-zero exit comes back as an error carrying the code.
                Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => SandboxEnd::Exited(code),
                Some(Err(error)) => return Err(failed(format!("lost the container while waiting: {error}"))),
                None => return Err(failed("the engine stopped answering while the job ran")),
            },
            _ = tokio::time::sleep(job.timeout) => {
                self.kill(id).await;
                SandboxEnd::TimedOut
            }
            _ = control.cancelled() => {
                self.kill(id).await;
                SandboxEnd::Cancelled
            }
        };
        Ok(end)
    }

    /// `out/` copied back into the host's workspace, within the output caps; `end` as
    /// the result (also when the job never made an `out/`).
    pub(super) async fn copy_out_back(
        &self,
        id: &str,
        job: &SandboxJob,
        end: SandboxEnd,
    ) -> Result<SandboxEnd, SandboxError> {
        let mut download = self.docker.download_from_container(
            id,
            Some(
                DownloadFromContainerOptionsBuilder::default()
                    .path(&format!("{WORKSPACE}/out"))
                    .build(),
            ),
        );
        let mut archive = Vec::new();
        while let Some(chunk) = download.next().await {
            match chunk {
                Ok(bytes)
                    if (archive.len() + bytes.len()) as u64 > job.limits.output.archive_bytes() =>
                {
                    return Err(SandboxError::Transfer(format!(
                        "cannot copy out/ back: it is over the cap of {} bytes",
                        job.limits.output.total_bytes
                    )))
                }
                Ok(bytes) => archive.extend_from_slice(&bytes),
                // No out/ at all (the job never got that far): nothing to bring back.
                Err(_) if archive.is_empty() => return Ok(end),
                Err(error) => {
                    return Err(SandboxError::Transfer(format!(
                        "cannot copy out/ back: {error}"
                    )))
                }
            }
        }
        // The archive holds `out/...`; the host workspace gets it as `out/`.
        unpack_into(&archive, &job.workspace, 0, false, &job.limits.output)
            .map_err(|error| SandboxError::Transfer(format!("cannot unpack out/: {error}")))?;
        Ok(end)
    }
}
