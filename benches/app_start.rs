//! The desktop app's start-up time and idle memory, measured on the release build under
//! Xvfb (1280×800, no GPU), with a data folder holding the demo board (two repositories,
//! five feedback items in five columns):
//!
//! - start to first paint: from spawning `handoff-desktop` to the log's line "the window
//!   painted its first board", which the page sends two frames after it drew the board
//!   (the app's own figure, from `main` on, is shown beside it);
//! - idle memory: ten seconds after the first paint, the proportional set size (PSS:
//!   each shared page counted once, split among the processes sharing it) of the app and
//!   every process it started (WebKit's web and network processes), summed.
//!
//! Five starts with WebKit's defaults, then five with its compositing turned off
//! (`WEBKIT_DISABLE_COMPOSITING_MODE=1`), as machines without a GPU may run it.
//!
//! Run: `cargo build --release -p handoff-desktop && cargo bench --bench app_start`.
//! Figures: benches/results/app_start.md.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use handoff::Store;
use handoff_test_support::seed;
use handoff_test_support::virtual_display::VirtualDisplay;

const ROUNDS: usize = 5;
const FIRST_PAINT: &str = "the window painted its first board";

struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Err(error) = self.0.kill() {
            eprintln!("could not stop a process: {error}");
        }
        if let Err(error) = self.0.wait() {
            eprintln!("could not wait for a process: {error}");
        }
    }
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name, in parentheses, may hold spaces: the fields after it are plain.
    let after_name = stat.rsplit_once(')')?.1;
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// `pid` and every process below it, with their names.
fn process_tree(root: u32) -> Vec<(u32, String)> {
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_string_lossy().parse().ok())
        .collect();
    let mut tree = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for pid in &all {
            if !tree.contains(pid) && parent_of(*pid).is_some_and(|parent| tree.contains(&parent)) {
                tree.push(*pid);
                grew = true;
            }
        }
    }
    tree.into_iter()
        .map(|pid| {
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .unwrap_or_default()
                .trim()
                .to_owned();
            (pid, name)
        })
        .collect()
}

/// The PSS of process `pid`, in KiB.
fn pss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("Pss:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One start: milliseconds to the first paint (measured outside, and as the app says),
/// then the PSS of each process after ten idle seconds, in KiB.
fn one_start(binary: &Path, display: &str, compositing: bool) -> (u128, u64, Vec<(String, u64)>) {
    let data = tempfile::tempdir().expect("a data folder");
    let config = tempfile::tempdir().expect("a config folder");
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(async {
            let store = Store::open_in(data.path()).await.expect("the store");
            seed::seed_dashboard(&store).await;
            store.close().await;
        });
    let log = data.path().join("logs").join("handoff.log");
    let mut command = Command::new(binary);
    command
        .env("DISPLAY", display)
        .env("HANDOFF_DATA_DIR", data.path())
        .env("XDG_CONFIG_HOME", config.path())
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if compositing {
        command.env_remove("WEBKIT_DISABLE_COMPOSITING_MODE");
    } else {
        command.env("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    }
    let started = Instant::now();
    let app = Stopped(command.spawn().expect("the app starts"));
    let deadline = started + Duration::from_secs(60);
    let (outside, inside) = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(line) = text.lines().find(|line| line.contains(FIRST_PAINT)) {
            let inside = line
                .split("milliseconds=")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|number| number.parse().ok())
                .unwrap_or(0);
            break (started.elapsed().as_millis(), inside);
        }
        assert!(
            Instant::now() < deadline,
            "no first paint within a minute: {text}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    std::thread::sleep(Duration::from_secs(10));
    let memory = process_tree(app.0.id())
        .into_iter()
        .map(|(pid, name)| (name, pss_kib(pid)))
        .collect();
    drop(app);
    (outside, inside, memory)
}

fn median(mut values: Vec<u128>) -> u128 {
    values.sort_unstable();
    values[values.len() / 2]
}

fn main() {
    let binary = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/handoff-desktop");
    if !binary.is_file() {
        eprintln!(
            "{} is not built: run `cargo build --release -p handoff-desktop` first",
            binary.display()
        );
        std::process::exit(2);
    }
    let display = VirtualDisplay::start();
    let display = display.name();
    // One start to warm the disk cache; not counted.
    one_start(&binary, display, true);
    println!("## The desktop app: start to first paint, and idle memory\n");
    println!("| WebKit | start to first paint (median of {ROUNDS}) | as the app says (from main) | idle PSS, all processes (median) | per process (last start) |");
    println!("|---|---|---|---|---|");
    for compositing in [true, false] {
        let mut outside = Vec::new();
        let mut inside = Vec::new();
        let mut totals = Vec::new();
        let mut last = Vec::new();
        for _ in 0..ROUNDS {
            let (to_paint, said, memory) = one_start(&binary, display, compositing);
            outside.push(to_paint);
            inside.push(u128::from(said));
            totals.push(u128::from(memory.iter().map(|(_, kib)| kib).sum::<u64>()));
            last = memory;
        }
        let per_process: Vec<String> = last
            .iter()
            .map(|(name, kib)| format!("{name} {:.0} MB", *kib as f64 / 1024.0))
            .collect();
        println!(
            "| {} | {} ms | {} ms | {:.0} MB | {} |",
            if compositing {
                "WebKit's defaults (as the app runs)"
            } else {
                "compositing off (WEBKIT_DISABLE_COMPOSITING_MODE=1)"
            },
            median(outside),
            median(inside),
            median(totals) as f64 / 1024.0,
            per_process.join(", ")
        );
    }
}
