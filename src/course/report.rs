//! Rendering a [`LessonReport`]: an aligned terminal table with variants
//! side by side, the same grid as Markdown (for slides), or JSON (schema in
//! `docs/REPORT_SCHEMA.md`). In both grids the lowest *cost* of a row is
//! marked `★` with the factor by which it beats the highest, unless the
//! difference is under the noise floor ([`star_marks`], shared with the
//! TUI); failed variants are shown as failed and win nothing; modelled
//! sizes say so; a recommended variant gets a trade-off summary. Headings
//! and labels come in the report's language ([`render_in`]), and so do the
//! report's own messages (failures, errors, claim reasons), in the JSON
//! too; columns are padded by display width, so CJK text lines up.

use super::claims::format_number;
use super::runner::{ExperimentReport, LessonReport, is_environment_error};
use super::{CourseError, OpKind};
use crate::locale::{self, Lang, Message};
use crate::measure::{OpResult, Timing};

/// Output format of `schemalab run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
    Markdown,
}

impl std::str::FromStr for Format {
    type Err = CourseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "table" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "markdown" | "md" => Ok(Format::Markdown),
            other => Err(CourseError::Invalid(
                crate::locale::Message::new(
                    "unknown format '{format}' (expected table, json or markdown)",
                )
                .arg("format", other),
            )),
        }
    }
}

/// Render a report in English.
pub fn render(report: &LessonReport, format: Format) -> String {
    render_in(report, format, Lang::En)
}

/// Render a report with its headings and labels in `lang` (the lesson's
/// own strings come translated in the report; JSON keys never change).
pub fn render_in(report: &LessonReport, format: Format, lang: Lang) -> String {
    match format {
        // Every message of the report (a failure, an error, a claim's
        // reason) is written in `lang`; the keys and types stay.
        Format::Json => locale::serialize_in(lang, || serde_json::to_string_pretty(report))
            .unwrap_or_else(|e| {
                // Serialising plain data cannot fail; say so rather than panic.
                format!("{{\"error\": \"{e}\"}}")
            }),
        Format::Table => render_text(report, false, lang),
        Format::Markdown => render_text(report, true, lang),
    }
}

/// Bytes with a binary unit, e.g. `1.5 KiB`.
pub fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v.abs() >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{} B", format_number(v.round()))
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// What a starred row measures, for the noise floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Noise {
    /// Exact counts and sizes: no star when the highest is within 1% of
    /// the lowest (679 against 680 is a tie, not a "×1.00" win).
    Count,
    /// Milliseconds: starred only by [`time_marks`], when the spreads of
    /// the samples separate.
    Time,
}

/// The legend printed under every comparison (CLI, Markdown and TUI).
/// The legend under every comparison, in `lang`.
pub fn legend(lang: Lang) -> &'static str {
    lang.t(LEGEND)
}

pub const LEGEND: &str = "★ = lowest cost in its row (×N: N times lower than the highest); none when counts are within 1% or times' runs overlap. Times: median of 5+ runs (fastest–slowest). Failed variants win nothing.";

/// Counts within this factor of each other tie: the star's factor is
/// printed to two decimals, and "×1.00" says nothing a learner can use.
const COUNT_TIE: f64 = 1.01;

/// For each variant, `Some(factor)` when its figure is the lowest cost of
/// the row by more than the noise floor (`factor` = highest / lowest,
/// infinite when the lowest is 0); `None` otherwise. `None` values
/// (failed or unmeasured) take no part.
pub fn star_marks(values: &[Option<f64>], noise: Noise) -> Vec<Option<f64>> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let none = vec![None; values.len()];
    if present.len() < 2 {
        return none;
    }
    let best = present.iter().copied().fold(f64::INFINITY, f64::min);
    let worst = present.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let real = match noise {
        Noise::Count => worst > best * COUNT_TIE,
        // Times without their spreads never win: see `time_marks`.
        Noise::Time => false,
    };
    if !real {
        return none;
    }
    let f = if best > 0.0 {
        worst / best
    } else {
        f64::INFINITY
    };
    values
        .iter()
        .map(|v| v.filter(|x| *x == best).map(|_| f))
        .collect()
}

/// For each variant, `Some(factor)` on the fastest (lowest median) when
/// its spread lies wholly below every other variant's
/// ([`Timing::clearly_below`]); `factor` = slowest median / fastest.
/// `None` timings (failed or unmeasured) take no part.
pub fn time_marks(timings: &[Option<&Timing>]) -> Vec<Option<f64>> {
    let none = vec![None; timings.len()];
    let present: Vec<(usize, &Timing)> = timings
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.map(|t| (i, t)))
        .collect();
    if present.len() < 2 {
        return none;
    }
    let Some(&(best_i, best)) = present
        .iter()
        .min_by(|a, b| a.1.median.total_cmp(&b.1.median))
    else {
        return none;
    };
    let separated = present
        .iter()
        .all(|(i, t)| *i == best_i || best.clearly_below(t));
    if !separated {
        return none;
    }
    let worst = present
        .iter()
        .map(|(_, t)| t.median)
        .fold(f64::NEG_INFINITY, f64::max);
    let f = if best.median > 0.0 {
        worst / best.median
    } else {
        f64::INFINITY
    };
    let mut marks = none;
    marks[best_i] = Some(f);
    marks
}

