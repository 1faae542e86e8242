//! Following the log file as it grows, across roll-overs: `handoff log --follow`. A
//! roll-over is seen by the file at the log's path being another one, told by its first
//! bytes (and on Unix its inode), or shorter than what was read.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use super::{log_file, open_for_reading, LogFileError};

/// Reads what is appended to the log of `data_dir` after the moment it is made, across
/// roll-overs: for `handoff log --follow`.
#[derive(Debug)]
pub struct LogFollower {
    path: PathBuf,
    position: u64,
    identity: Option<FileIdentity>,
    partial: Vec<u8>,
}

/// Tells a file from the one that replaced it at the same path: its first bytes (a log's
/// first line starts with the time it was written), and on Unix its inode too. A file's
/// creation time cannot tell: Windows gives a file made at a path that a rename just
/// emptied the old file's creation time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileIdentity {
    #[cfg(unix)]
    inode: u64,
    head: Vec<u8>,
}

/// How many first bytes of a log file tell it from the next.
const IDENTITY_HEAD_BYTES: u64 = 64;

impl FileIdentity {
    /// Whether `self` and `later`, read at different moments, are of one file: a file
    /// only grows, so the shorter head must begin the longer one.
    fn same_file_as(&self, later: &FileIdentity) -> bool {
        #[cfg(unix)]
        if self.inode != later.inode {
            return false;
        }
        let common = self.head.len().min(later.head.len());
        self.head[..common] == later.head[..common]
    }
}

fn identity_of(path: &Path) -> Option<(FileIdentity, u64)> {
    let mut file = open_for_reading(path).ok()?;
    let meta = file.metadata().ok()?;
    let mut head = Vec::new();
    (&mut file)
        .take(IDENTITY_HEAD_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let identity = FileIdentity {
        #[cfg(unix)]
        inode: std::os::unix::fs::MetadataExt::ino(&meta),
        head,
    };
    Some((identity, meta.len()))
}

impl LogFollower {
    /// Starts at the current end of the log.
    pub fn from_end(data_dir: &Path) -> LogFollower {
        let path = log_file(data_dir);
        let (identity, position) = match identity_of(&path) {
            Some((identity, length)) => (Some(identity), length),
            None => (None, 0),
        };
        LogFollower {
            path,
            position,
            identity,
            partial: Vec::new(),
        }
    }

    /// The whole lines appended since the last call (none when nothing was).
    pub fn new_lines(&mut self) -> Result<Vec<String>, LogFileError> {
        let Some((identity, length)) = identity_of(&self.path) else {
            return Ok(Vec::new());
        };
        let same_file = self
            .identity
            .as_ref()
            .is_some_and(|known| known.same_file_as(&identity));
        if !same_file || length < self.position {
            // Rolled over: the new file is read from its start.
            self.position = 0;
            self.partial.clear();
        }
        self.identity = Some(identity);
        if length == self.position {
            return Ok(Vec::new());
        }
        let read = |source| LogFileError::Read {
            path: self.path.clone(),
            source,
        };
        let mut file = open_for_reading(&self.path).map_err(read)?;
        file.seek(SeekFrom::Start(self.position)).map_err(read)?;
        let mut bytes = Vec::new();
        file.take(length - self.position)
            .read_to_end(&mut bytes)
            .map_err(read)?;
        self.position += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        let mut lines = Vec::new();
        while let Some(end) = self.partial.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            lines.push(String::from_utf8_lossy(&line[..line.len() - 1]).into_owned());
        }
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_file::{log_folder, RollingLogFile};

    #[test]
    fn a_log_file_is_told_from_its_successor_by_its_first_bytes_alone() {
        // The same inode, as on a system that has none to tell by (Windows).
        let read_when = |head: &str| FileIdentity {
            #[cfg(unix)]
            inode: 7,
            head: head.as_bytes().to_vec(),
        };
        let early = read_when("2026-12-03T15:00:00.123Z INFO ha");
        let grown = read_when("2026-12-03T15:00:00.123Z INFO handoff: sync done");
        let successor = read_when("2026-12-03T15:04:10.511Z INFO handoff: run 4");
        assert!(early.same_file_as(&grown));
        assert!(grown.same_file_as(&early));
        assert!(!grown.same_file_as(&successor));
        assert!(read_when("").same_file_as(&grown));
    }

    #[test]
    fn a_follower_sees_new_lines_across_a_roll_over() {
        let data = tempfile::tempdir().unwrap();
        let log = RollingLogFile::open(&log_folder(data.path()), "test", 150, 2).unwrap();
        log.append("before the follower").unwrap();
        let mut follower = LogFollower::from_end(data.path());
        assert!(follower.new_lines().unwrap().is_empty());
        let mut seen = Vec::new();
        for number in 0..12 {
            log.append(&format!("after {number:02} ......................"))
                .unwrap();
            seen.extend(follower.new_lines().unwrap());
        }
        let numbers: Vec<&str> = seen
            .iter()
            .map(|line| line.split_whitespace().nth(2).unwrap())
            .collect();
        let expected: Vec<String> = (0..12).map(|number| format!("{number:02}")).collect();
        assert_eq!(numbers, expected);
    }
}
