//! `schemalab bench course`: the course as a benchmark. Every lesson (or
//! the ones named) runs at a scale on the embedded engine, in this process,
//! and the bench records its wall time, the process's peak resident memory
//! during that lesson (Linux: `VmHWM`, reset between lessons through
//! `/proc/self/clear_refs`), and the resident memory once the lesson's
//! databases are dropped, which shows whether memory is given back. Figures
//! are measured, never estimated; where the platform cannot give one it is
//! reported as missing. With `--steps` it also prints, as each step of a
//! lesson ends, that step's wall time and peak resident memory, to show
//! which step a lesson's time or memory goes to.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;
use thiserror::Error;

use crate::course::{
    self, CancelFlag, CatalogLoader, CourseError, Progress, RunOptions, RunStatus, Scale,
};
use crate::locale::{Lang, Message, pad};

/// Why the bench could not run.
#[derive(Debug, Error)]
pub enum BenchError {
    #[error(transparent)]
    Course(#[from] CourseError),
    #[error("{}", self.message())]
    Server(String),
}

impl BenchError {
    /// The error's words, for any language.
    pub fn message(&self) -> crate::locale::Message {
        match self {
            BenchError::Course(e) => e.message(),
            BenchError::Server(e) => crate::locale::Message::new("server: {e}").arg("e", e),
        }
    }
}

impl crate::locale::Localized for BenchError {
    fn render_in(&self, lang: crate::locale::Lang) -> String {
        self.message().render_in(lang)
    }
}

/// One lesson's figures.
#[derive(Debug, Clone, Serialize)]
pub struct LessonBench {
    pub lesson: String,
    pub seconds: f64,
    /// Peak resident memory of this process during the lesson, bytes.
    pub peak_rss: Option<u64>,
    /// Resident memory after the lesson's databases were dropped, bytes.
    pub rss_after_drop: Option<u64>,
    /// Every variant ran and every claim held.
    pub held: bool,
    /// What went wrong otherwise.
    pub problem: Option<String>,
}

/// A field of `/proc/self/status` in bytes (`VmHWM`, `VmRSS`).
pub fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Reset the peak-RSS counter (`VmHWM`) to the current RSS; false where the
/// kernel does not allow it.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// One finished step of a lesson, as `--steps` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepBench {
    /// `experiment/variant step`.
    pub step: String,
    pub seconds: f64,
    /// Peak resident memory during the step, bytes.
    pub peak_rss: Option<u64>,
}

/// Times the steps of one lesson from its progress reports: each report
/// ends the step before it. The peak counter is reset at every step, so the
/// tracker also keeps the lesson's own peak, the highest of its steps'.
struct StepTracker<'a> {
    state: Mutex<Steps>,
    each: &'a (dyn Fn(&StepBench) + Send + Sync),
}

/// The running step and the lesson's peak so far.
#[derive(Default)]
struct Steps {
    current: Option<(String, Instant)>,
    lesson_peak: Option<u64>,
}

impl<'a> StepTracker<'a> {
    fn new(each: &'a (dyn Fn(&StepBench) + Send + Sync)) -> Self {
        StepTracker {
            state: Mutex::new(Steps::default()),
            each,
        }
    }

    /// End the running step, if any, and start `next`.
    fn next(&self, next: Option<String>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((step, started)) = state.current.take() {
            let peak_rss = proc_status_bytes("VmHWM:");
            state.lesson_peak = state.lesson_peak.max(peak_rss);
            (self.each)(&StepBench {
                step,
                seconds: started.elapsed().as_secs_f64(),
                peak_rss,
            });
            reset_peak_rss();
        }
        state.current = next.map(|n| (n, Instant::now()));
    }

    fn progress(&self, p: &Progress) {
        self.next(Some(format!("{}/{} {}", p.experiment, p.variant, p.step)));
    }

    /// End the last step; the lesson's peak.
    fn finish(&self) -> Option<u64> {
        self.next(None);
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lesson_peak
    }
}

