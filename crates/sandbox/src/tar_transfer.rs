//! Moving a workspace into and out of a sandbox as a tar archive: everything a backend
//! that cannot share a folder with the host (Docker, remote or local; E2B) needs.
//! Unpacking refuses entries that would land outside the destination.

use std::io::{Read as _, Write as _};
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::output_limits::{sandbox_path, OutputLimits, OutputRefused};

/// Adds a file of `bytes` at `path` with `mode` to `archive`, dated 0, so that the same
/// files always pack to the same archive (an image build's context, cached by the
/// engine).
pub fn append_file(
    archive: &mut tar::Builder<Vec<u8>>,
    path: &str,
    bytes: &[u8],
    mode: u32,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(mode);
    header.set_mtime(0);
    header.set_cksum();
    archive.append_data(&mut header, path, bytes)
}

/// Packs the contents of `dir` under `prefix` (for example `workspace`), gzipped or not.
pub fn pack_dir(dir: &Path, prefix: &str, gzip: bool) -> std::io::Result<Vec<u8>> {
    pack_dir_owned_by(dir, prefix, gzip, None)
}

/// [`pack_dir`], with every entry owned by `owner` (uid, gid) when given: the user a
/// sandbox runs its job as, so that it owns its workspace.
pub fn pack_dir_owned_by(
    dir: &Path,
    prefix: &str,
    gzip: bool,
    owner: Option<(u64, u64)>,
) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    builder.mode(tar::HeaderMode::Complete);
    match owner {
        None => builder.append_dir_all(prefix, dir)?,
        Some(owner) => append_owned(&mut builder, dir, Path::new(prefix), owner)?,
    }
    let tar = builder.into_inner()?;
    if !gzip {
        return Ok(tar);
    }
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(&tar)?;
    encoder.finish()
}

fn append_owned(
    builder: &mut tar::Builder<Vec<u8>>,
    source: &Path,
    name: &Path,
    (uid, gid): (u64, u64),
) -> std::io::Result<()> {
    let metadata = std::fs::symlink_metadata(source)?;
    let mut header = tar::Header::new_gnu();
    header.set_metadata_in_mode(&metadata, tar::HeaderMode::Complete);
    header.set_uid(uid);
    header.set_gid(gid);
    if metadata.is_dir() {
        header.set_size(0);
        builder.append_data(&mut header, name, std::io::empty())?;
        let mut children: Vec<_> = std::fs::read_dir(source)?.collect::<Result<_, _>>()?;
        children.sort_by_key(|entry| entry.file_name());
        for child in children {
            append_owned(
                builder,
                &child.path(),
                &name.join(child.file_name()),
                (uid, gid),
            )?;
        }
    } else if metadata.file_type().is_symlink() {
        let target = std::fs::read_link(source)?;
        builder.append_link(&mut header, name, target)?;
    } else if metadata.is_file() {
        builder.append_data(&mut header, name, std::fs::File::open(source)?)?;
    }
    Ok(())
}

/// The tar `archive` (gzipped when `gzip`) read into memory. The tar itself may not be
/// larger than the output it carries (with room for its headers); a gzip bomb stops
/// here, before it fills memory.
fn read_whole_tar(archive: &[u8], gzip: bool, limits: &OutputLimits) -> std::io::Result<Vec<u8>> {
    let tar_cap = limits.archive_bytes();
    let mut bytes = Vec::new();
    let reader: Box<dyn std::io::Read> = if gzip {
        Box::new(GzDecoder::new(archive))
    } else {
        Box::new(archive)
    };
    reader.take(tar_cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > tar_cap {
        return Err(refused(OutputRefused::TooLarge {
            bytes: bytes.len() as u64,
            cap: limits.total_bytes,
        }));
    }
    Ok(bytes)
}

/// Where `entry` goes under the destination, its first `strip` parts taken off; `None`
/// for what is skipped (the folder itself, a link, which could point anywhere on the
/// host). A path out of the folder, a sparse file or a special file is refused.
fn path_to_unpack(
    entry: &tar::Entry<'_, &[u8]>,
    strip: usize,
) -> std::io::Result<Option<std::path::PathBuf>> {
    let path = entry.path()?.into_owned();
    let stripped: std::path::PathBuf = path.components().skip(strip).collect();
    if stripped.as_os_str().is_empty() {
        return Ok(None);
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
        return Ok(None);
    }
    if kind.is_gnu_sparse() {
        return Err(refused(OutputRefused::NotAPlainFile {
            path: sandbox_path(&stripped),
            what: "a sparse file",
        }));
    }
    if !(kind.is_file() || kind.is_dir()) {
        return Err(refused(OutputRefused::NotAPlainFile {
            path: sandbox_path(&stripped),
            what: "a device, pipe or other special file",
        }));
    }
    Ok(Some(stripped))
}

/// An output refused, as the error of the unpacking.
fn refused(reason: OutputRefused) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, reason.to_string())
}

