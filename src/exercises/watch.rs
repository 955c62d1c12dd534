//! `schemalab watch`: re-check on every save, like rustlings watch. The
//! workspace is watched with `notify` (debounced, so an editor's burst of
//! writes triggers one check); a change inside an exercise's folder
//! re-checks that exercise, or the one the learner fixed on.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use notify_debouncer_mini::{DebounceEventResult, new_debouncer, notify::RecursiveMode};

use super::ExerciseError;

/// Which exercise a changed path belongs to: the first folder under the
/// workspace, when it is one of `ids`.
pub fn exercise_of(workspace: &Path, changed: &Path, ids: &[String]) -> Option<String> {
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let rel = changed
        .strip_prefix(&ws)
        .or_else(|_| changed.strip_prefix(workspace))
        .ok()?;
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    // Backups and editor swap files are not edits.
    let name = changed.file_name()?.to_string_lossy();
    if name.ends_with(".bak") || name.ends_with('~') || name.starts_with('.') {
        return None;
    }
    ids.contains(&first).then_some(first)
}

/// A fingerprint of an exercise folder's files (name and content), so that
/// events that change nothing (a file opened for reading by the checker
/// itself, an editor touching a file) do not trigger a check.
pub fn fingerprint(workspace: &Path, id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let dir = workspace.join(id);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || name.ends_with(".bak") || name.ends_with('~') {
            continue;
        }
        name.hash(&mut h);
        std::fs::read(&f).unwrap_or_default().hash(&mut h);
    }
    h.finish()
}

/// Remembers each exercise's fingerprint; `changed` says whether it moved
/// since last asked.
struct Changes {
    seen: HashMap<String, u64>,
}

impl Changes {
    fn new(workspace: &Path, ids: &[String]) -> Self {
        Changes {
            seen: ids
                .iter()
                .map(|i| (i.clone(), fingerprint(workspace, i)))
                .collect(),
        }
    }

    fn changed(&mut self, workspace: &Path, id: &str) -> bool {
        let now = fingerprint(workspace, id);
        self.seen.insert(id.to_string(), now) != Some(now)
    }
}

/// Watch `workspace` and call `on_change(exercise id)` after each debounced
/// burst of saves; `fixed` pins the exercise to re-check. Returns when
/// `on_change` returns false or the watcher fails.
pub fn watch(
    workspace: &Path,
    ids: &[String],
    fixed: Option<&str>,
    mut on_change: impl FnMut(&str) -> bool,
) -> Result<(), ExerciseError> {
    let (tx, rx) = mpsc::channel::<DebounceEventResult>();
    let mut debouncer = new_debouncer(Duration::from_millis(250), move |res| {
        let _ = tx.send(res);
    })
    .map_err(|e| ExerciseError::Watch(e.to_string()))?;
    debouncer
        .watcher()
        .watch(workspace, RecursiveMode::Recursive)
        .map_err(|e| ExerciseError::Watch(format!("{}: {e}", workspace.display())))?;
    let mut changes = Changes::new(workspace, ids);
    for res in rx {
        let events = res.map_err(|e| ExerciseError::Watch(e.to_string()))?;
        let mut target: Option<String> = None;
        for ev in events {
            if let Some(id) = exercise_of(workspace, &ev.path, ids)
                && changes.changed(workspace, &id)
            {
                target = Some(id);
            }
        }
        let Some(id) = target else { continue };
        let id = fixed.map_or(id, str::to_string);
        if !on_change(&id) {
            break;
        }
    }
    Ok(())
}

/// A running watcher; dropping it stops watching.
pub struct Watcher {
    _debouncer: notify_debouncer_mini::Debouncer<notify_debouncer_mini::notify::RecommendedWatcher>,
}

/// Watch `workspace` in the background and call `on_change(exercise id)`
/// (from the watcher's thread) after each debounced burst of saves.
pub fn spawn(
    workspace: &Path,
    ids: Vec<String>,
    on_change: impl Fn(String) + Send + 'static,
) -> Result<Watcher, ExerciseError> {
    let ws = workspace.to_path_buf();
    let mut changes = Changes::new(workspace, &ids);
    let mut debouncer = new_debouncer(
        Duration::from_millis(250),
        move |res: DebounceEventResult| {
            if let Ok(events) = res
                && let Some(id) = events
                    .iter()
                    .rev()
                    .filter_map(|ev| exercise_of(&ws, &ev.path, &ids))
                    .find(|id| changes.changed(&ws, id))
            {
                on_change(id);
            }
        },
    )
    .map_err(|e| ExerciseError::Watch(e.to_string()))?;
    debouncer
        .watcher()
        .watch(workspace, RecursiveMode::Recursive)
        .map_err(|e| ExerciseError::Watch(format!("{}: {e}", workspace.display())))?;
    Ok(Watcher {
        _debouncer: debouncer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_map_to_their_exercise() {
        let ids = vec!["feed".to_string()];
        let ws = Path::new("/tmp/ws-none");
        assert_eq!(
            exercise_of(ws, Path::new("/tmp/ws-none/feed/solution.js"), &ids),
            Some("feed".into())
        );
        assert_eq!(
            exercise_of(ws, Path::new("/tmp/ws-none/feed/solution.js.bak"), &ids),
            None
        );
        assert_eq!(
            exercise_of(ws, Path::new("/tmp/ws-none/other/solution.js"), &ids),
            None
        );
        assert_eq!(
            exercise_of(ws, Path::new("/tmp/ws-none/.progress.toml"), &ids),
            None
        );
    }

    #[test]
    fn only_content_changes_count() {
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("feed")).expect("mkdir");
        std::fs::write(dir.join("feed/solution.js"), "a").expect("write");
        let ids = vec!["feed".to_string()];
        let mut c = Changes::new(dir, &ids);
        assert!(!c.changed(dir, "feed"), "nothing was written");
        std::fs::write(dir.join("feed/solution.js"), "b").expect("write");
        assert!(c.changed(dir, "feed"));
        assert!(!c.changed(dir, "feed"));
        std::fs::write(dir.join("feed/solution.js.bak"), "x").expect("write");
        assert!(!c.changed(dir, "feed"), "backups are not edits");
    }
}