/// Run the lessons `ids` (all when empty) of the course under `root` at
/// `scale` through `client`, one after the other; `each` sees every result as
/// it comes, and `steps`, when given, every step of every lesson as it
/// ends.
pub async fn bench_course(
    root: &Path,
    client: &mongodb::Client,
    scale: Scale,
    ids: &[String],
    steps: Option<&(dyn Fn(&StepBench) + Send + Sync)>,
    mut each: impl FnMut(&LessonBench),
) -> Result<Vec<LessonBench>, BenchError> {
    let course = course::Course::load(root, Lang::En)?;
    let ids: Vec<String> = if ids.is_empty() {
        course.lesson_ids()
    } else {
        ids.iter()
            .map(|q| course.resolve(q))
            .collect::<Result<_, _>>()?
    };
    let loader = CatalogLoader::for_course(root)?;
    let mut out = Vec::new();
    for id in ids {
        let lesson = course.lesson(&id)?;
        let tracker = steps.map(StepTracker::new);
        let progress = |p: &Progress| {
            if let Some(t) = &tracker {
                t.progress(p);
            }
        };
        let opts = RunOptions {
            scale,
            names: course::DbNames::default(),
            loader: &loader,
            cancel: CancelFlag::new(),
            progress: tracker.is_some().then_some(&progress as _),
        };
        // Without a reset the high-water mark is the process's, not this
        // lesson's: reported as missing rather than misattributed.
        let reset = reset_peak_rss();
        let started = Instant::now();
        let result = course::run_lesson(client, &lesson, &opts).await;
        let seconds = started.elapsed().as_secs_f64();
        let peak_rss = match &tracker {
            Some(t) => t.finish(),
            None => proc_status_bytes("VmHWM:"),
        }
        .filter(|_| reset);
        // Give the lesson's databases back, as the course does between
        // runs, and see what memory remains.
        for exp in &lesson.experiments {
            for v in &exp.variants {
                let db = opts.names.lesson(&lesson.id, v.id.get_ref());
                course::guard_db(&opts.names, &db, &lesson.id, v.id.get_ref())?;
                client
                    .database(&db)
                    .drop()
                    .await
                    .map_err(|e| BenchError::Server(e.to_string()))?;
            }
        }
        let rss_after_drop = proc_status_bytes("VmRSS:");
        let (held, problem) = match &result {
            Ok(report) => match RunStatus::of(report) {
                s if s.exit_code() == 0 => (true, None),
                s => (false, Some(s.message(Lang::En))),
            },
            Err(e) => (false, Some(e.to_string())),
        };
        let b = LessonBench {
            lesson: id,
            seconds,
            peak_rss,
            rss_after_drop,
            held,
            problem,
        };
        each(&b);
        out.push(b);
    }
    Ok(out)
}

fn mib(b: Option<u64>) -> String {
    b.map_or_else(|| "n/a".into(), |b| format!("{:.0}", b as f64 / 1048576.0))
}

/// One line of `--steps`: the step, its seconds and its peak MiB.
pub fn step_row(s: &StepBench) -> String {
    format!(
        "{:<40} {:>8.2} s {:>6} MiB",
        s.step,
        s.seconds,
        mib(s.peak_rss)
    )
}

/// One line of the printed table in `lang` (columns padded by display
/// width; a failure's own text stays as the run wrote it).
pub fn row(b: &LessonBench, lang: Lang) -> String {
    let verdict = match &b.problem {
        None => lang.t("held").to_string(),
        Some(p) => Message::new("FAILED: {problem}")
            .arg("problem", p)
            .render_in(lang),
    };
    format!(
        "{} {:>8.2} {:>10} {:>12}  {verdict}",
        pad(&b.lesson, 24, true),
        b.seconds,
        mib(b.peak_rss),
        mib(b.rss_after_drop),
    )
}

/// The table's heading, in English.
pub const HEADER: &str = "lesson                    seconds  peak MiB  after drop  claims";

/// The table's heading in `lang`, lined up with [`row`].
pub fn header_in(lang: Lang) -> String {
    if lang == Lang::En {
        return HEADER.to_string();
    }
    format!(
        "{} {} {} {}  {}",
        pad(lang.t("lesson"), 24, true),
        pad(lang.t("seconds"), 8, false),
        pad(lang.t("peak MiB"), 10, false),
        pad(lang.t("after drop"), 12, false),
        lang.t("claims")
    )
}

/// The closing line: totals and the worst lesson, in English.
pub fn summary(all: &[LessonBench]) -> String {
    summary_in(all, Lang::En)
}

/// [`summary`] in `lang`.
pub fn summary_in(all: &[LessonBench], lang: Lang) -> String {
    let total: f64 = all.iter().map(|b| b.seconds).sum();
    let slowest = all
        .iter()
        .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
        .map_or("-".to_string(), |b| {
            format!("{} {:.2} s", b.lesson, b.seconds)
        });
    let peak = all.iter().filter_map(|b| b.peak_rss).max();
    let failed = all.iter().filter(|b| !b.held).count();
    Message::new(
        "total {total} s over {n} lessons; slowest {slowest}; highest peak {peak} MiB; {failed} failed",
    )
    .arg("total", format!("{total:.2}"))
    .arg("n", all.len())
    .arg("slowest", slowest)
    .arg("peak", mib(peak))
    .arg("failed", failed)
    .render_in(lang)
}

