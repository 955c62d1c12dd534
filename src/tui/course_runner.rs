//! The bridge from the TUI to the course runner: runs one experiment of a
//! lesson through [`crate::course::run_lesson`] against the open database
//! and hands back the course's own [`LessonReport`] (the lesson with that
//! one experiment). Everything the TUI shows of a run is in that report:
//! the figures, the explain each read was measured with, the sample
//! documents read when the collections were measured. Nothing is read
//! again after the workload, so the plan tree and the counters beside it
//! describe the same database state.
//!
//! The runner keeps each dataset it loaded as a template on the server
//! ([`TemplateLoader`]): a second run of an experiment (a re-run, another
//! scale and back) copies it instead of generating it again. An edit to
//! `datasets/catalog.toml` starts a fresh set of templates.

use crate::locale::Localized;
use std::path::{Path, PathBuf};

use super::{ExperimentRunner, RunContext};
use crate::course::{
    CatalogLoader, Course, LessonReport, Progress, RunOptions, TemplateLoader, run_lesson,
};
use crate::locale::Lang;

/// Runs lessons of the course under `root` (its `lessons/` and
/// `datasets/`), in `lang`.
pub struct CourseRunner {
    root: PathBuf,
    lang: Lang,
    /// The loader of the last run, with its templates, and the catalog and
    /// scale they were made from.
    loader: tokio::sync::Mutex<Option<Kept>>,
}

/// The templates' loader, with the catalog and scale it was made for.
type Kept = (
    crate::datasets::Catalog,
    crate::course::Scale,
    TemplateLoader<CatalogLoader>,
);

impl CourseRunner {
    pub fn new(root: &Path, lang: Lang) -> Self {
        CourseRunner {
            root: root.to_path_buf(),
            lang,
            loader: tokio::sync::Mutex::new(None),
        }
    }
}

impl ExperimentRunner for CourseRunner {
    fn run(&self, ctx: RunContext<'_>) -> Result<LessonReport, String> {
        ctx.runtime.block_on(self.run_async(&ctx))
    }
}

impl CourseRunner {
    async fn run_async(&self, ctx: &RunContext<'_>) -> Result<LessonReport, String> {
        // The lesson as it is on disk now: an edit applies on the next run.
        let course = Course::load(&self.root, self.lang).map_err(|e| e.render_in(self.lang))?;
        let mut lesson = course
            .lesson(ctx.lesson)
            .map_err(|e| e.render_in(self.lang))?;
        lesson
            .experiments
            .retain(|e| e.id.get_ref() == ctx.experiment);
        if lesson.experiments.is_empty() {
            return Err(self.lang.f(
                crate::tui::strings::EXPERIMENT_GONE,
                &[("lesson", &ctx.lesson), ("experiment", &ctx.experiment)],
            ));
        }
        let fresh = CatalogLoader::for_course(&self.root).map_err(|e| e.render_in(self.lang))?;
        let mut kept = self.loader.lock().await;
        // Templates of another catalog or scale are dropped: at most one
        // scale's datasets are kept twice.
        if kept
            .as_ref()
            .is_some_and(|(c, scale, _)| *c != fresh.catalog || *scale != ctx.scale)
            && let Some((_, _, old)) = kept.take()
        {
            old.drop_templates(ctx.client).await;
        }
        let (_, _, loader) = kept.get_or_insert_with(|| {
            (
                fresh.catalog.clone(),
                ctx.scale,
                TemplateLoader::new(fresh, "tui").named(ctx.names),
            )
        });
        let progress = |p: &Progress| (ctx.progress)(p.clone());
        let opts = RunOptions {
            scale: ctx.scale,
            names: ctx.names.clone(),
            loader,
            cancel: ctx.cancel.clone(),
            progress: Some(&progress),
        };
        let report = run_lesson(ctx.client, &lesson, &opts)
            .await
            .map_err(|e| e.render_in(self.lang))?;
        if ctx.cancel.is_cancelled() {
            return Err(self.lang.t("cancelled").to_string());
        }
        Ok(report)
    }
}