/// Unpacks `archive` into `destination`, dropping `strip` leading path components,
/// refusing absolute paths and `..`, skipping links, and refusing what breaks `limits`
/// (a file or the whole over its cap, too many entries, sparse or special files)
/// before writing it.
pub fn unpack_into(
    archive: &[u8],
    destination: &Path,
    strip: usize,
    gzip: bool,
    limits: &OutputLimits,
) -> std::io::Result<()> {
    unpack_checked(archive, destination, (strip, None), gzip, limits)
}

/// [`unpack_into`] for a plain archive of one folder (`out/`, say) that the sandbox
/// made itself: an entry anywhere else is refused as well.
pub fn unpack_folder_into(
    archive: &[u8],
    destination: &Path,
    folder: &str,
    limits: &OutputLimits,
) -> std::io::Result<()> {
    unpack_checked(archive, destination, (0, Some(folder)), false, limits)
}

/// Packs the folders `folders` of `dir` (each under its own name), as plain tar.
pub fn pack_folders(dir: &Path, folders: &[&str]) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    builder.mode(tar::HeaderMode::Complete);
    for folder in folders {
        builder.append_dir_all(folder, dir.join(folder))?;
    }
    builder.into_inner()
}

/// [`unpack_into`], with `strip` parts taken off each path and, when `only_under` names
/// a folder, every entry outside it refused.
fn unpack_checked(
    archive: &[u8],
    destination: &Path,
    (strip, only_under): (usize, Option<&str>),
    gzip: bool,
    limits: &OutputLimits,
) -> std::io::Result<()> {
    let bytes = read_whole_tar(archive, gzip, limits)?;
    let mut archive = tar::Archive::new(bytes.as_slice());
    std::fs::create_dir_all(destination)?;
    let mut total = 0_u64;
    for (count, entry) in archive.entries()?.enumerate() {
        if count >= limits.entries {
            return Err(refused(OutputRefused::TooManyEntries {
                cap: limits.entries,
            }));
        }
        let mut entry = entry?;
        let Some(stripped) = path_to_unpack(&entry, strip)? else {
            continue;
        };
        if let Some(folder) = only_under {
            if stripped.components().next() != Some(std::path::Component::Normal(folder.as_ref())) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the archive holds a path outside {folder}/: {}",
                        stripped.display()
                    ),
                ));
            }
        }
        let size = entry.header().size()?;
        let relative: std::path::PathBuf = stripped.components().skip(1).collect();
        let cap = limits.cap_of(&relative);
        if size > cap {
            return Err(refused(OutputRefused::FileTooLarge {
                path: sandbox_path(&stripped),
                bytes: size,
                cap,
            }));
        }
        total += size;
        if total > limits.total_bytes {
            return Err(refused(OutputRefused::TooLarge {
                bytes: total,
                cap: limits.total_bytes,
            }));
        }
        let target = destination.join(&stripped);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        entry.unpack(&target)?;
    }
    Ok(())
}

/// The length of the whole plain tar archive at the start of `bytes`, up to and with
/// its end (two empty blocks), or `None` while it has not all come: how an archive read
/// from a stream is known to be whole before the stream ends. Only the headers are read
/// (each entry's size says where the next header is); a header whose size cannot be
/// read ends nothing, and the archive is then never whole.
pub fn whole_archive_length(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 512;
    let mut offset = 0usize;
    loop {
        let header = bytes.get(offset..offset + BLOCK)?;
        if header.iter().all(|byte| *byte == 0) {
            let second = bytes.get(offset + BLOCK..offset + 2 * BLOCK)?;
            return second
                .iter()
                .all(|byte| *byte == 0)
                .then_some(offset + 2 * BLOCK);
        }
        let size = entry_size(&header[124..136])?;
        let blocks = size.checked_add(BLOCK as u64 - 1)? / BLOCK as u64;
        offset = offset
            .checked_add(BLOCK)?
            .checked_add(usize::try_from(blocks.checked_mul(BLOCK as u64)?).ok()?)?;
    }
}

