//! Course progress that survives restarts: which lessons were opened,
//! which had an experiment run to completion, and how many of a lesson's
//! claims held in its last run. Stored as JSON in the user's
//! data directory (`directories`), written atomically (temp file + rename)
//! so a crash never leaves half a file. A missing or unreadable file is an
//! empty progress, never an error: losing marks must not block the course.

use std::collections::{BTreeMap, BTreeSet};
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
    /// Per lesson, the claims that held and the claims checked in its
    /// last run (every experiment that ran).
    #[serde(default)]
    pub claims: BTreeMap<String, (usize, usize)>,
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
        crate::files::read_text(path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::files::write_atomic(path, text.as_bytes())
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

    /// Record how many of `lesson`'s claims held in its last run.
    pub fn record_claims(&mut self, lesson: &str, held: usize, total: usize) {
        self.claims.insert(lesson.to_string(), (held, total));
    }

    /// The first lesson of `order` not run yet, after the one open last
    /// (wrapping to the start): what to study next.
    pub fn next<'a>(&self, order: &'a [String]) -> Option<&'a String> {
        let start = self
            .last
            .as_ref()
            .and_then(|l| order.iter().position(|x| x == l))
            .map_or(0, |i| i + 1);
        (0..order.len())
            .map(|k| &order[(start + k) % order.len()])
            .find(|id| !self.done.contains(*id))
    }
}
