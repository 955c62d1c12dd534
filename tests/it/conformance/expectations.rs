//! The expected-failures list: every eligible test that does not pass yet,
//! one per line as `file.json :: description # reason`. The suite fails when
//! the results and the list disagree in either direction, so the list can
//! only shrink; `SCHEMALAB_BLESS=1` rewrites it from the current results.

use std::collections::BTreeMap;
use std::path::Path;

/// Test key → reason.
pub type Expected = BTreeMap<String, String>;

/// Reads the list; a missing file is an empty list. The reason follows the
/// last ` # ` (reasons never contain one; descriptions might).
pub fn read(path: &Path) -> Expected {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.rsplit_once(" # ") {
            Some((k, r)) => (k.trim().to_owned(), r.trim().to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

/// One line of the list for a failure message.
pub fn reason(message: &str) -> String {
    let first = message.lines().next().unwrap_or("").replace(" # ", " - ");
    if first.chars().count() > 160 {
        let cut: String = first.chars().take(157).collect();
        format!("{cut}...")
    } else {
        first
    }
}

/// Rewrites the list with `failures` (key, message), in run order.
pub fn write(path: &Path, failures: &[(String, String)]) -> std::io::Result<()> {
    let mut out = String::from(
        "# Eligible unified CRUD spec tests that do not pass yet (see tests/it/conformance.rs).\n\
         # `file.json :: test description # first line of the failure`.\n\
         # Regenerate with: SCHEMALAB_BLESS=1 cargo test --test conformance\n",
    );
    for (key, msg) in failures {
        out.push_str(&format!("{key} # {}\n", reason(msg)));
    }
    std::fs::write(path, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txt");
        let failures = vec![(
            "a.json :: one # two".to_owned(),
            "boom\nsecond line".to_owned(),
        )];
        write(&path, &failures).unwrap();
        let read = read(&path);
        assert_eq!(read.len(), 1);
        // Reasons never contain ` # `, so a description may.
        assert_eq!(
            read.get("a.json :: one # two").map(String::as_str),
            Some("boom")
        );
    }
}
