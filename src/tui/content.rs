//! Reads the course from `lessons/` (manifest.toml, lesson.toml, lesson.md)
//! into the view-model. The course module (`src/course*`) owns the format and
//! its lint; this reader is deliberately lenient so the TUI can show whatever
//! loads and report the rest in the outline.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::TuiError;
use super::model::{Course, Experiment, Lesson, Operation, Variant};

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    title: String,
    #[serde(default)]
    lessons: Vec<ManifestEntry>,
}

#[derive(Deserialize)]
struct ManifestEntry {
    id: String,
    dir: String,
}

#[derive(Deserialize)]
struct LessonFile {
    title: String,
    #[serde(default)]
    summary: String,
    #[serde(default = "default_prose")]
    prose: String,
    #[serde(default)]
    experiments: Vec<ExperimentFile>,
}

fn default_prose() -> String {
    "lesson.md".into()
}

#[derive(Deserialize)]
struct ExperimentFile {
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    dataset: String,
    #[serde(default)]
    variants: Vec<VariantFile>,
    #[serde(default)]
    operations: Vec<OperationFile>,
    #[serde(default)]
    claims: Vec<ClaimFile>,
}

#[derive(Deserialize)]
struct VariantFile {
    id: String,
    #[serde(default)]
    title: String,
}

#[derive(Deserialize)]
struct OperationFile {
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    weight: f64,
    #[serde(default)]
    run: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct ClaimFile {
    text: String,
}

/// Loads the course. Lessons listed in the manifest whose folder is missing
/// or unreadable appear with their id as title and the problem as summary,
/// so the outline still shows the whole course.
pub fn load_course(lessons_dir: &Path) -> Result<Course, TuiError> {
    let manifest_path = lessons_dir.join("manifest.toml");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| TuiError::Content(format!("{}: {e}", manifest_path.display())))?;
    let manifest: Manifest = toml::from_str(&text)
        .map_err(|e| TuiError::Content(format!("{}: {e}", manifest_path.display())))?;
    let lessons = manifest
        .lessons
        .iter()
        .map(|entry| {
            load_lesson(&lessons_dir.join(&entry.dir), &entry.id).unwrap_or_else(|problem| Lesson {
                id: entry.id.clone(),
                title: entry.id.clone(),
                summary: problem,
                ..Lesson::default()
            })
        })
        .collect();
    Ok(Course {
        title: manifest.title,
        lessons,
    })
}

fn load_lesson(dir: &Path, id: &str) -> Result<Lesson, String> {
    let path = dir.join("lesson.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: LessonFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let prose = std::fs::read_to_string(dir.join(&file.prose)).unwrap_or_default();
    Ok(Lesson {
        id: id.to_string(),
        title: file.title,
        summary: file.summary,
        prose,
        experiments: file
            .experiments
            .into_iter()
            .map(|e| Experiment {
                id: e.id,
                title: e.title,
                dataset: e.dataset,
                variants: e
                    .variants
                    .into_iter()
                    .map(|v| Variant {
                        id: v.id,
                        title: v.title,
                    })
                    .collect(),
                operations: e
                    .operations
                    .into_iter()
                    .map(|o| Operation {
                        id: o.id,
                        title: o.title,
                        kind: o.kind,
                        weight: o.weight,
                        run: o.run,
                    })
                    .collect(),
                claims: e.claims.into_iter().map(|c| c.text).collect(),
            })
            .collect(),
    })
}