/// The targets a bench run is held to (`--max-peak-mib`, `--max-seconds`):
/// one line per lesson that missed one, empty when every lesson met them.
/// A lesson whose peak could not be measured misses a peak target.
pub fn missed_targets_in(
    all: &[LessonBench],
    max_peak_mib: Option<u64>,
    max_seconds: Option<f64>,
    lang: Lang,
) -> Vec<String> {
    let mut out = Vec::new();
    for b in all {
        if let Some(limit) = max_peak_mib {
            let over = b.peak_rss.is_none_or(|p| p > limit * 1024 * 1024);
            if over {
                out.push(
                    Message::new("{lesson}: peak {peak} MiB, over the target of {limit} MiB")
                        .arg("lesson", &b.lesson)
                        .arg("peak", mib(b.peak_rss))
                        .arg("limit", limit)
                        .render_in(lang),
                );
            }
        }
        if let Some(limit) = max_seconds
            && b.seconds > limit
        {
            out.push(
                Message::new("{lesson}: {seconds} s, over the target of {limit} s")
                    .arg("lesson", &b.lesson)
                    .arg("seconds", format!("{:.2}", b.seconds))
                    .arg("limit", limit)
                    .render_in(lang),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_status_reads_this_process() {
        if !Path::new("/proc/self/status").exists() {
            return; // not Linux: the bench reports n/a
        }
        let rss = proc_status_bytes("VmRSS:").expect("VmRSS");
        let peak = proc_status_bytes("VmHWM:").expect("VmHWM");
        assert!(rss > 1024 * 1024 && peak >= rss, "rss {rss} peak {peak}");
        assert_eq!(proc_status_bytes("NoSuchField:"), None);
    }

    #[test]
    fn steps_are_reported_as_the_next_one_starts_and_the_lesson_keeps_its_peak() {
        let seen = Mutex::new(Vec::new());
        let each = |s: &StepBench| seen.lock().unwrap().push(s.clone());
        let tracker = StepTracker::new(&each);
        let progress = |variant: &str, step: &str| Progress {
            experiment: "e".into(),
            variant: variant.into(),
            step: step.into(),
            done: 0,
            total: 3,
        };
        tracker.progress(&progress("a", "load"));
        assert!(
            seen.lock().unwrap().is_empty(),
            "a step is reported when it ends"
        );
        // Memory the second step holds shows in its own peak.
        tracker.progress(&progress("a", "setup"));
        let held = vec![1u8; 64 << 20];
        std::hint::black_box(&held);
        drop(held);
        tracker.progress(&progress("b", "op show"));
        let lesson = tracker.finish();
        let seen = seen.lock().unwrap();
        let names: Vec<&str> = seen.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(names, ["e/a load", "e/a setup", "e/b op show"]);
        if Path::new("/proc/self/status").exists() {
            let setup = seen[1].peak_rss.expect("VmHWM");
            assert!(setup >= 64 << 20, "the setup step held 64 MiB: {setup}");
            // The lesson's peak is its highest step's, not its last one's.
            let highest = seen.iter().filter_map(|s| s.peak_rss).max();
            assert_eq!(lesson, highest);
        }
        assert!(step_row(&seen[0]).starts_with("e/a load"));
    }

    #[test]
    fn targets_name_each_lesson_that_missed() {
        let lesson = |name: &str, seconds: f64, peak: Option<u64>| LessonBench {
            lesson: name.into(),
            seconds,
            peak_rss: peak,
            rss_after_drop: None,
            held: true,
            problem: None,
        };
        let all = [
            lesson("fast", 1.0, Some(100 << 20)),
            lesson("big", 2.0, Some(3000 << 20)),
            lesson("slow", 90.0, Some(100 << 20)),
            lesson("unmeasured", 1.0, None),
        ];
        let missed = missed_targets_in(&all, Some(2048), Some(60.0), Lang::En);
        assert_eq!(
            missed,
            [
                "big: peak 3000 MiB, over the target of 2048 MiB",
                "slow: 90.00 s, over the target of 60 s",
                "unmeasured: peak n/a MiB, over the target of 2048 MiB",
            ]
        );
        assert!(missed_targets_in(&all[..1], Some(2048), Some(60.0), Lang::En).is_empty());
    }
}
