//! The program a gate runs: Handoff's own `handoff-egress`, a Linux program for the
//! machine the engine runs its containers on, found where `HANDOFF_EGRESS_PROGRAM` says,
//! else beside Handoff (or one folder up, or in a macOS app's `Resources`); stamped by
//! its size and time so a gate of an older program is made anew, and packed for the
//! engine to copy in.
//!
//! The engine's containers are Linux whatever the host: on macOS and Windows the
//! packages ship `handoff-egress-linux-x86_64` and `handoff-egress-linux-aarch64`, and a
//! program is chosen by its ELF header (a 64-bit little-endian Linux program for the
//! engine's machine), never by the host's own operating system.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::*;

/// The `handoff-egress` program this installation copies into its gates.
#[derive(Debug, Clone)]
pub struct GateProgram {
    pub path: PathBuf,
    /// Its size and modification time: a new build is a new gate.
    pub stamp: String,
}

/// The machines a gate program may be built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateMachine {
    X86_64,
    Aarch64,
}

impl GateMachine {
    /// The machine of an engine's `Architecture` (`x86_64`, `amd64`, `aarch64`, `arm64`).
    pub fn of_engine(architecture: &str) -> Option<GateMachine> {
        match architecture.trim() {
            "x86_64" | "amd64" => Some(GateMachine::X86_64),
            "aarch64" | "arm64" => Some(GateMachine::Aarch64),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GateMachine::X86_64 => "x86_64",
            GateMachine::Aarch64 => "aarch64",
        }
    }
}

/// What a file's first bytes say it is, for a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramKind {
    /// A 64-bit little-endian ELF program for `GateMachine` (Linux's format).
    Linux(GateMachine),
    /// An ELF program for another machine (its `e_machine`), or 32-bit, or big-endian.
    OtherElf,
    /// Not an ELF program at all (a macOS Mach-O or a Windows PE program, a script).
    NotElf,
}

/// The kind of program whose first bytes are `header` (at least 20 are needed).
pub fn program_kind(header: &[u8]) -> ProgramKind {
    if header.len() < 20 || &header[..4] != b"\x7fELF" {
        return ProgramKind::NotElf;
    }
    // EI_CLASS 2 is 64-bit, EI_DATA 1 little-endian; e_machine is at offset 18.
    if header[4] != 2 || header[5] != 1 {
        return ProgramKind::OtherElf;
    }
    match u16::from_le_bytes([header[18], header[19]]) {
        62 => ProgramKind::Linux(GateMachine::X86_64),
        183 => ProgramKind::Linux(GateMachine::Aarch64),
        _ => ProgramKind::OtherElf,
    }
}

/// Where a program may be: the variable's path alone, or the usual names in the folders
/// around the running program.
fn candidates() -> Result<Vec<PathBuf>, String> {
    if let Some(path) = std::env::var_os(GATE_PROGRAM_VARIABLE) {
        return Ok(vec![PathBuf::from(path)]);
    }
    let running = std::env::current_exe()
        .map_err(|error| format!("cannot tell where Handoff runs from: {error}"))?;
    let mut folders: Vec<PathBuf> = running
        .ancestors()
        .skip(1)
        .take(2)
        .map(Path::to_path_buf)
        .collect();
    // A macOS app: the program is in Contents/MacOS, its resources in Contents/Resources.
    if let Some(contents) = running.parent().and_then(Path::parent) {
        folders.push(contents.join("Resources"));
    }
    let names = [
        GATE_PROGRAM.to_owned(),
        format!("{GATE_PROGRAM}-linux-x86_64"),
        format!("{GATE_PROGRAM}-linux-aarch64"),
    ];
    Ok(folders
        .iter()
        .flat_map(|folder| names.iter().map(move |name| folder.join(name)))
        .collect())
}

/// The programs installed, and every place looked at for one.
#[derive(Debug)]
struct Installed {
    found: Vec<Found>,
    looked_at: Vec<PathBuf>,
}

/// A program found, with its kind.
#[derive(Debug, Clone)]
struct Found {
    program: GateProgram,
    kind: ProgramKind,
}

fn look_at(path: &Path) -> Option<Found> {
    let metadata = std::fs::metadata(path).ok().filter(|meta| meta.is_file())?;
    let mut header = [0u8; 20];
    let read = std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut header))
        .ok()?;
    let modified = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos());
    Some(Found {
        program: GateProgram {
            path: path.to_path_buf(),
            stamp: format!("{}-{modified}", metadata.len()),
        },
        kind: program_kind(&header[..read]),
    })
}

/// Of `found`, the first program for `machine`; else why none will do.
fn choose(
    found: &[Found],
    looked_at: &[PathBuf],
    engine_architecture: &str,
) -> Result<GateProgram, String> {
    let machine = GateMachine::of_engine(engine_architecture).ok_or_else(|| {
        format!("the engine's machine {engine_architecture:?} has no egress gate program")
    })?;
    if let Some(fitting) = found
        .iter()
        .find(|found| found.kind == ProgramKind::Linux(machine))
    {
        return Ok(fitting.program.clone());
    }
    if found.is_empty() {
        return Err(format!(
            "the egress gate's program {GATE_PROGRAM} is not installed (looked at {})",
            looked_at
                .iter()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Err(format!(
        "the engine runs Linux containers on {}, and no {GATE_PROGRAM} for it is installed \
         ({} {}): it cannot run beside the sandboxes, so no run can reach the network or \
         its provider",
        machine.as_str(),
        found
            .iter()
            .map(|found| found.program.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if found.len() == 1 {
            "is a program for another machine"
        } else {
            "are programs for other machines"
        }
    ))
}

/// The program for an engine whose containers run on `engine_architecture` (its
/// `Architecture`, as `docker info` says it).
pub fn gate_program_for(engine_architecture: &str) -> Result<GateProgram, String> {
    static FOUND: OnceLock<Result<Installed, String>> = OnceLock::new();
    let Installed { found, looked_at } = FOUND
        .get_or_init(|| {
            let looked_at = candidates()?;
            let found = looked_at.iter().filter_map(|path| look_at(path)).collect();
            Ok(Installed { found, looked_at })
        })
        .as_ref()
        .map_err(Clone::clone)?;
    choose(found, looked_at, engine_architecture)
}

/// A tar archive holding the program, executable by anyone.
pub(super) fn program_archive(path: &Path) -> std::io::Result<Vec<u8>> {
    let program = std::fs::read(path)?;
    let mut archive = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(program.len() as u64);
    header.set_mode(0o555);
    header.set_uid(0);
    header.set_gid(0);
    header.set_cksum();
    archive.append_data(&mut header, GATE_PROGRAM, program.as_slice())?;
    archive.into_inner()
}

#[cfg(test)]
#[path = "gate_program_tests.rs"]
mod tests;