/// `★ ×12`, or `★` when the lowest is zero.
pub fn star_text(f: f64) -> String {
    if f.is_finite() {
        format!("★ ×{}", factor(f))
    } else {
        "★".to_string()
    }
}

/// One grid row: a label, a cell per variant and, when `noise` is set, the
/// costs that decide the winner (lower is better).
struct Row {
    label: String,
    cells: Vec<String>,
    values: Vec<Option<f64>>,
    /// A time row's samples per variant (what [`time_marks`] stars by).
    timings: Vec<Option<Timing>>,
    noise: Option<Noise>,
    /// Built from figures (blanked for failed variants).
    measured: bool,
}

impl Row {
    fn text(label: impl Into<String>, cells: Vec<String>) -> Row {
        let n = cells.len();
        Row {
            label: label.into(),
            cells,
            values: vec![None; n],
            timings: vec![None; n],
            noise: None,
            measured: false,
        }
    }

    /// A figure that is not a cost (shown, never starred).
    fn figure(label: impl Into<String>, values: Vec<Option<f64>>, fmt: fn(f64) -> String) -> Row {
        let mut r = Row::cost(label, values, fmt, Noise::Count);
        r.noise = None;
        r
    }

    fn cost(
        label: impl Into<String>,
        values: Vec<Option<f64>>,
        fmt: fn(f64) -> String,
        noise: Noise,
    ) -> Row {
        Row {
            label: label.into(),
            cells: values
                .iter()
                .map(|v| v.map_or_else(|| "—".to_string(), fmt))
                .collect(),
            timings: vec![None; values.len()],
            values,
            noise: Some(noise),
            measured: true,
        }
    }

    /// A time row: each variant's median with its spread, starred by
    /// [`time_marks`].
    fn time(label: impl Into<String>, timings: Vec<Option<Timing>>) -> Row {
        Row {
            label: label.into(),
            cells: timings
                .iter()
                .map(|t| t.as_ref().map_or_else(|| "—".to_string(), time_cell))
                .collect(),
            values: timings
                .iter()
                .map(|t| t.as_ref().map(|t| t.median))
                .collect(),
            timings,
            noise: Some(Noise::Time),
            measured: true,
        }
    }

    /// Blank out the cells of failed variants and keep them out of the race.
    fn with_failed(mut self, failed: &[bool], lang: Lang) -> Row {
        if self.measured {
            for (i, f) in failed.iter().enumerate() {
                if *f {
                    if let Some(c) = self.cells.get_mut(i) {
                        *c = format!("✗ {}", lang.t("failed"));
                    }
                    if let Some(v) = self.values.get_mut(i) {
                        *v = None;
                    }
                    if let Some(t) = self.timings.get_mut(i) {
                        *t = None;
                    }
                }
            }
        }
        self
    }

    fn marks(&self) -> Vec<Option<f64>> {
        match self.noise {
            Some(Noise::Time) => {
                time_marks(&self.timings.iter().map(Option::as_ref).collect::<Vec<_>>())
            }
            Some(n) => star_marks(&self.values, n),
            None => vec![None; self.values.len()],
        }
    }

    /// Cells with the winner marked `★ ×factor`.
    fn marked_cells(&self) -> Vec<String> {
        let mut cells = self.cells.clone();
        for (c, m) in cells.iter_mut().zip(self.marks()) {
            if let Some(f) = m {
                c.push(' ');
                c.push_str(&star_text(f));
            }
        }
        cells
    }
}

/// A winning factor: two decimals below 1.1 (so a near tie never reads
/// "×1"), one decimal below 10, whole above.
fn factor(f: f64) -> String {
    if f < 1.1 {
        format!("{f:.2}")
    } else if f >= 10.0 {
        format!("{}", f.round() as i64)
    } else {
        format!("{f:.1}").trim_end_matches(".0").to_string()
    }
}

fn int_fmt(v: f64) -> String {
    format_number(v)
}

/// `2.4 ms (2.3–2.9)`: the median, and the fastest and slowest run when
/// there was more than one.
fn time_cell(t: &Timing) -> String {
    let spread = spread_text(t);
    if spread.is_empty() {
        ms_fmt(t.median)
    } else {
        format!("{} ({spread})", ms_fmt(t.median))
    }
}

