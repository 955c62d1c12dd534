//! The bridge from the TUI to the course runner (`crate::course`): runs one
//! experiment of a lesson against the URI and converts the course's
//! [`LessonReport`] into the TUI's [`Report`].
//!
//! The course report keeps measured figures but not the raw explain
//! documents or sample documents, so after the run this bridge explains
//! each read once more (same statement, same database, through the
//! course's own `explain_form`) for the explain tree, and reads two sample
//! documents per collection. Counters shown side by side always come from
//! the course report itself.

use std::path::{Path, PathBuf};

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;

use super::model::{
    ClaimResult, CollectionStats, IndexSize, OpResult, Report, RunProgress, VariantReport,
};
use super::{ExperimentRunner, RunContext};
use crate::course::runner::explain_form;
use crate::course::{
    CatalogLoader, Course, LessonReport, OpKind, Progress, RunOptions, run_lesson,
};
use crate::dialect::{Output, Session, Value, parse_program};

/// Runs lessons from `<root>/lessons` with datasets from `<root>/datasets`.
pub struct CourseRunner {
    course_root: PathBuf,
    datasets_root: PathBuf,
}

fn parent_of(dir: &Path) -> PathBuf {
    dir.parent().map(Path::to_path_buf).unwrap_or_default()
}

impl CourseRunner {
    pub fn new(lessons_dir: &Path, datasets_dir: &Path) -> Self {
        CourseRunner {
            course_root: parent_of(lessons_dir),
            datasets_root: parent_of(datasets_dir),
        }
    }
}

impl ExperimentRunner for CourseRunner {
    fn run(&self, ctx: RunContext<'_>) -> Result<Report, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(self.run_async(ctx))
    }
}

impl CourseRunner {
    async fn run_async(&self, ctx: RunContext<'_>) -> Result<Report, String> {
        let course = Course::load(&self.course_root).map_err(|e| e.to_string())?;
        let mut lesson = course.lesson(&ctx.lesson.id).map_err(|e| e.to_string())?;
        lesson
            .experiments
            .retain(|e| e.id.get_ref() == &ctx.experiment.id);
        let loader = CatalogLoader::for_course(&self.datasets_root).map_err(|e| e.to_string())?;
        let client = mongodb::Client::with_uri_str(ctx.uri)
            .await
            .map_err(|e| e.to_string())?;
        let progress = |p: &Progress| {
            (ctx.progress)(RunProgress {
                fraction: if p.total == 0 {
                    0.0
                } else {
                    p.done as f64 / p.total as f64
                },
                step: format!("{} · {}", p.variant, p.step),
            });
        };
        let opts = RunOptions {
            scale: ctx.scale,
            loader: &loader,
            cancel: ctx.cancel.clone(),
            progress: Some(&progress),
        };
        let report = run_lesson(&client, &lesson, &opts)
            .await
            .map_err(|e| e.to_string())?;
        if ctx.cancel.is_cancelled() {
            return Err("cancelled".into());
        }
        let mut out =
            convert(&report, &ctx.experiment.id).ok_or("the run reported no such experiment")?;
        for variant in &mut out.variants {
            let db = crate::course::db_name(&ctx.lesson.id, &variant.id);
            enrich(&client, &db, variant).await;
        }
        Ok(out)
    }
}

/// Raw explain per read and a couple of sample documents per collection.
async fn enrich(client: &mongodb::Client, db: &str, variant: &mut VariantReport) {
    let mut session = Session::new(client.clone(), db)
        .with_policy(crate::dialect::WritePolicy::Only(db.to_string()));
    for op in variant
        .operations
        .iter_mut()
        .filter(|o| o.n.is_none() && o.error.is_none())
    {
        if let Some(prep) = &op.prepare {
            // Bind the names the statement uses, as the run did.
            let (_, res) = session.eval_partial(prep).await;
            if res.is_err() {
                continue;
            }
        }
        let Some(program) = parse_program(&op.statement)
            .ok()
            .and_then(|p| explain_form(&p).ok())
        else {
            continue;
        };
        let (outputs, result) = session.eval_program(&program).await;
        if result.is_ok() {
            op.explain = outputs.into_iter().rev().find_map(|o| match o {
                Output::Value(Value::Bson(Bson::Document(d))) => Some(d),
                _ => None,
            });
            op.index_keys = op.explain.as_ref().and_then(|e| ixscan_keys(e, 0));
        }
    }
    for coll in &variant.collections {
        let found = client
            .database(db)
            .collection::<Document>(&coll.name)
            .find(doc! {})
            .limit(2)
            .await;
        if let Ok(cursor) = found
            && let Ok(docs) = cursor.try_collect::<Vec<_>>().await
        {
            variant.samples.push((coll.name.clone(), docs));
        }
    }
}

