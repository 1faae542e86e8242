//! Moving a workspace into and out of a sandbox as a tar archive: everything a backend
//! that cannot share a folder with the host (Docker, remote or local; E2B) needs.
//! Unpacking refuses entries that would land outside the destination.

use std::io::{Read as _, Write as _};
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

/// Packs the contents of `dir` under `prefix` (for example `workspace`), gzipped or not.
pub fn pack_dir(dir: &Path, prefix: &str, gzip: bool) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    builder.mode(tar::HeaderMode::Complete);
    builder.append_dir_all(prefix, dir)?;
    let tar = builder.into_inner()?;
    if !gzip {
        return Ok(tar);
    }
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(&tar)?;
    encoder.finish()
}

/// Unpacks `archive` into `destination`, dropping `strip` leading path components and
/// refusing absolute paths, `..` and links that point outside.
pub fn unpack_into(
    archive: &[u8],
    destination: &Path,
    strip: usize,
    gzip: bool,
) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    let reader: Box<dyn std::io::Read> = if gzip {
        Box::new(GzDecoder::new(archive))
    } else {
        Box::new(archive)
    };
    let mut reader = reader;
    reader.read_to_end(&mut bytes)?;
    let mut archive = tar::Archive::new(bytes.as_slice());
    std::fs::create_dir_all(destination)?;
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let stripped: std::path::PathBuf = path.components().skip(strip).collect();
        if stripped.as_os_str().is_empty() {
            continue;
        }
        let escapes = stripped.is_absolute()
            || stripped
                .components()
                .any(|part| matches!(part, std::path::Component::ParentDir));
        if escapes {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the archive holds a path outside its folder: {}",
                    path.display()
                ),
            ));
        }
        let kind = entry.header().entry_type();
        if kind.is_symlink() || kind.is_hard_link() {
            // A link could point anywhere on the host; links are not part of an output.
            continue;
        }
        let target = destination.join(&stripped);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        entry.unpack(&target)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_survives_the_round_trip() {
        let source = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(source.path().join("out/nested")).unwrap();
        std::fs::write(source.path().join("out/nested/a.txt"), "hello").unwrap();
        let archive = pack_dir(source.path(), "workspace", true).unwrap();
        let destination = tempfile::tempdir().unwrap();
        unpack_into(&archive, destination.path(), 1, true).unwrap();
        assert_eq!(
            std::fs::read_to_string(destination.path().join("out/nested/a.txt")).unwrap(),
            "hello"
        );
    }

    #[test]
    fn an_archive_that_climbs_out_is_refused() {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_old();
        let name = b"out/../../evil.txt";
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_size(4);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, &b"evil"[..]).unwrap();
        let bytes = builder.into_inner().unwrap();
        let outer = tempfile::tempdir().unwrap();
        let destination = outer.path().join("a/b");
        let error = unpack_into(&bytes, &destination, 0, false).unwrap_err();
        assert!(error.to_string().contains("outside its folder"), "{error}");
        assert!(!outer.path().join("evil.txt").exists());
    }
}
