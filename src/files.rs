//! The files a learner or an instructor hands schemalab, read and written
//! safely. Only regular files are read, and at most [`MAX_TEXT_BYTES`] of
//! them, so a FIFO cannot block a command and `/dev/zero` cannot fill the
//! memory. The exercise workspace is written atomically: a new file beside
//! the old one, renamed over it, so an interrupted write loses nothing and
//! a symlink in the workspace is replaced, never written through; a backup
//! is created anew and never replaces an earlier one.
//!
//! Errors are `std::io::Error`s whose words say what is wrong; the caller
//! names the file, as it does for any other I/O error.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The largest file schemalab reads: a lesson, a script, a solution or a
/// catalog is far smaller; mongod's 16 MiB document limit is the model.
pub const MAX_TEXT_BYTES: u64 = 16 * 1024 * 1024;

/// The bytes of the regular file `path`, at most [`MAX_TEXT_BYTES`].
pub fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO for reading waits for a writer; without blocking it
    // opens at once, and is then refused as not a regular file.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a folder, a FIFO or a device)",
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_TEXT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} MiB", MAX_TEXT_BYTES >> 20),
        ));
    }
    Ok(bytes)
}

/// The text of the regular file `path`, at most [`MAX_TEXT_BYTES`].
pub fn read_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_bytes(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// `dir` joined with the relative path `rel` a content file names, refused
/// when it would leave `dir`: an absolute path, a `..`, or a symlink that
/// leads outside (`setup = "../../etc/passwd"` is not read).
pub fn inside(dir: &Path, rel: &str) -> std::io::Result<PathBuf> {
    use std::path::Component;
    let leaves = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("'{rel}' leaves its folder (content paths are relative and stay inside it)"),
        )
    };
    if !Path::new(rel)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(leaves());
    }
    let path = dir.join(rel);
    if let (Ok(real), Ok(base)) = (path.canonicalize(), dir.canonicalize())
        && !real.starts_with(&base)
    {
        return Err(leaves());
    }
    Ok(path)
}

/// Replace `path` with `bytes` atomically: written to a new file in the
/// same folder, then renamed over `path` (a symlink at `path` is replaced,
/// not followed).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".schemalab-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Create `path` with `bytes` unless something (a file, a folder, a
/// symlink, even a dangling one) is there already; true when it wrote.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(mut file) => {
            file.write_all(bytes)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Keep a copy of the regular file `path` as `<path>.bak`, or `.bak.2`,
/// `.bak.3`, … when those exist: a backup never replaces another. Returns
/// where the copy went.
pub fn backup(path: &Path) -> std::io::Result<PathBuf> {
    let bytes = read_bytes(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 1u32.. {
        let suffix = if n == 1 {
            ".bak".to_string()
        } else {
            format!(".bak.{n}")
        };
        let bak = path.with_file_name(format!("{name}{suffix}"));
        if write_new(&bak, &bytes)? {
            return Ok(bak);
        }
    }
    Err(std::io::Error::other("no free backup name"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_only_so_much() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a.js");
        std::fs::write(&ok, "print(1)").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "print(1)");
        // A folder, a device that never ends, a FIFO nobody writes to.
        assert_eq!(
            read_text(dir.path()).unwrap_err().kind(),
            std::io::ErrorKind::InvalidInput
        );
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let zero = read_bytes(Path::new("/dev/zero")).unwrap_err();
            assert_eq!(zero.kind(), std::io::ErrorKind::InvalidInput);
            let fifo = dir.path().join("fifo");
            rustix::fs::mkfifoat(
                rustix::fs::CWD,
                &fifo,
                rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            )
            .unwrap();
            let e = read_bytes(&fifo).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        }
        let big = dir.path().join("big");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_TEXT_BYTES + 1).unwrap();
        assert_eq!(
            read_bytes(&big).unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
    }

    #[cfg(unix)]
    #[test]
    fn writes_replace_symlinks_and_backups_never_replace_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "precious").unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let link = ws.join("solution.js");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        write_atomic(&link, b"starter").unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "starter");
        assert!(
            !std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A dangling symlink is something: write_new leaves it, and creates
        // nothing at its target.
        let dangling = ws.join("answers.toml");
        let target = dir.path().join("created-outside");
        std::os::unix::fs::symlink(&target, &dangling).unwrap();
        assert!(!write_new(&dangling, b"x").unwrap());
        assert!(!target.exists());
        // Backups: .bak, then .bak.2, each keeping what was there.
        assert_eq!(backup(&link).unwrap(), ws.join("solution.js.bak"));
        write_atomic(&link, b"second").unwrap();
        assert_eq!(backup(&link).unwrap(), ws.join("solution.js.bak.2"));
        assert_eq!(
            std::fs::read_to_string(ws.join("solution.js.bak")).unwrap(),
            "starter"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("solution.js.bak.2")).unwrap(),
            "second"
        );
    }
}