/// The course report's experiment `id`, as the TUI's view-model.
pub fn convert(report: &LessonReport, id: &str) -> Option<Report> {
    let exp = report.experiments.iter().find(|e| e.id == id)?;
    let u = |v: i64| u64::try_from(v).unwrap_or(0);
    Some(Report {
        lesson: report.lesson.clone(),
        experiment: exp.id.clone(),
        scale: report.scale.as_str().to_string(),
        variants: exp
            .variants
            .iter()
            .map(|v| VariantReport {
                id: v.id.clone(),
                collections: v
                    .collections
                    .iter()
                    .map(|c| CollectionStats {
                        name: c.name.clone(),
                        count: u(c.count),
                        size: u(c.size),
                        avg_obj_size: c.avg_obj_size,
                        max_obj_size: u(c.max_obj_size),
                        storage_size: u(c.storage_size),
                        storage_modelled: c.modelled,
                        indexes: c
                            .indexes
                            .iter()
                            .map(|i| IndexSize {
                                name: i.name.clone(),
                                size: u(i.size),
                                modelled: c.modelled,
                            })
                            .collect(),
                    })
                    .collect(),
                operations: v
                    .operations
                    .iter()
                    .map(|o| {
                        let mut r = OpResult {
                            id: o.id.clone(),
                            statement: o.statement.clone(),
                            prepare: o.prepare.clone(),
                            millis: o.millis.unwrap_or(0.0),
                            error: o.error.as_ref().map(|e| {
                                if e.code_name.is_empty() {
                                    e.message.clone()
                                } else {
                                    e.code_name.clone()
                                }
                            }),
                            ..OpResult::default()
                        };
                        if let Some(m) = &o.read {
                            r.stages = m
                                .stages
                                .split("<-")
                                .map(str::to_string)
                                .filter(|s| !s.is_empty())
                                .collect();
                            r.index = (!m.index.is_empty()).then(|| m.index.clone());
                            r.n_returned = u(m.n_returned);
                            r.bytes_returned = m.bytes_returned.map(u);
                            r.not_reported = m.not_reported.clone();
                            r.keys_examined = u(m.keys_examined);
                            r.docs_examined = u(m.docs_examined);
                        }
                        if let Some(w) = &o.write {
                            r.n = Some(u(w.n));
                            r.n_modified = Some(u(w.n_modified));
                            r.keys_inserted = w.keys_inserted.map(u);
                            r.keys_deleted = w.keys_deleted.map(u);
                        } else if o.kind == OpKind::Write {
                            r.n = Some(0);
                        }
                        r
                    })
                    .collect(),
                samples: Vec::new(),
                errors: [&v.load_error, &v.setup_error, &v.measure_error]
                    .into_iter()
                    .flatten()
                    .cloned()
                    .chain(
                        v.failure
                            .as_ref()
                            .filter(|_| {
                                v.load_error.is_none()
                                    && v.setup_error.is_none()
                                    && v.measure_error.is_none()
                            })
                            .map(|f| format!("FAILED: {f}")),
                    )
                    .collect(),
                failed: v.failure.is_some(),
                recommended: v.recommended,
            })
            .collect(),
        claims: exp
            .claims
            .iter()
            .map(|c| ClaimResult {
                text: c.text.clone(),
                passed: c.verdict.passed,
                reason: (!c.verdict.reason.is_empty()).then(|| c.verdict.reason.clone()),
            })
            .collect(),
    })
}

/// The key pattern of the first IXSCAN in an explain, as mongosh prints it.
fn ixscan_keys(doc: &Document, depth: usize) -> Option<String> {
    if depth > 64 {
        return None;
    }
    if doc
        .get_str("stage")
        .is_ok_and(|s| s.eq_ignore_ascii_case("IXSCAN"))
        && let Ok(kp) = doc.get_document("keyPattern")
    {
        return Some(crate::dialect::print::inspect_doc(kp));
    }
    doc.values().find_map(|v| match v {
        Bson::Document(d) => ixscan_keys(d, depth + 1),
        Bson::Array(items) => items
            .iter()
            .find_map(|i| i.as_document().and_then(|d| ixscan_keys(d, depth + 1))),
        _ => None,
    })
}
