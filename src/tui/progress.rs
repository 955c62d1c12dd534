//! Course progress that survives restarts: which lessons were opened and
//! which had an experiment run to completion. Stored as JSON in the user's
//! data directory (`directories`), written atomically (temp file + rename)
//! so a crash never leaves half a file. A missing or unreadable file is an
//! empty progress, never an error: losing marks must not block the course.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Lessons opened in the reader.
    #[serde(default)]
    pub seen: BTreeSet<String>,
    /// Lessons whose experiment ran to completion.
    #[serde(default)]
    pub done: BTreeSet<String>,
    /// The lesson open last, to resume on it.
    #[serde(default)]
    pub last: Option<String>,
}

/// Outline mark of a lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    None,
    Seen,
    Done,
}

impl Progress {
    /// `<data dir>/progress.json`, e.g. `~/.local/share/schemalab/`.
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("dev", "schemalab", "schemalab")
            .map(|d| d.data_dir().join("progress.json"))
    }

    pub fn load(path: &Path) -> Progress {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, path)
    }

    pub fn mark(&self, lesson: &str) -> Mark {
        if self.done.contains(lesson) {
            Mark::Done
        } else if self.seen.contains(lesson) {
            Mark::Seen
        } else {
            Mark::None
        }
    }

    pub fn see(&mut self, lesson: &str) {
        self.seen.insert(lesson.to_string());
        self.last = Some(lesson.to_string());
    }

    pub fn complete(&mut self, lesson: &str) {
        self.done.insert(lesson.to_string());
    }
}