/// `2.3–2.9`: a time's fastest and slowest run, as the course formats
/// numbers; empty when they are the same (a single run).
pub fn spread_text(t: &Timing) -> String {
    if t.low >= t.high {
        String::new()
    } else {
        format!("{}–{}", format_number(t.low), format_number(t.high))
    }
}

fn ms_fmt(v: f64) -> String {
    format!("{} ms", format_number(v))
}

/// The label of the bytes-read rows: cold when the cache was emptied
/// before each operation (the embedded engine), else as the server's
/// cache stood.
fn cache_label(vs: &[super::runner::VariantReport], weighted: bool) -> &'static str {
    let warm = vs
        .iter()
        .flat_map(|v| &v.operations)
        .any(|o| o.cache.as_ref().is_some_and(|c| !c.cold));
    match (weighted, warm) {
        (true, false) => "per 100 requests: bytes read into cache, cold (weighted)",
        (true, true) => "per 100 requests: bytes read into cache, as found (weighted)",
        (false, false) => "bytes read into cache (cold)",
        (false, true) => "bytes read into cache (as found)",
    }
}

/// One experiment's grid, with where its whole-experiment figures sit.
struct Grid {
    rows: Vec<Row>,
    /// The size totals (documents, data, storage, indexes).
    totals: std::ops::Range<usize>,
    /// The weighted "per 100 requests" rows and the steady-state working set.
    workload: std::ops::Range<usize>,
}