/// A tar header's size field: octal digits (ending in a space or NUL), or a big-endian
/// binary number after a first byte with its high bit set.
fn entry_size(field: &[u8]) -> Option<u64> {
    if field[0] & 0x80 != 0 {
        return field[1..]
            .iter()
            .try_fold(u64::from(field[0] & 0x7f), |size, byte| {
                size.checked_mul(256)?.checked_add(u64::from(*byte))
            });
    }
    let digits = std::str::from_utf8(field)
        .ok()?
        .trim_matches(|character: char| character == ' ' || character == '\0');
    if digits.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(digits, 8).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain archive of `out/` holding `files` (name, size), as `tar -c` writes it:
    /// padded to whole records after its end.
    fn padded_archive_of(files: &[(&str, usize)]) -> Vec<u8> {
        let entries: Vec<_> = files
            .iter()
            .map(|(name, size)| {
                (
                    format!("out/{name}"),
                    tar::EntryType::Regular,
                    vec![b'x'; *size],
                )
            })
            .collect();
        let borrowed: Vec<_> = entries
            .iter()
            .map(|(name, kind, data)| (name.as_str(), *kind, data.clone()))
            .collect();
        let mut bytes = archive_of(&borrowed);
        bytes.resize(bytes.len().div_ceil(10240) * 10240, 0);
        bytes
    }

    #[test]
    fn an_archive_is_whole_only_once_its_end_has_come() {
        let long_name = "n".repeat(150);
        let bytes = padded_archive_of(&[("a.txt", 3), ("empty", 0), (&long_name, 513)]);
        let whole = whole_archive_length(&bytes).expect("the whole archive");
        assert!(whole <= bytes.len());
        assert!(bytes[whole..].iter().all(|byte| *byte == 0));
        for cut in [0, 511, 512, 1000, whole - 1] {
            assert_eq!(whole_archive_length(&bytes[..cut]), None, "cut at {cut}");
        }
        assert_eq!(whole_archive_length(&bytes[..whole]), Some(whole));
    }

    #[test]
    fn a_header_with_an_unreadable_size_never_makes_an_archive_whole() {
        let mut bytes = padded_archive_of(&[("a.txt", 3)]);
        bytes[124..136].copy_from_slice(b"not a size!\0");
        assert_eq!(whole_archive_length(&bytes), None);
    }

    #[test]
    fn a_folder_survives_the_round_trip() {
        let source = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(source.path().join("out/nested")).unwrap();
        std::fs::write(source.path().join("out/nested/a.txt"), "hello").unwrap();
        let archive = pack_dir(source.path(), "workspace", true).unwrap();
        let destination = tempfile::tempdir().unwrap();
        unpack_into(
            &archive,
            destination.path(),
            1,
            true,
            &OutputLimits::default(),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(destination.path().join("out/nested/a.txt")).unwrap(),
            "hello"
        );
    }

    #[test]
    fn named_folders_pack_alone_and_unpack_back() {
        let source = tempfile::tempdir().unwrap();
        for (path, text) in [
            ("handoff/job.sh", "echo hi"),
            ("out/nested/a.txt", "hello"),
            ("repo/secret.txt", "not packed"),
        ] {
            let path = source.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let archive = pack_folders(source.path(), &["handoff", "out"]).unwrap();
        let destination = tempfile::tempdir().unwrap();
        unpack_into(
            &archive,
            destination.path(),
            0,
            false,
            &OutputLimits::default(),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(destination.path().join("handoff/job.sh")).unwrap(),
            "echo hi"
        );
        assert!(!destination.path().join("repo").exists());

        let only_out = tempfile::tempdir().unwrap();
        let error = unpack_folder_into(&archive, only_out.path(), "out", &OutputLimits::default())
            .unwrap_err();
        assert!(error.to_string().contains("outside out/"), "{error}");
        let out_archive = pack_folders(source.path(), &["out"]).unwrap();
        unpack_folder_into(
            &out_archive,
            only_out.path(),
            "out",
            &OutputLimits::default(),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(only_out.path().join("out/nested/a.txt")).unwrap(),
            "hello"
        );
    }

    #[test]
    fn a_workspace_can_be_handed_to_the_sandboxs_user() {
        let source = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(source.path().join("repo")).unwrap();
        std::fs::write(source.path().join("repo/a.txt"), "hello").unwrap();
        let archive =
            pack_dir_owned_by(source.path(), "workspace", false, Some((10001, 10001))).unwrap();
        let mut read = tar::Archive::new(archive.as_slice());
        let owners: Vec<(String, u64, u64)> = read
            .entries()
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let header = entry.header();
                (
                    entry.path().unwrap().display().to_string(),
                    header.uid().unwrap(),
                    header.gid().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            owners,
            [
                ("workspace".to_owned(), 10001, 10001),
                ("workspace/repo".to_owned(), 10001, 10001),
                ("workspace/repo/a.txt".to_owned(), 10001, 10001),
            ]
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
        let error =
            unpack_into(&bytes, &destination, 0, false, &OutputLimits::default()).unwrap_err();
        assert!(error.to_string().contains("outside its folder"), "{error}");
        assert!(!outer.path().join("evil.txt").exists());
    }

    fn small() -> OutputLimits {
        OutputLimits {
            file_bytes: 1024,
            bundle_bytes: 4096,
            total_bytes: 64 * 1024,
            entries: 50,
        }
    }

    fn archive_of(entries: &[(&str, tar::EntryType, Vec<u8>)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_entry_type(*kind);
            header.set_cksum();
            builder
                .append_data(&mut header, name, data.as_slice())
                .unwrap();
        }
        builder.into_inner().unwrap()
    }

    #[test]
    fn a_gzip_bomb_is_refused_before_it_fills_memory() {
        // 64 MiB of zeros compress to about 64 KiB.
        let tar = archive_of(&[("out/output.md", tar::EntryType::Regular, vec![0; 64 << 20])]);
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        encoder.write_all(&tar).unwrap();
        let bomb = encoder.finish().unwrap();
        assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
        let destination = tempfile::tempdir().unwrap();

        let error = unpack_into(&bomb, destination.path(), 0, true, &small()).unwrap_err();

        assert!(error.to_string().contains("over the cap"), "{error}");
        assert!(!destination.path().join("out/output.md").exists());
    }

    // GNU tar is Linux's; macOS and Windows carry bsdtar, which writes no GNU sparse files.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_sparse_archive_as_gnu_tar_makes_one_is_refused() {
        // 1 GiB of holes in a few bytes.
        let source = tempfile::tempdir().unwrap();
        std::fs::create_dir(source.path().join("out")).unwrap();
        std::fs::File::create(source.path().join("out/output.md"))
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let packed = std::process::Command::new("tar")
            .args(["--sparse", "--format=gnu", "-cf", "-", "out/output.md"])
            .current_dir(source.path())
            .output()
            .unwrap();
        assert!(packed.status.success());
        assert!(packed.stdout.len() < 1 << 20);
        let destination = tempfile::tempdir().unwrap();
        let error =
            unpack_into(&packed.stdout, destination.path(), 0, false, &small()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "out/output.md is a sparse file, which an output may not hold"
        );
        assert!(!destination.path().join("out/output.md").exists());
    }

    #[test]
    fn a_file_over_its_cap_a_sparse_file_and_too_many_files_are_refused() {
        let destination = tempfile::tempdir().unwrap();
        let big = archive_of(&[("out/output.md", tar::EntryType::Regular, vec![b'x'; 2048])]);
        let error = unpack_into(&big, destination.path(), 0, false, &small()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "out/output.md is 2048 bytes, over the cap of 1024 bytes"
        );
        // The bundle has a cap of its own.
        let bundle = archive_of(&[(
            "out/changes.bundle",
            tar::EntryType::Regular,
            vec![b'b'; 2048],
        )]);
        unpack_into(&bundle, destination.path(), 0, false, &small()).unwrap();

        // A sparse entry: 1 GiB of holes and its last byte, which is all its archive holds.
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::GNUSparse);
        let gnu = header.as_gnu_mut().unwrap();
        gnu.set_real_size(1 << 30);
        gnu.sparse[0].set_offset((1 << 30) - 1);
        gnu.sparse[0].set_length(1);
        header.set_cksum();
        let mut builder = tar::Builder::new(Vec::new());
        builder
            .append_data(&mut header, "out/output.md", &b"x"[..])
            .unwrap();
        let sparse = builder.into_inner().unwrap();
        let error = unpack_into(&sparse, destination.path(), 0, false, &small()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "out/output.md is a sparse file, which an output may not hold"
        );

        let names: Vec<String> = (0..60).map(|index| format!("out/f{index}")).collect();
        let many: Vec<(&str, tar::EntryType, Vec<u8>)> = names
            .iter()
            .map(|name| (name.as_str(), tar::EntryType::Regular, b"z".to_vec()))
            .collect();
        let error =
            unpack_into(&archive_of(&many), destination.path(), 0, false, &small()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the output holds more than 50 files and folders"
        );
    }
}
