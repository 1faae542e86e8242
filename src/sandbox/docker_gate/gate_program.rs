//! The program a gate runs: Handoff's own `handoff-egress`, found beside Handoff (or
//! where `HANDOFF_EGRESS_PROGRAM` says), stamped by its size and time so a gate of an
//! older program is made anew, and packed for the engine to copy in.

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

/// Finds the program: `HANDOFF_EGRESS_PROGRAM`, else beside the running program (or one
/// folder up, where a test's program sits below the built programs).
pub fn gate_program() -> Result<GateProgram, String> {
    static FOUND: OnceLock<Result<GateProgram, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let candidates: Vec<PathBuf> = match std::env::var_os(GATE_PROGRAM_VARIABLE) {
                Some(path) => vec![PathBuf::from(path)],
                None => {
                    let running = std::env::current_exe()
                        .map_err(|error| format!("cannot tell where Handoff runs from: {error}"))?;
                    running
                        .ancestors()
                        .skip(1)
                        .take(2)
                        .map(|folder| folder.join(GATE_PROGRAM))
                        .collect()
                }
            };
            for candidate in &candidates {
                if let Ok(metadata) = std::fs::metadata(candidate) {
                    if metadata.is_file() {
                        let modified = metadata
                            .modified()
                            .ok()
                            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                            .map_or(0, |since| since.as_nanos());
                        return Ok(GateProgram {
                            path: candidate.clone(),
                            stamp: format!("{}-{modified}", metadata.len()),
                        });
                    }
                }
            }
            Err(format!(
                "the egress gate's program {GATE_PROGRAM} is not installed (looked at {})",
                candidates
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
        .clone()
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