fn experiment_rows(exp: &ExperimentReport, modelled: bool, lang: Lang) -> Grid {
    let vs = &exp.variants;
    let failed: Vec<bool> = vs.iter().map(|v| v.failure.is_some()).collect();
    let m = if modelled { lang.t(" (modelled)") } else { "" };
    let sub = |label: &'static str| format!("  {}", lang.t(label));
    let mut rows = Vec::new();
    rows.push(Row::text(
        lang.t("status"),
        vs.iter()
            .map(|v| match &v.failure {
                Some(f) => format!(
                    "✗ {}",
                    Message::new("FAILED: {problem}")
                        .arg_msg("problem", f.clone())
                        .render_in(lang)
                ),
                None => lang.t("ran").into(),
            })
            .collect(),
    ));
    let totals_start = rows.len();
    let total = |f: &dyn Fn(&super::CollStats) -> i64| -> Vec<Option<f64>> {
        vs.iter()
            .map(|v| {
                (!v.collections.is_empty()).then(|| v.collections.iter().map(f).sum::<i64>() as f64)
            })
            .collect()
    };
    rows.push(Row::figure(
        lang.t("documents"),
        total(&|c| c.count),
        int_fmt,
    ));
    rows.push(Row::cost(
        lang.t("data size"),
        total(&|c| c.size),
        human_bytes,
        Noise::Count,
    ));
    rows.push(Row::cost(
        format!("{}{m}", lang.t("storage size")),
        total(&|c| c.storage_size),
        human_bytes,
        Noise::Count,
    ));
    rows.push(Row::cost(
        format!("{}{m}", lang.t("index size")),
        total(&|c| c.total_index_size),
        human_bytes,
        Noise::Count,
    ));
    let totals = totals_start..rows.len();
    // Per collection, in first-seen order across variants.
    let mut names: Vec<&str> = Vec::new();
    for v in vs {
        for c in &v.collections {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
    }
    for name in names {
        let find = |v: &super::runner::VariantReport| {
            v.collections.iter().find(|c| c.name == name).cloned()
        };
        let cells = vs
            .iter()
            .map(|v| match find(v) {
                Some(c) => lang.f(
                    if c.count == 1 {
                        "1 doc, avg {avg}, max {max}"
                    } else {
                        "{n} docs, avg {avg}, max {max}"
                    },
                    &[
                        ("n", &c.count),
                        ("avg", &human_bytes(c.avg_obj_size)),
                        ("max", &human_bytes(c.max_obj_size as f64)),
                    ],
                ),
                None => "—".into(),
            })
            .collect();
        rows.push(Row::text(name.to_string(), cells));
        let index_cells = vs
            .iter()
            .map(|v| match find(v) {
                Some(c) => c
                    .indexes
                    .iter()
                    .map(|i| format!("{} {}", i.name, human_bytes(i.size as f64)))
                    .collect::<Vec<_>>()
                    .join(", "),
                None => "—".into(),
            })
            .collect();
        rows.push(Row::text(
            format!("  {}{m}", lang.t("indexes")),
            index_cells,
        ));
    }
    let workload_start = rows.len();
    // The workload mix: what 100 requests cost, each operation weighted by
    // its share (weights change these figures; a missing figure leaves the
    // variant's total out rather than counting it as zero).
    if exp.operations.len() > 1 && exp.operations.iter().any(|o| o.weight_percent > 0.0) {
        let weighted = |f: &dyn Fn(&OpResult) -> Option<f64>| -> Vec<Option<f64>> {
            vs.iter()
                .map(|v| {
                    exp.operations
                        .iter()
                        .enumerate()
                        .filter(|(_, o)| o.weight_percent > 0.0)
                        .map(|(i, o)| {
                            v.operations
                                .get(i)
                                .and_then(f)
                                .map(|x| x * o.weight_percent)
                        })
                        .sum::<Option<f64>>()
                })
                .collect()
        };
        rows.push(Row::cost(
            lang.t("per 100 requests: docs examined (weighted)"),
            weighted(&|r| match r.kind {
                // An incomplete total (a stage not reported) leaves the
                // variant's weighted figure unknown, not smaller.
                OpKind::Read => r
                    .read
                    .as_ref()
                    .filter(|m| m.not_reported.is_empty())
                    .map(|m| m.docs_examined as f64),
                OpKind::Write => r.write.as_ref().map(|_| 0.0),
            }),
            int_fmt,
            Noise::Count,
        ));
        let bytes = Row::cost(
            lang.t("per 100 requests: bytes examined (weighted)"),
            weighted(&|r| match r.kind {
                OpKind::Read => r
                    .read
                    .as_ref()
                    .filter(|m| m.not_reported.is_empty())
                    .and_then(|m| m.bytes_examined)
                    .map(|b| b as f64),
                OpKind::Write => r.write.as_ref().map(|_| 0.0),
            }),
            human_bytes,
            Noise::Count,
        );
        // A server that reports no bytes (mongod) gets no row.
        if bytes.values.iter().any(Option::is_some) {
            rows.push(bytes);
        }
        let cache = Row::cost(
            format!("{}{m}", lang.t(cache_label(vs, true))),
            weighted(&|r| r.cache.as_ref().map(|c| c.bytes as f64)),
            human_bytes,
            Noise::Count,
        );
        if cache.values.iter().any(Option::is_some) {
            rows.push(cache);
        }
        rows.push(Row::time(
            lang.t("per 100 requests: time (weighted)"),
            vs.iter()
                .map(|v| {
                    let parts: Vec<(f64, Option<&Timing>)> = exp
                        .operations
                        .iter()
                        .enumerate()
                        .filter(|(_, o)| o.weight_percent > 0.0)
                        .map(|(i, o)| {
                            (
                                o.weight_percent,
                                v.operations.get(i).and_then(|r| r.timing.as_ref()),
                            )
                        })
                        .collect();
                    Timing::weighted_sum(&parts)
                })
                .collect(),
        ));
    }
    // The steady-state working set: one cache size for every variant.
    if let Some(size) = vs
        .iter()
        .find_map(|v| v.working_set.as_ref().map(|w| w.cache_bytes))
    {
        let mut row = Row::cost(
            format!(
                "{}{m}",
                lang.f(
                    "per 100 requests: bytes read into a {size} cache (steady state)",
                    &[("size", &human_bytes(size as f64))],
                )
            ),
            vs.iter()
                .map(|v| v.working_set.as_ref().and_then(|w| w.bytes_read_per_100))
                .collect(),
            human_bytes,
            Noise::Count,
        );
        for (c, v) in row.cells.iter_mut().zip(vs) {
            if let Some(why) = v.working_set.as_ref().and_then(|w| w.not_measured.as_ref()) {
                *c = why.render_in(lang);
            }
        }
        rows.push(row);
    }
    let workload = workload_start..rows.len();
    for (i, op) in exp.operations.iter().enumerate() {
        let results: Vec<Option<&OpResult>> = vs.iter().map(|v| v.operations.get(i)).collect();
        let kind = match op.kind {
            OpKind::Read => lang.t("read"),
            OpKind::Write => lang.t("write"),
        };
        rows.push(Row::text(
            lang.f(
                "op {id} ({kind}, {pct}%)",
                &[
                    ("id", &op.id),
                    ("kind", &kind),
                    ("pct", &format_number(op.weight_percent)),
                ],
            ),
            results
                .iter()
                .map(|r| match r.map(|r| (r, r.error.as_ref())) {
                    Some((r, Some(e))) => format!(
                        "{} {}{}{}",
                        if r.expected_error {
                            lang.t("expected error").to_string()
                        } else {
                            format!("✗ {}", lang.t("error"))
                        },
                        e.code_name,
                        lang.t(": "),
                        first_line(&e.message.render_in(lang))
                    ),
                    _ => String::new(),
                })
                .collect(),
        ));
        let read = |f: fn(&super::ReadMetrics) -> Option<f64>| -> Vec<Option<f64>> {
            results
                .iter()
                .map(|r| r.and_then(|r| r.read.as_ref()).and_then(f))
                .collect()
        };
        let write = |f: fn(&super::WriteMetrics) -> Option<f64>| -> Vec<Option<f64>> {
            results
                .iter()
                .map(|r| r.and_then(|r| r.write.as_ref()).and_then(f))
                .collect()
        };
        // An operation that failed everywhere has no figures to show.
        if results
            .iter()
            .all(|r| r.is_none_or(|r| r.read.is_none() && r.write.is_none()))
        {
            continue;
        }
        match op.kind {
            OpKind::Read => {
                rows.push(Row::text(
                    sub("plan"),
                    results
                        .iter()
                        .map(|r| match r.and_then(|r| r.read.as_ref()) {
                            Some(m) => plan_cell(m),
                            None => "—".into(),
                        })
                        .collect(),
                ));
                rows.push(Row::figure(
                    sub("returned"),
                    read(|m| Some(m.n_returned as f64)),
                    int_fmt,
                ));
                // A total that leaves out a stage the server did not report
                // is a lower bound: shown as such, never starred.
                let partial = |label: String, f: fn(&super::ReadMetrics) -> f64| {
                    let mut row = Row::cost(
                        label,
                        results
                            .iter()
                            .map(|r| {
                                r.and_then(|r| r.read.as_ref())
                                    .filter(|m| m.not_reported.is_empty())
                                    .map(f)
                            })
                            .collect(),
                        int_fmt,
                        Noise::Count,
                    );
                    for (c, r) in row.cells.iter_mut().zip(&results) {
                        if let Some(m) = r.and_then(|r| r.read.as_ref())
                            && !m.not_reported.is_empty()
                        {
                            *c = lang.f(
                                "≥ {n} (not reported: {stages})",
                                &[
                                    ("n", &int_fmt(f(m))),
                                    ("stages", &m.not_reported.join(", ")),
                                ],
                            );
                        }
                    }
                    row
                };
                rows.push(partial(sub("keys examined (all stages)"), |m| {
                    m.keys_examined as f64
                }));
                rows.push(partial(sub("docs examined (all stages)"), |m| {
                    m.docs_examined as f64
                }));
                let mut bytes = Row::cost(
                    sub("bytes examined (all stages)"),
                    read(|m| {
                        m.bytes_examined
                            .filter(|_| m.not_reported.is_empty())
                            .map(|b| b as f64)
                    }),
                    human_bytes,
                    Noise::Count,
                );
                for (c, r) in bytes.cells.iter_mut().zip(&results) {
                    if r.and_then(|r| r.read.as_ref())
                        .is_some_and(|m| m.bytes_examined.is_none())
                    {
                        *c = lang.t("not reported").into();
                    }
                }
                rows.push(bytes);
                rows.push(Row::figure(
                    sub("examined:returned"),
                    read(|m| m.not_reported.is_empty().then_some(m.ratio)),
                    int_fmt,
                ));
                rows.push(Row::cost(
                    sub("bytes returned"),
                    read(|m| m.bytes_returned.map(|b| b as f64)),
                    human_bytes,
                    Noise::Count,
                ));
            }
            OpKind::Write => {
                rows.push(Row::figure(sub("n"), write(|w| Some(w.n as f64)), int_fmt));
                // Not a cost on its own: an insert modifies nothing yet
                // writes a document; the index keys below are the cost.
                rows.push(Row::figure(
                    sub("modified"),
                    write(|w| Some(w.n_modified as f64)),
                    int_fmt,
                ));
                rows.push(Row::figure(
                    sub("upserted"),
                    write(|w| Some(w.n_upserted as f64)),
                    int_fmt,
                ));
                let keys = |f: fn(&super::WriteMetrics) -> Option<i64>| -> Vec<String> {
                    results
                        .iter()
                        .map(|r| match r.and_then(|r| r.write.as_ref()) {
                            Some(w) => f(w)
                                .map_or_else(|| lang.t("not reported").into(), |k| k.to_string()),
                            None => "—".into(),
                        })
                        .collect()
                };
                let mut ins = Row::cost(
                    sub("keys inserted"),
                    write(|w| w.keys_inserted.map(|k| k as f64)),
                    int_fmt,
                    Noise::Count,
                );
                ins.cells = keys(|w| w.keys_inserted);
                rows.push(ins);
                let mut del = Row::cost(
                    sub("keys deleted"),
                    write(|w| w.keys_deleted.map(|k| k as f64)),
                    int_fmt,
                    Noise::Count,
                );
                del.cells = keys(|w| w.keys_deleted);
                rows.push(del);
            }
        }
        let mut cache = Row::cost(
            format!("  {}{m}", lang.t(cache_label(vs, false))),
            results
                .iter()
                .map(|r| r.and_then(|r| r.cache.as_ref()).map(|c| c.bytes as f64))
                .collect(),
            human_bytes,
            Noise::Count,
        );
        for (c, r) in cache.cells.iter_mut().zip(&results) {
            if r.is_some_and(|r| r.cache.is_none() && r.error.is_none()) {
                *c = lang.t("not reported").into();
            }
        }
        rows.push(cache);
        rows.push(Row::time(
            sub("time"),
            results
                .iter()
                .map(|r| r.and_then(|r| r.timing.clone()))
                .collect(),
        ));
    }
    Grid {
        rows: rows
            .into_iter()
            .map(|r| r.with_failed(&failed, lang))
            .collect(),
        totals,
        workload,
    }
}

/// One row of an experiment's summary as the CLI prints it: its label and
/// one cell per variant, the winner's with its `★ ×N` mark.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub label: String,
    pub cells: Vec<String>,
}

