//! The course compiled into the binary. `lessons/` and `datasets/` are
//! embedded at build time, so a `schemalab` installed with `cargo install`
//! or copied anywhere carries its course. The loaders read plain files (an
//! instructor's edits are picked up without recompiling), so the embedded
//! copy is written once into a cache folder named after its content and read
//! from there; an instructor's own folder wins over it ([`course_root`]).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use include_dir::{Dir, DirEntry, include_dir};
use thiserror::Error;

static LESSONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lessons");
static DATASETS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/datasets");

/// Why no course could be found or unpacked.
#[derive(Debug, Error)]
pub enum BundleError {
    /// `--content DIR` names a folder without `lessons/manifest.toml`.
    #[error("{}", self.message())]
    NotACourse(String),
    /// The embedded course could not be written to the cache folder.
    #[error("{}", self.message())]
    Unpack { path: String, message: String },
}

impl BundleError {
    /// The error's words, for any language.
    pub fn message(&self) -> crate::locale::Message {
        use crate::locale::Message;
        match self {
            BundleError::NotACourse(dir) => {
                Message::new("--content {dir}: no lessons/manifest.toml there").arg("dir", dir)
            }
            BundleError::Unpack { path, message } => {
                Message::new("unpacking the built-in course into {path}: {message}")
                    .arg("path", path)
                    .arg("message", message)
            }
        }
    }
}

impl crate::locale::Localized for BundleError {
    fn render_in(&self, lang: crate::locale::Lang) -> String {
        self.message().render_in(lang)
    }
}

/// Where the course comes from, in order: `explicit` (`--content DIR`),
/// the working directory when it has `lessons/manifest.toml` (an
/// instructor editing a checkout), else the course built into the binary,
/// unpacked into the user's cache folder.
pub fn course_root(explicit: Option<&Path>) -> Result<PathBuf, BundleError> {
    if let Some(dir) = explicit {
        return if is_course(dir) {
            Ok(dir.to_path_buf())
        } else {
            Err(BundleError::NotACourse(dir.display().to_string()))
        };
    }
    let cwd = PathBuf::from(".");
    if is_course(&cwd) {
        return Ok(cwd);
    }
    unpack(&cache_base())
}

fn is_course(dir: &Path) -> bool {
    dir.join("lessons").join("manifest.toml").is_file()
}

fn cache_base() -> PathBuf {
    directories::ProjectDirs::from("dev", "schemalab", "schemalab")
        .map(|d| d.cache_dir().to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("schemalab"))
}

/// A digest of the embedded files (paths and bytes), naming the folder the
/// course unpacks to: a new build with other content unpacks anew, the
/// same content is reused.
pub fn digest() -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (prefix, dir) in [("lessons", &LESSONS), ("datasets", &DATASETS)] {
        for (path, bytes) in files(dir) {
            prefix.hash(&mut h);
            path.hash(&mut h);
            bytes.hash(&mut h);
        }
    }
    format!("{}-{:016x}", env!("CARGO_PKG_VERSION"), h.finish())
}

/// Every file of `dir`, depth first, in a stable order.
fn files(dir: &'static Dir<'static>) -> Vec<(&'static Path, &'static [u8])> {
    let mut out = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in d.entries() {
            match e {
                DirEntry::Dir(sub) => stack.push(sub),
                DirEntry::File(f) => out.push((f.path(), f.contents())),
            }
        }
    }
    out.sort_by_key(|(p, _)| *p);
    out
}

/// Write the embedded course under `base/course-<digest>` unless it is
/// already there; return that folder. Written into a temporary sibling and
/// renamed, so a half-written course is never read.
pub fn unpack(base: &Path) -> Result<PathBuf, BundleError> {
    let target = base.join(format!("course-{}", digest()));
    if is_course(&target) {
        return Ok(target);
    }
    let err = |path: &Path, e: std::io::Error| BundleError::Unpack {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let tmp = base.join(format!(".course-{}-{}", digest(), std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for (prefix, dir) in [("lessons", &LESSONS), ("datasets", &DATASETS)] {
        for (path, bytes) in files(dir) {
            let dest = tmp.join(prefix).join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| err(parent, e))?;
            }
            std::fs::write(&dest, bytes).map_err(|e| err(&dest, e))?;
        }
    }
    match std::fs::rename(&tmp, &target) {
        Ok(()) => Ok(target),
        // Another process unpacked the same course first: use theirs.
        Err(_) if is_course(&target) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(target)
        }
        Err(e) => Err(err(&target, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_course_unpacks_whole_and_once() {
        let base = tempfile::tempdir().expect("tempdir");
        let root = unpack(base.path()).expect("unpack");
        assert!(is_course(&root));
        // Every file of the checkout's course is there, byte for byte.
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (prefix, dir) in [("lessons", &LESSONS), ("datasets", &DATASETS)] {
            let list = files(dir);
            assert!(list.len() >= 2, "{prefix}: {} files", list.len());
            for (path, bytes) in list {
                let on_disk = std::fs::read(here.join(prefix).join(path)).expect("checkout file");
                assert_eq!(on_disk, bytes, "{prefix}/{}", path.display());
                assert_eq!(
                    std::fs::read(root.join(prefix).join(path)).expect("unpacked file"),
                    bytes
                );
            }
        }
        assert!(
            files(&LESSONS).len() > 100 && root.join("lessons/10-bucket/lesson.zh-CN.md").is_file()
        );
        // A second call reuses the folder.
        std::fs::write(root.join("marker"), b"x").expect("marker");
        assert_eq!(unpack(base.path()).expect("again"), root);
        assert!(root.join("marker").is_file());
    }

    #[test]
    fn an_explicit_folder_must_hold_a_course() {
        let empty = tempfile::tempdir().expect("tempdir");
        let e = course_root(Some(empty.path())).expect_err("not a course");
        assert!(e.to_string().contains("no lessons/manifest.toml"), "{e}");
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(course_root(Some(here)).expect("the checkout"), here);
    }
}
