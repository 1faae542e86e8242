//! The `local` backend: the job as a plain process in the host workspace. No isolation
//! at all — for development and tests only. The process gets a clean environment (the
//! PATH, HOME and locale, Handoff's variables and the agent's own), runs in its own
//! process group, and the whole group is killed when it ends, on timeout or cancel —
//! with every process that carries the job's mark in its environment, so that one that
//! left the group (`setsid`, a daemon) goes too.

use std::net::Ipv4Addr;
use std::process::Stdio;

use tokio::io::AsyncReadExt as _;

use super::key_forwarding::KeyForwarder;
use super::{JobControl, OutputStream, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use handoff_domain::SandboxBackend;

#[derive(Debug, Clone, Default)]
pub struct LocalSandbox;

fn unavailable(detail: String) -> SandboxError {
    SandboxError::Unavailable {
        backend: SandboxBackend::Local,
        detail,
    }
}

/// Kills every process of group `pid`.
async fn kill_group(pid: u32) {
    let killed = tokio::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    match killed {
        // `kill` fails when the group is gone already: the usual case after an exit.
        Ok(status) if !status.success() => tracing::trace!(pid, "no process group left to kill"),
        Ok(_) => {}
        Err(error) => tracing::warn!(pid, %error, "cannot run `kill` on the job's process group"),
    }
}

/// Waits for the killed job so that it leaves no zombie.
async fn reap(child: &mut tokio::process::Child) {
    if let Err(error) = child.wait().await {
        tracing::warn!(%error, "waiting for the killed job");
    }
}

/// Forwards a pipe to the job's events until it closes.
fn pump<R>(mut pipe: R, stream: OutputStream, control: JobControl) -> tokio::task::JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buffer).await {
                Ok(0) => return,
                Err(error) => {
                    tracing::warn!(?stream, %error, "reading the job's output stopped");
                    return;
                }
                Ok(read) => control.report(SandboxEvent::Output {
                    stream,
                    bytes: buffer[..read].to_vec(),
                }),
            }
        }
    })
}

impl LocalSandbox {
    pub async fn preflight(&self) -> Result<(), SandboxError> {
        // The job is a shell script whose process group is killed when it ends: a Unix
        // machine's (Linux, macOS). Windows runs jobs in Docker or E2B.
        if !cfg!(unix) {
            return Err(unavailable(
                "the local backend needs a Unix shell and process groups; on Windows, run \
                 on Docker or E2B"
                    .to_owned(),
            ));
        }
        for program in ["sh", "git"] {
            let found = tokio::process::Command::new(program)
                .arg("--version")
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .await;
            if program == "git" && found.is_err() {
                return Err(unavailable("git is not installed".to_owned()));
            }
        }
        Ok(())
    }

    pub async fn run(
        &self,
        job: &SandboxJob,
        mut control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let mark = format!("{}-{:016x}", job.run_id, rand::random::<u64>());
        let mut command = job_command(job, &mark);
        // Even here the agent gets a placeholder and an endpoint on this machine that
        // adds the key, so that what it prints or writes cannot hold the key.
        let _forwarder = match &job.agent_key {
            Some(key) => {
                let forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), key)
                    .await
                    .map_err(|error| {
                        unavailable(format!("cannot start the agent's key forwarder: {error}"))
                    })?;
                let endpoint = format!("http://{}", forwarder.address());
                for (name, value) in key.sandbox_environment(Some(&endpoint)) {
                    command.env(name, value);
                }
                Some(forwarder)
            }
            None => None,
        };
        let mut child = command
            .spawn()
            .map_err(|error| unavailable(format!("cannot start sh: {error}")))?;
        let pid = child.id().unwrap_or_default();
        control.report(SandboxEvent::Started {
            sandbox_id: leftover_id(pid, process_start_time(pid), &mark),
        });
        let stdout = pump(
            child.stdout.take().expect("piped"),
            OutputStream::Stdout,
            control.clone(),
        );
        let stderr = pump(
            child.stderr.take().expect("piped"),
            OutputStream::Stderr,
            control.clone(),
        );

        let end = tokio::select! {
            status = child.wait() => {
                let status = status.map_err(|error| SandboxError::Failed {
                    backend: SandboxBackend::Local,
                    detail: error.to_string(),
                })?;
                // Anything the job left running goes too.
                kill_group(pid).await;
                kill_marked(&mark);
                SandboxEnd::Exited(status.code().map(i64::from).unwrap_or(-1))
            }
            _ = tokio::time::sleep(job.timeout) => {
                kill_group(pid).await;
                kill_marked(&mark);
                reap(&mut child).await;
                SandboxEnd::TimedOut
            }
            _ = control.cancelled() => {
                kill_group(pid).await;
                kill_marked(&mark);
                reap(&mut child).await;
                SandboxEnd::Cancelled
            }
        };
        drain_output(stdout, stderr).await;
        Ok(end)
    }

    /// Kills a job's process group left by a crash (`pid:N:start:T`), but only while
    /// process N is still the one that started at T: after a restart the number may
    /// belong to another program, which is left alone.
    pub async fn remove_leftover(&self, sandbox_id: Option<&str>) -> Result<(), SandboxError> {
        let Some(leftover) = sandbox_id.and_then(parse_leftover_id) else {
            return Ok(());
        };
        if let Some(mark) = &leftover.mark {
            kill_marked(mark);
        }
        let (pid, recorded_start) = (leftover.pid, leftover.start);
        match (recorded_start, process_start_time(pid)) {
            (Some(recorded), Some(now)) if recorded == now => kill_group(pid).await,
            (_, None) => tracing::debug!(pid, "the leftover job is gone already"),
            (Some(_), Some(_)) => {
                tracing::info!(pid, "process {pid} is another program now; the leftover job is gone")
            }
            (None, Some(_)) => tracing::warn!(
                pid,
                "the leftover job's start time was not recorded, so process {pid} cannot be told from a program that took its number; it is left alone"
            ),
        }
        Ok(())
    }
}