/// What a whole experiment cost, as `schemalab run` reports it under the
/// grid's size totals and workload rows, and the verdict line on them. The
/// workbench shows the same rows (one model, two renderings).
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The size totals, then the weighted "per 100 requests" rows and the
    /// steady-state working set when the experiment has them.
    pub rows: Vec<SummaryRow>,
    /// "Recommended: … Wins on: … Loses on: …", when a variant is
    /// recommended.
    pub trade_off: Option<String>,
}

/// The summary of `exp` in `lang`; `modelled` labels the engine's modelled
/// sizes as the report does.
pub fn summary_in(exp: &ExperimentReport, modelled: bool, lang: Lang) -> Summary {
    let grid = experiment_rows(exp, modelled, lang);
    let rows = grid
        .totals
        .clone()
        .chain(grid.workload.clone())
        .filter_map(|i| grid.rows.get(i))
        .map(|r| SummaryRow {
            label: r.label.clone(),
            cells: r.marked_cells(),
        })
        .collect();
    Summary {
        rows,
        trade_off: trade_off(exp, &grid.rows, lang),
    }
}

/// `FETCH<-IXSCAN a_1 + $lookup×3`: the query's plan and the joins whose
/// work the totals include.
fn plan_cell(m: &super::ReadMetrics) -> String {
    let mut s = if m.index.is_empty() {
        m.stages.clone()
    } else {
        format!("{} {}", m.stages, m.index)
    };
    let mut joins: Vec<(String, usize)> = Vec::new();
    for f in m.pipeline.iter().skip(1) {
        if f.keys_examined.is_some() || f.docs_examined.is_some() {
            let name = f.stage.rsplit('/').next().unwrap_or(&f.stage).to_string();
            match joins.iter_mut().find(|(n, _)| *n == name) {
                Some((_, k)) => *k += 1,
                None => joins.push((name, 1)),
            }
        }
    }
    for (n, k) in joins {
        s.push_str(&if k > 1 {
            format!(" + {n}×{k}")
        } else {
            format!(" + {n}")
        });
    }
    s
}

