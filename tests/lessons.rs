//! The real course: every lesson in `lessons/` lints clean (so every setup
//! file and statement parses in the mongosh dialect, every claim parses and
//! every dataset exists), and every lesson's experiments run at the tiny
//! scale on the embedded engine with every claim holding.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use schemalab::course::{self, CancelFlag, CatalogLoader, RunOptions, Scale};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn content_lints_clean() {
    let errors = course::lint(root());
    assert!(
        errors.is_empty(),
        "lint found problems:\n{}",
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_lesson_runs_at_tiny_scale_and_its_claims_hold() {
    let lessons = course::list_lessons(root()).unwrap();
    assert!(
        lessons.len() >= 18,
        "the course has {} lessons",
        lessons.len()
    );
    let server = schemalab::wire::spawn_background(schemalab::engine::Engine::new()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let loader = CatalogLoader::for_course(root()).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for lesson in &lessons {
        let opts = RunOptions {
            scale: Scale::Tiny,
            loader: &loader,
            cancel: CancelFlag::new(),
            progress: None,
        };
        let report = runtime
            .block_on(course::run_by_id(root(), &lesson.id, &server.uri(), &opts))
            .unwrap_or_else(|e| panic!("{}: {e}", lesson.id));
        assert!(
            !report.experiments.is_empty(),
            "{} has no experiment",
            lesson.id
        );
        for experiment in &report.experiments {
            assert!(
                !experiment.claims.is_empty(),
                "{}/{} makes no claim",
                lesson.id,
                experiment.id
            );
            for claim in &experiment.claims {
                checked += 1;
                if !claim.verdict.passed {
                    failures.push(format!(
                        "{}/{}: {} [{}] → {}",
                        lesson.id, experiment.id, claim.text, claim.check, claim.verdict.reason
                    ));
                }
            }
        }
    }
    println!("{checked} claims checked across {} lessons", lessons.len());
    assert!(
        failures.is_empty(),
        "claims that do not hold:\n{}",
        failures.join("\n")
    );
}