/// The job's script as a process: a clean environment (the path, the home folder, the
/// workspace and the job's `mark`), its output piped, in a process group of its own so
/// that what the job starts is killed with it.
fn job_command(job: &SandboxJob, mark: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command
        .arg(job.workspace.join("handoff").join("job.sh"))
        .current_dir(job.workspace.join("repo"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("HANDOFF_WORKSPACE", &job.workspace)
        .env(JOB_MARK_VARIABLE, mark)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    command
}

/// Waits a little for the job's output to be read to its end.
async fn drain_output(stdout: tokio::task::JoinHandle<()>, stderr: tokio::task::JoinHandle<()>) {
    let drain = std::time::Duration::from_secs(5);
    for (name, pipe) in [("stdout", stdout), ("stderr", stderr)] {
        if tokio::time::timeout(drain, pipe).await.is_err() {
            // A process the job started keeps the pipe open; the group was killed.
            tracing::warn!(pipe = name, "the job's output did not close within 5 s");
        }
    }
}

/// The variable that marks every process of a local job, whatever group or session it
/// moves to.
const JOB_MARK_VARIABLE: &str = "HANDOFF_JOB_MARK";

/// The sandbox id of a local job: its process id, where the system tells the moment it
/// started (so that a reused number is not taken for it), and its mark.
fn leftover_id(pid: u32, start: Option<u64>, mark: &str) -> String {
    match start {
        Some(start) => format!("pid:{pid}:start:{start}:mark:{mark}"),
        None => format!("pid:{pid}:mark:{mark}"),
    }
}

/// What a local job's sandbox id says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Leftover {
    pid: u32,
    start: Option<u64>,
    mark: Option<String>,
}

/// Reads a local job's sandbox id back (older ones hold only `pid:N`).
fn parse_leftover_id(id: &str) -> Option<Leftover> {
    let rest = id.strip_prefix("pid:")?;
    let (rest, mark) = match rest.split_once(":mark:") {
        Some((rest, mark)) => (rest, Some(mark.to_owned())),
        None => (rest, None),
    };
    let (pid, start) = match rest.split_once(":start:") {
        Some((pid, start)) => (pid, Some(start.parse().ok()?)),
        None => (rest, None),
    };
    let pid: u32 = pid.parse().ok()?;
    (pid > 1).then_some(Leftover { pid, start, mark })
}

/// Kills every process of this account whose environment carries `mark` (a job's
/// processes that left its group); on systems without `/proc`, nothing.
fn kill_marked(mark: &str) {
    let wanted = format!("{JOB_MARK_VARIABLE}={mark}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        // Unreadable (another account's, or gone meanwhile): not the job's.
        let Ok(environment) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environment
            .split(|byte| *byte == 0)
            .any(|variable| variable == wanted.as_bytes())
        {
            let killed = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            match killed {
                Ok(status) if status.success() => {
                    tracing::info!(pid, "killed a process the job left outside its group")
                }
                Ok(_) => tracing::debug!(pid, "a marked process ended before it was killed"),
                Err(error) => tracing::warn!(pid, %error, "cannot run `kill` on a marked process"),
            }
        }
    }
}

/// When process `pid` started, in clock ticks after boot (Linux's `/proc/PID/stat`,
/// field 22); `None` when it is gone or the system does not say.
fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count the
    // fields after its closing parenthesis, which start at field 3.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

// Process groups and `sleep` are Unix's.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn group_leader_sleeping() -> std::process::Child {
        use std::os::unix::process::CommandExt as _;
        std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep starts")
    }

    /// Whether `pid` runs (a killed process nobody has reaped yet is a zombie: `Z`).
    fn running(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let after_name = stat[stat.rfind(')')? + 1..].to_owned();
                after_name
                    .split_whitespace()
                    .next()
                    .map(|state| state != "Z")
            })
            .unwrap_or(false)
    }

    fn alive(child: &mut std::process::Child) -> bool {
        std::thread::sleep(std::time::Duration::from_millis(200));
        matches!(child.try_wait(), Ok(None))
    }

    #[tokio::test]
    async fn a_leftover_is_killed_only_while_its_number_is_still_the_same_process() {
        let mut other_program = group_leader_sleeping();
        let pid = other_program.id();
        let start = process_start_time(pid).expect("Linux tells when a process started");

        // The number was recorded for a job that started at another moment.
        let reused = leftover_id(pid, Some(start + 1), "no-such-mark");
        LocalSandbox.remove_leftover(Some(&reused)).await.unwrap();
        assert!(
            alive(&mut other_program),
            "another program with a reused number is left alone"
        );
        let unverifiable = format!("pid:{pid}");
        LocalSandbox
            .remove_leftover(Some(&unverifiable))
            .await
            .unwrap();
        assert!(
            alive(&mut other_program),
            "a number without a start time is not trusted"
        );

        let same = leftover_id(pid, Some(start), "no-such-mark");
        LocalSandbox.remove_leftover(Some(&same)).await.unwrap();
        assert!(!alive(&mut other_program), "the job's own group is killed");
        other_program.wait().unwrap();
    }

    #[tokio::test]
    async fn a_process_that_left_the_jobs_group_and_session_ends_with_the_job() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(workspace.path().join("repo")).unwrap();
        std::fs::create_dir_all(workspace.path().join("handoff")).unwrap();
        std::fs::write(
            workspace.path().join("handoff").join("job.sh"),
            "setsid sh -c 'echo $$ > \"$HANDOFF_WORKSPACE/escaped.pid\"; exec sleep 60' \
             </dev/null >/dev/null 2>&1 &\n\
             while [ ! -s \"$HANDOFF_WORKSPACE/escaped.pid\" ]; do sleep 0.05; done\n\
             exit 0\n",
        )
        .unwrap();
        let job = SandboxJob {
            run_id: handoff_domain::RunId(7),
            workspace: workspace.path().to_owned(),
            kept_copy: None,
            agent_key: None,
            timeout: std::time::Duration::from_secs(30),
            limits: super::super::ResourceLimits::default(),
        };
        let (events, _received) = tokio::sync::mpsc::unbounded_channel();
        let (_cancel, cancelled) = tokio::sync::watch::channel(false);
        let control = JobControl {
            events,
            cancel: cancelled,
        };

        let end = LocalSandbox.run(&job, control).await.unwrap();

        assert_eq!(end, SandboxEnd::Exited(0));
        let escaped: u32 = std::fs::read_to_string(workspace.path().join("escaped.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(
            !running(escaped),
            "process {escaped} left the group with setsid and outlived the job"
        );
    }

    #[test]
    fn sandbox_ids_read_back_and_nonsense_is_ignored() {
        assert_eq!(
            parse_leftover_id("pid:4242:start:99:mark:7-ab"),
            Some(Leftover {
                pid: 4242,
                start: Some(99),
                mark: Some("7-ab".to_owned())
            })
        );
        assert_eq!(
            parse_leftover_id("pid:4242"),
            Some(Leftover {
                pid: 4242,
                start: None,
                mark: None
            })
        );
        assert_eq!(parse_leftover_id("pid:1:start:5"), None);
        assert_eq!(parse_leftover_id("pid:x"), None);
        assert_eq!(parse_leftover_id("container-abc"), None);
    }
}