/// On which starred costs the recommended variant wins and on which
/// another variant beats it.
fn trade_off(exp: &ExperimentReport, rows: &[Row], lang: Lang) -> Option<String> {
    let rec = exp.variants.iter().position(|v| v.recommended)?;
    let v = &exp.variants[rec];
    if let Some(f) = &v.failure {
        return Some(lang.f(
            "Recommended: {id} — it failed ({f}), so nothing can be said about its costs.",
            &[("id", &v.id), ("f", &f.render_in(lang))],
        ));
    }
    let mut wins = Vec::new();
    let mut losses = Vec::new();
    let mut section = String::new();
    for r in rows {
        if !r.label.starts_with(' ') {
            section = r.label.split(" (").next().unwrap_or(&r.label).to_string();
        }
        let marks = r.marks();
        if marks.iter().all(Option::is_none) {
            continue;
        }
        let label = if r.label.starts_with(' ') {
            format!("{section} {}", r.label.trim())
        } else {
            r.label.clone()
        };
        let best = r
            .values
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        // It loses only where it is worse than the best beyond the noise
        // floor (a time within 20% of the best is a tie, not a loss).
        let worse = r
            .values
            .get(rec)
            .copied()
            .flatten()
            .is_some_and(|x| match r.noise {
                Some(Noise::Count) => x > best * COUNT_TIE,
                // Slower only when another variant's runs all beat its own.
                Some(Noise::Time) => marks
                    .iter()
                    .enumerate()
                    .any(|(i, m)| m.is_some() && i != rec),
                _ => x > best,
            });
        match marks.get(rec).copied().flatten() {
            Some(f) => wins.push(lang.f(
                "{label} ({star})",
                &[("label", &label), ("star", &star_text(f))],
            )),
            None if !worse => {}
            None => {
                let winner = marks
                    .iter()
                    .position(Option::is_some)
                    .map_or("", |i| exp.variants[i].id.as_str());
                losses.push(lang.f(
                    "{label} (best: {winner})",
                    &[("label", &label), ("winner", &winner)],
                ));
            }
        }
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            lang.t("nothing").to_string()
        } else {
            v.join(lang.t("; "))
        }
    };
    Some(lang.f(
        "Recommended: {id}. Wins on: {wins}. Loses on: {losses}.",
        &[
            ("id", &v.id),
            ("wins", &list(&wins)),
            ("losses", &list(&losses)),
        ],
    ))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn render_text(report: &LessonReport, markdown: bool, lang: Lang) -> String {
    let mut out = String::new();
    let heading = if markdown { "## " } else { "" };
    out.push_str(&format!(
        "{heading}{} ({})\n\n{}\n",
        report.title,
        report.lesson,
        lang.f(
            "scale {scale} · engine: {engine}",
            &[
                ("scale", &report.scale.as_str()),
                ("engine", &report.engine.name_in(lang))
            ],
        )
    ));
    for exp in &report.experiments {
        let h3 = if markdown { "### " } else { "== " };
        out.push_str(&format!(
            "\n{h3}{} — {}\n\n{}\n\n",
            exp.id,
            exp.title,
            lang.f(
                "dataset {dataset} (seed {seed})",
                &[("dataset", &exp.dataset), ("seed", &exp.seed)],
            )
        ));
        let mut environment = false;
        for v in &exp.variants {
            if let Some(f) = &v.failure {
                let line = format!(
                    "✗ {}",
                    Message::new("FAILED {id}: {f}")
                        .arg("id", &v.id)
                        .arg_msg("f", f.clone())
                        .render_in(lang)
                );
                out.push_str(&if markdown {
                    format!("**{line}**\n\n")
                } else {
                    format!("{line}\n")
                });
                // The server's and the driver's words are the same in
                // every rendering: read them in the English one.
                environment |= is_environment_error(&f.to_string());
            }
        }
        if environment {
            out.push_str(&lang.f(
                "This failure looks like the environment (a slow or unreachable server), not the lesson: \
                 retry `schemalab run {lesson} --scale {scale}` when the machine is less busy, or try a smaller --scale.",
                &[("lesson", &report.lesson), ("scale", &report.scale.as_str())],
            ));
            out.push('\n');
        }
        let Grid { rows, .. } = experiment_rows(exp, report.engine.modelled, lang);
        let header: Vec<String> = exp
            .variants
            .iter()
            .map(|v| {
                format!(
                    "{}{} ({})",
                    if v.recommended { "◆ " } else { "" },
                    v.id,
                    v.database
                )
            })
            .collect();
        if markdown {
            out.push_str(&markdown_grid(&header, &rows));
        } else {
            out.push_str(&text_grid(&header, &rows));
        }
        // Paragraphs under the table wrap in the terminal (Markdown keeps
        // them whole: its reader wraps).
        let para = |t: &str| {
            if markdown {
                format!("{t}\n")
            } else {
                wrap_paragraph(t)
            }
        };
        out.push('\n');
        out.push_str(&para(legend(lang)));
        if exp.variants.iter().any(|v| v.recommended) {
            out.push_str(&para(lang.t("◆ = the design this lesson recommends.")));
        }
        if let Some(t) = trade_off(exp, &rows, lang) {
            out.push_str(&para(&t));
        }
        if !exp.claims.is_empty() {
            out.push_str(&if markdown {
                format!("\n**{}**\n\n", lang.t("Claims"))
            } else {
                format!("\n{}\n", lang.t("Claims"))
            });
            for c in &exp.claims {
                let mark = if c.verdict.passed { "✓" } else { "✗" };
                if markdown {
                    out.push_str(&format!(
                        "- {mark} {} — `{}` ({})\n",
                        c.text,
                        c.check,
                        c.verdict.reason.render_in(lang)
                    ));
                } else {
                    out.push_str(&format!(
                        "  {mark} {}\n      {}  →  {}\n",
                        c.text,
                        c.check,
                        c.verdict.reason.render_in(lang)
                    ));
                }
            }
        }
    }
    out
}

