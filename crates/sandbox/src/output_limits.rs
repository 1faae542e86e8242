//! What a sandbox may bring back: caps on the `out/` folder a job leaves (each file, the
//! bundle of the agent's commits, all files together, how many entries) and on the
//! archive it travels in from Docker or E2B. A gzip bomb, a sparse file of terabytes or a
//! flood of files is refused with a clear reason, never unpacked or read whole.

use std::path::Path;

/// The caps on a job's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// One file of `out/` (the stage's text output, results, summary, usage).
    pub file_bytes: u64,
    /// `out/changes.bundle`, the agent's commits.
    pub bundle_bytes: u64,
    /// Everything in `out/` together, and the unpacked archive it comes in.
    pub total_bytes: u64,
    /// Files and folders in `out/`.
    pub entries: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            file_bytes: 64 * 1024 * 1024,
            bundle_bytes: 512 * 1024 * 1024,
            total_bytes: 1024 * 1024 * 1024,
            entries: 10_000,
        }
    }
}

/// The name of the bundle in `out/`.
pub const BUNDLE_NAME: &str = "changes.bundle";

/// Why a job's output was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputRefused {
    #[error("{path} is {bytes} bytes, over the cap of {cap} bytes")]
    FileTooLarge { path: String, bytes: u64, cap: u64 },
    #[error("the output holds {bytes} bytes or more, over the cap of {cap} bytes")]
    TooLarge { bytes: u64, cap: u64 },
    #[error("the output holds more than {cap} files and folders")]
    TooManyEntries { cap: usize },
    #[error("{path} is {what}, which an output may not hold")]
    NotAPlainFile { path: String, what: &'static str },
    #[error("the output cannot be read: {0}")]
    Unreadable(String),
}

impl OutputLimits {
    /// The cap of the archive that carries an output (its files and their headers).
    pub fn archive_bytes(&self) -> u64 {
        self.total_bytes + self.total_bytes / 8 + 1024 * 1024
    }

    /// The cap of the file at `relative` (a path inside `out/`).
    pub fn cap_of(&self, relative: &Path) -> u64 {
        if relative == Path::new(BUNDLE_NAME) {
            self.bundle_bytes
        } else {
            self.file_bytes
        }
    }
}

/// A path of the output as the sandbox names it: its parts joined by `/` whatever the
/// host (a Windows host's own paths would read `out\output.md`).
pub fn sandbox_path(path: &Path) -> String {
    path.components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Checks the `out/` folder a job left, before anything of it is read.
pub fn check_output_folder(out: &Path, limits: &OutputLimits) -> Result<(), OutputRefused> {
    if !out.exists() {
        return Ok(());
    }
    let mut total = 0_u64;
    let mut entries = 0_usize;
    let mut folders = vec![out.to_owned()];
    while let Some(folder) = folders.pop() {
        let listing = std::fs::read_dir(&folder)
            .map_err(|error| OutputRefused::Unreadable(error.to_string()))?;
        for entry in listing {
            let entry = entry.map_err(|error| OutputRefused::Unreadable(error.to_string()))?;
            entries += 1;
            if entries > limits.entries {
                return Err(OutputRefused::TooManyEntries {
                    cap: limits.entries,
                });
            }
            let path = entry.path();
            let relative = path.strip_prefix(out).unwrap_or(&path).to_owned();
            let metadata = std::fs::symlink_metadata(&path)
                .map_err(|error| OutputRefused::Unreadable(error.to_string()))?;
            let kind = metadata.file_type();
            if kind.is_dir() {
                folders.push(path);
                continue;
            }
            if kind.is_symlink() {
                // Links are never followed; they are not part of an output.
                continue;
            }
            if !kind.is_file() {
                return Err(OutputRefused::NotAPlainFile {
                    path: sandbox_path(&Path::new("out").join(relative)),
                    what: "a device, pipe or socket",
                });
            }
            let cap = limits.cap_of(&relative);
            // The apparent size counts, holes included: a sparse file reads as that
            // many bytes.
            if metadata.len() > cap {
                return Err(OutputRefused::FileTooLarge {
                    path: sandbox_path(&Path::new("out").join(relative)),
                    bytes: metadata.len(),
                    cap,
                });
            }
            total += metadata.len();
            if total > limits.total_bytes {
                return Err(OutputRefused::TooLarge {
                    bytes: total,
                    cap: limits.total_bytes,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> OutputLimits {
        OutputLimits {
            file_bytes: 1000,
            bundle_bytes: 5000,
            total_bytes: 8000,
            entries: 20,
        }
    }

    #[test]
    fn an_output_within_its_caps_passes() {
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("output.md"), "x".repeat(1000)).unwrap();
        std::fs::write(out.path().join(BUNDLE_NAME), "b".repeat(4000)).unwrap();
        assert_eq!(check_output_folder(out.path(), &small()), Ok(()));
        assert_eq!(
            check_output_folder(&out.path().join("missing"), &small()),
            Ok(())
        );
    }

    #[test]
    fn a_sparse_file_counts_as_its_apparent_size_and_is_refused() {
        let out = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(out.path().join("output.md")).unwrap();
        file.set_len(10 * 1024 * 1024 * 1024).unwrap();
        let refused = check_output_folder(out.path(), &OutputLimits::default()).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "out/output.md is 10737418240 bytes, over the cap of 67108864 bytes"
        );
    }

    #[test]
    fn too_much_in_all_or_too_many_files_is_refused() {
        let out = tempfile::tempdir().unwrap();
        for index in 0..9 {
            std::fs::write(out.path().join(format!("part{index}")), "y".repeat(1000)).unwrap();
        }
        assert!(matches!(
            check_output_folder(out.path(), &small()),
            Err(OutputRefused::TooLarge { cap: 8000, .. })
        ));
        let many = tempfile::tempdir().unwrap();
        for index in 0..25 {
            std::fs::write(many.path().join(format!("f{index}")), "z").unwrap();
        }
        assert_eq!(
            check_output_folder(many.path(), &small()),
            Err(OutputRefused::TooManyEntries { cap: 20 })
        );
    }

    // Named pipes in a folder are Unix's.
    #[cfg(unix)]
    #[test]
    fn a_pipe_in_the_output_is_refused() {
        let out = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(out.path().join("results.json"))
            .status()
            .unwrap();
        assert!(status.success());
        assert!(matches!(
            check_output_folder(out.path(), &small()),
            Err(OutputRefused::NotAPlainFile { .. })
        ));
    }
}
