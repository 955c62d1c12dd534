//! Test state for the TUI built from real course types: the course in
//! `lessons/` as the TUI loads it, and a real run of the bucket lesson
//! (lesson 10) at the tiny scale on the embedded engine, with the only
//! figures that vary run to run (times, the server's port) fixed, so
//! snapshots of it never change between runs. Shared by every module of
//! the test binary (`tests/it/`) and by `benches/tui.rs`.

pub mod cli;
pub mod raw;
pub mod tui;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bson::{Bson, Document};
use schemalab::connect::Database;
use schemalab::course::{
    CancelFlag, CatalogLoader, Course, LessonReport, RunOptions, Scale, run_lesson,
};
use schemalab::locale::Lang;
use schemalab::tui::lessons::CourseState;

/// The folder holding `lessons/` and `datasets/`.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The real course, in English, as the TUI loads it.
pub fn course() -> CourseState {
    CourseState::load(&root(), Lang::En).unwrap()
}

/// The bucket lesson's report as `schemalab run bucket --scale tiny` makes
/// it, times and ports fixed (run once per test binary).
pub fn bucket_report() -> LessonReport {
    static REPORT: OnceLock<LessonReport> = OnceLock::new();
    REPORT
        .get_or_init(|| {
            let mut report = run_tiny(&root(), "bucket");
            fix_varying(&mut report);
            report
        })
        .clone()
}

/// Lesson `id`'s report at the tiny scale, times and ports fixed (run
/// once per test binary and lesson): `one-to-many` gives a `$lookup`.
pub fn lesson_report(id: &str) -> LessonReport {
    static REPORTS: std::sync::Mutex<Vec<(String, LessonReport)>> =
        std::sync::Mutex::new(Vec::new());
    let mut reports = REPORTS.lock().unwrap();
    if let Some((_, r)) = reports.iter().find(|(l, _)| l == id) {
        return r.clone();
    }
    let mut report = run_tiny(&root(), id);
    fix_varying(&mut report);
    reports.push((id.to_string(), report.clone()));
    report
}

/// The bucket lesson's report in `lang`, times and ports fixed (run once
/// per test binary and language).
pub fn bucket_report_in(lang: Lang) -> LessonReport {
    static REPORTS: std::sync::Mutex<Vec<(Lang, LessonReport)>> = std::sync::Mutex::new(Vec::new());
    let mut reports = REPORTS.lock().unwrap();
    if let Some((_, r)) = reports.iter().find(|(l, _)| *l == lang) {
        return r.clone();
    }
    let mut report = run_tiny_in(&root(), "bucket", lang);
    fix_varying(&mut report);
    reports.push((lang, report.clone()));
    report
}

/// Run lesson `id` of the course under `root` at the tiny scale on a fresh
/// embedded engine.
pub fn run_tiny(root: &Path, id: &str) -> LessonReport {
    run_tiny_in(root, id, Lang::En)
}

/// [`run_tiny`] with the lesson's strings in `lang`.
pub fn run_tiny_in(root: &Path, id: &str, lang: Lang) -> LessonReport {
    let course = Course::load(root, lang).unwrap();
    run_lesson_tiny(root, &course.lesson(id).unwrap())
}

/// Run `lesson` (perhaps changed by the test) at the tiny scale on a fresh
/// embedded engine, with the datasets of the course under `root`.
pub fn run_lesson_tiny(root: &Path, lesson: &schemalab::course::Lesson) -> LessonReport {
    let database = Database::open(None).unwrap();
    let loader = CatalogLoader::for_course(root).unwrap();
    let opts = RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &loader,
        cancel: CancelFlag::new(),
        progress: None,
    };
    let report = database
        .block_on(async {
            let client = mongodb::Client::with_uri_str(database.uri())
                .await
                .map_err(|e| e.to_string())?;
            run_lesson(&client, lesson, &opts)
                .await
                .map_err(|e| e.to_string())
        })
        .unwrap();
    database.close();
    report
}

/// Times (wall clock, explain's estimates), the server's port and the
/// ObjectIds the server generates (the bucket setup's `$group` output)
/// vary run to run; everything else of a seeded tiny run is deterministic.
pub fn fix_varying(report: &mut LessonReport) {
    for exp in &mut report.experiments {
        for v in &mut exp.variants {
            for (i, sample) in v.samples.iter_mut().enumerate() {
                for (j, d) in sample.documents.iter_mut().enumerate() {
                    if matches!(d.get("_id"), Some(Bson::ObjectId(_))) {
                        let mut bytes = [0u8; 12];
                        bytes[10] = i as u8;
                        bytes[11] = j as u8;
                        d.insert("_id", bson::oid::ObjectId::from_bytes(bytes));
                    }
                }
            }
            for op in &mut v.operations {
                op.millis = op.millis.map(|_| 1.0);
                // Reads run 5 to 15 times, writes once: keep only that.
                op.timing = op
                    .timing
                    .as_ref()
                    .map(|t| schemalab::measure::Timing::of(vec![1.0; t.samples.len().min(5)]));
                if let Some(m) = &mut op.read {
                    for f in &mut m.pipeline {
                        f.millis = f.millis.map(|_| 0.0);
                    }
                    if let Some(e) = &mut m.explain {
                        fix_doc(e, 0);
                    }
                }
            }
        }
    }
}

fn fix_doc(doc: &mut Document, depth: usize) {
    if depth > 64 {
        return;
    }
    for (k, v) in doc.iter_mut() {
        let timing = ["Millis", "Micros", "Nanos"].iter().any(|t| k.contains(t));
        match v {
            _ if timing => *v = Bson::Int64(0),
            _ if k == "port" => *v = Bson::Int32(27017),
            Bson::Document(d) => fix_doc(d, depth + 1),
            Bson::Array(items) => {
                for i in items.iter_mut() {
                    if let Bson::Document(d) = i {
                        fix_doc(d, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A driver client for `uri`, made as every command makes one
/// (`schemalab::connect::client`); await it on the runtime that will
/// drive it.
pub async fn client(uri: &str) -> mongodb::Client {
    schemalab::connect::client(uri).await.unwrap()
}

/// Whether `s` has a Chinese character.
pub fn has_cjk(s: &str) -> bool {
    s.chars().any(schemalab::locale::is_cjk)
}

/// A copy of the course (lessons and datasets) in a temporary folder, to
/// change or break on purpose.
pub fn course_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["lessons", "datasets"] {
        copy_dir(&root().join(sub), &dir.path().join(sub));
    }
    dir
}

/// Copy the folder `from` into `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A fresh embedded engine served on 127.0.0.1:0, a runtime, and a driver
/// client on that runtime connected to it (keep the server alive as long
/// as the client is used).
pub fn served() -> (
    schemalab_wire::BackgroundServer,
    tokio::runtime::Runtime,
    mongodb::Client,
) {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = rt
        .block_on(mongodb::Client::with_uri_str(server.uri()))
        .unwrap();
    (server, rt, client)
}