/// The width prose under a table wraps at in the terminal report.
const PARAGRAPH_COLUMNS: usize = 100;

/// `t` wrapped to [`PARAGRAPH_COLUMNS`] by display width (CJK text breaks
/// between characters, never before closing punctuation), ending in a
/// newline.
fn wrap_paragraph(t: &str) -> String {
    let mut out = String::new();
    for line in textwrap::wrap(t, PARAGRAPH_COLUMNS) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Terminal columns (CJK takes two), so Chinese labels line up.
fn width(s: &str) -> usize {
    locale::width(s)
}

/// The widest a variant's column grows before its cells wrap (a list of
/// 27 index names stays readable; the JSON report has every name whole).
const MAX_CELL_COLUMNS: usize = 44;

fn text_grid(header: &[String], rows: &[Row]) -> String {
    let wrap = |s: &str| -> Vec<String> {
        if width(s) <= MAX_CELL_COLUMNS {
            return vec![s.to_string()];
        }
        let opts = textwrap::Options::new(MAX_CELL_COLUMNS).break_words(false);
        textwrap::wrap(s, opts)
            .into_iter()
            .map(|l| l.into_owned())
            .collect()
    };
    let cells: Vec<Vec<Vec<String>>> = rows
        .iter()
        .map(|r| r.marked_cells().iter().map(|c| wrap(c)).collect())
        .collect();
    let header: Vec<Vec<String>> = header.iter().map(|h| wrap(h)).collect();
    let label_w = rows.iter().map(|r| width(&r.label)).max().unwrap_or(0);
    let col_w: Vec<usize> = (0..header.len())
        .map(|i| {
            cells
                .iter()
                .chain([&header])
                .filter_map(|c| c.get(i))
                .flatten()
                .map(|s| width(s))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let pad = |s: &str, w: usize| locale::pad(s, w, true);
    let mut out = String::new();
    let mut line = |label: &str, cs: &[Vec<String>]| {
        let height = cs.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for k in 0..height {
            let mut l = pad(if k == 0 { label } else { "" }, label_w);
            for (i, w) in col_w.iter().enumerate() {
                l.push_str("  ");
                let cell = cs.get(i).and_then(|c| c.get(k)).map_or("", String::as_str);
                l.push_str(&pad(cell, *w));
            }
            out.push_str(l.trim_end());
            out.push('\n');
        }
    };
    line("", &header);
    for (r, cs) in rows.iter().zip(&cells) {
        line(&r.label, cs);
    }
    out
}

fn markdown_grid(header: &[String], rows: &[Row]) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!(
        "| | {} |\n|---|{}\n",
        header
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(header.len())
    );
    for r in rows {
        let label = r.label.trim_start();
        let label = if r.label.starts_with("  ") {
            format!("&nbsp;&nbsp;{}", esc(label))
        } else {
            format!("**{}**", esc(label))
        };
        out.push_str(&format!(
            "| {label} | {} |\n",
            r.marked_cells()
                .iter()
                .map(|c| esc(c))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn winner_marked_with_factor() {
        let r = Row::cost("docs", vec![Some(1200.0), Some(6.0)], int_fmt, Noise::Count);
        assert_eq!(
            r.marked_cells(),
            vec!["1200".to_string(), "6 ★ ×200".to_string()]
        );
        let r = Row::cost("docs", vec![Some(5.0), None], int_fmt, Noise::Count);
        assert_eq!(r.marked_cells(), vec!["5".to_string(), "—".to_string()]);
    }

    #[test]
    fn noise_floor_and_non_costs_get_no_star() {
        // Equal counts, and counts within 1%: a tie.
        assert_eq!(
            star_marks(&[Some(60051.0), Some(60051.0)], Noise::Count),
            [None, None]
        );
        assert_eq!(
            star_marks(&[Some(679.0), Some(680.0)], Noise::Count),
            [None, None]
        );
        assert_eq!(
            star_marks(&[Some(679.0), Some(700.0)], Noise::Count),
            [Some(700.0 / 679.0), None]
        );
        // Bare times never win: only their spreads can (`time_marks`).
        assert_eq!(
            star_marks(&[Some(10.0), Some(130.0)], Noise::Time),
            [None, None]
        );
        let t = |xs: &[f64]| Timing::of(xs.to_vec());
        let fast = t(&[10.0, 11.0, 10.5, 10.2, 10.8]);
        let slow = t(&[13.0, 12.0, 14.0, 13.5, 12.5]);
        let overlapping = t(&[10.9, 12.0, 14.0, 13.5, 12.5]);
        assert_eq!(
            time_marks(&[Some(&fast), Some(&slow)]),
            [Some(13.0 / 10.5), None]
        );
        assert_eq!(
            time_marks(&[Some(&slow), Some(&fast)]),
            [None, Some(13.0 / 10.5)]
        );
        assert_eq!(time_marks(&[Some(&fast), Some(&overlapping)]), [None, None]);
        // One run each (writes): never starred, however far apart.
        assert_eq!(
            time_marks(&[Some(&t(&[1.0])), Some(&t(&[90.0]))]),
            [None, None]
        );
        assert_eq!(time_marks(&[Some(&fast), None]), [None, None]);
        // A returned count is a figure, not a cost.
        let r = Row::figure("returned", vec![Some(1.0), Some(9.0)], int_fmt);
        assert_eq!(r.marked_cells(), ["1", "9"]);
        // Three variants: the lowest wins against the highest, ties share.
        assert_eq!(
            star_marks(&[Some(4.0), Some(2.0), Some(2.0)], Noise::Count),
            [None, Some(2.0), Some(2.0)]
        );
        assert_eq!(star_text(f64::INFINITY), "★");
    }

    #[test]
    fn failed_variant_wins_nothing() {
        let r = Row::cost("docs", vec![Some(0.0), Some(6.0)], int_fmt, Noise::Count)
            .with_failed(&[true, false], Lang::En);
        assert_eq!(r.marked_cells(), ["✗ failed", "6"]);
    }

    #[test]
    fn bytes() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
    }
}
