//! Rendering a [`LessonReport`]: an aligned terminal table with variants
//! side by side, the same grid as Markdown (for slides), or JSON (schema in
//! `docs/REPORT_SCHEMA.md`). In both grids the winning figure of a row is
//! marked `★` with the factor by which it beats the worst variant, and
//! modelled sizes say so.

use super::claims::format_number;
use super::runner::{ExperimentReport, LessonReport, OpResult};
use super::{CourseError, OpKind};

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
            other => Err(CourseError::Invalid(format!(
                "unknown format '{other}' (expected table, json or markdown)"
            ))),
        }
    }
}

/// Render a report.
pub fn render(report: &LessonReport, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(report).unwrap_or_else(|e| {
            // Serialising plain data cannot fail; say so rather than panic.
            format!("{{\"error\": \"{e}\"}}")
        }),
        Format::Table => render_text(report, false),
        Format::Markdown => render_text(report, true),
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

/// One grid row: a label, a cell per variant and, when `mark` is set, the
/// numbers that decide the winner (lower is better).
struct Row {
    label: String,
    cells: Vec<String>,
    values: Vec<Option<f64>>,
    mark: bool,
}

impl Row {
    fn text(label: impl Into<String>, cells: Vec<String>) -> Row {
        let n = cells.len();
        Row {
            label: label.into(),
            cells,
            values: vec![None; n],
            mark: false,
        }
    }

    fn measured(label: impl Into<String>, values: Vec<Option<f64>>, fmt: fn(f64) -> String) -> Row {
        Row {
            label: label.into(),
            cells: values
                .iter()
                .map(|v| v.map_or_else(|| "—".to_string(), fmt))
                .collect(),
            values,
            mark: true,
        }
    }

    /// Cells with the winner marked `★ ×factor`.
    fn marked_cells(&self) -> Vec<String> {
        let mut cells = self.cells.clone();
        let present: Vec<(usize, f64)> = self
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .collect();
        if !self.mark || present.len() < 2 {
            return cells;
        }
        let (best_i, best) = present
            .iter()
            .copied()
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let worst = present
            .iter()
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max);
        if worst > best {
            let mark = if best > 0.0 {
                format!(" ★ ×{}", factor(worst / best))
            } else {
                " ★".to_string()
            };
            cells[best_i].push_str(&mark);
        }
        cells
    }
}

/// A winning factor: one decimal below 10, whole above.
fn factor(f: f64) -> String {
    if f >= 10.0 {
        format!("{}", f.round() as i64)
    } else {
        format!("{f:.1}").trim_end_matches(".0").to_string()
    }
}

fn int_fmt(v: f64) -> String {
    format_number(v)
}

fn ms_fmt(v: f64) -> String {
    format!("{} ms", format_number(v))
}

fn experiment_rows(exp: &ExperimentReport, modelled: bool) -> Vec<Row> {
    let vs = &exp.variants;
    let m = if modelled { " (modelled)" } else { "" };
    let mut rows = Vec::new();
    let total = |f: &dyn Fn(&super::CollStats) -> i64| -> Vec<Option<f64>> {
        vs.iter()
            .map(|v| {
                (!v.collections.is_empty()).then(|| v.collections.iter().map(f).sum::<i64>() as f64)
            })
            .collect()
    };
    rows.push(Row::measured("documents", total(&|c| c.count), int_fmt));
    rows.push(Row::measured("data size", total(&|c| c.size), human_bytes));
    rows.push(Row::measured(
        format!("storage size{m}"),
        total(&|c| c.storage_size),
        human_bytes,
    ));
    rows.push(Row::measured(
        format!("index size{m}"),
        total(&|c| c.total_index_size),
        human_bytes,
    ));
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
                Some(c) => format!(
                    "{} doc{}, avg {}, max {}",
                    c.count,
                    if c.count == 1 { "" } else { "s" },
                    human_bytes(c.avg_obj_size),
                    human_bytes(c.max_obj_size as f64)
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
        rows.push(Row::text(format!("  indexes{m}"), index_cells));
    }
    for (i, op) in exp.operations.iter().enumerate() {
        let results: Vec<Option<&OpResult>> = vs.iter().map(|v| v.operations.get(i)).collect();
        let kind = match op.kind {
            OpKind::Read => "read",
            OpKind::Write => "write",
        };
        rows.push(Row::text(
            format!(
                "op {} ({kind}, {}%)",
                op.id,
                format_number(op.weight_percent)
            ),
            results
                .iter()
                .map(|r| match r.and_then(|r| r.error.as_ref()) {
                    Some(e) if !e.code_name.is_empty() => format!("error {}", e.code_name),
                    Some(e) => format!("error: {}", first_line(&e.message)),
                    None => String::new(),
                })
                .collect(),
        ));
        let read = |f: fn(&super::ReadMetrics) -> f64| -> Vec<Option<f64>> {
            results
                .iter()
                .map(|r| r.and_then(|r| r.read.as_ref()).map(f))
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
                    "  plan",
                    results
                        .iter()
                        .map(|r| match r.and_then(|r| r.read.as_ref()) {
                            Some(m) if m.index.is_empty() => m.stages.clone(),
                            Some(m) => format!("{} {}", m.stages, m.index),
                            None => "—".into(),
                        })
                        .collect(),
                ));
                rows.push(Row::measured(
                    "  returned",
                    read(|m| m.n_returned as f64),
                    int_fmt,
                ));
                rows.push(Row::measured(
                    "  keys examined",
                    read(|m| m.keys_examined as f64),
                    int_fmt,
                ));
                rows.push(Row::measured(
                    "  docs examined",
                    read(|m| m.docs_examined as f64),
                    int_fmt,
                ));
                rows.push(Row::measured(
                    "  examined:returned",
                    read(|m| m.ratio),
                    int_fmt,
                ));
            }
            OpKind::Write => {
                let write = |f: fn(&super::WriteMetrics) -> i64| -> Vec<String> {
                    results
                        .iter()
                        .map(|r| {
                            r.and_then(|r| r.write.as_ref())
                                .map_or_else(|| "—".into(), |w| f(w).to_string())
                        })
                        .collect()
                };
                rows.push(Row::text("  n", write(|w| w.n)));
                rows.push(Row::text("  modified", write(|w| w.n_modified)));
                rows.push(Row::text("  upserted", write(|w| w.n_upserted)));
            }
        }
        rows.push(Row::measured(
            "  time",
            results.iter().map(|r| r.and_then(|r| r.millis)).collect(),
            ms_fmt,
        ));
    }
    rows
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn render_text(report: &LessonReport, markdown: bool) -> String {
    let mut out = String::new();
    let heading = if markdown { "## " } else { "" };
    out.push_str(&format!(
        "{heading}{} ({})\n\nscale {} · engine: {}\n",
        report.title,
        report.lesson,
        report.scale.as_str(),
        report.engine.name
    ));
    for exp in &report.experiments {
        let h3 = if markdown { "### " } else { "== " };
        out.push_str(&format!(
            "\n{h3}{} — {}\n\ndataset {} (seed {})\n\n",
            exp.id, exp.title, exp.dataset, exp.seed
        ));
        for v in &exp.variants {
            for (what, e) in [
                ("loading the dataset", &v.load_error),
                ("setup", &v.setup_error),
                ("measuring", &v.measure_error),
            ] {
                if let Some(e) = e {
                    out.push_str(&format!("{}: {what} failed: {}\n", v.id, first_line(e)));
                }
            }
        }
        let rows = experiment_rows(exp, report.engine.modelled);
        let header: Vec<String> = exp
            .variants
            .iter()
            .map(|v| format!("{} ({})", v.id, v.database))
            .collect();
        if markdown {
            out.push_str(&markdown_grid(&header, &rows));
        } else {
            out.push_str(&text_grid(&header, &rows));
        }
        if !exp.claims.is_empty() {
            out.push_str(if markdown {
                "\n**Claims**\n\n"
            } else {
                "\nClaims\n"
            });
            for c in &exp.claims {
                let mark = if c.verdict.passed { "✓" } else { "✗" };
                if markdown {
                    out.push_str(&format!(
                        "- {mark} {} — `{}` ({})\n",
                        c.text, c.check, c.verdict.reason
                    ));
                } else {
                    out.push_str(&format!(
                        "  {mark} {}\n      {}  →  {}\n",
                        c.text, c.check, c.verdict.reason
                    ));
                }
            }
        }
    }
    out
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn text_grid(header: &[String], rows: &[Row]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(Row::marked_cells).collect();
    let label_w = rows.iter().map(|r| width(&r.label)).max().unwrap_or(0);
    let col_w: Vec<usize> = (0..header.len())
        .map(|i| {
            cells
                .iter()
                .map(|c| c.get(i).map_or(0, |s| width(s)))
                .chain([width(&header[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(width(s))));
    let mut out = String::new();
    let line = |label: &str, cs: &[String]| {
        let mut l = pad(label, label_w);
        for (i, w) in col_w.iter().enumerate() {
            l.push_str("  ");
            l.push_str(&pad(cs.get(i).map_or("", String::as_str), *w));
        }
        format!("{}\n", l.trim_end())
    };
    out.push_str(&line("", header));
    for (r, cs) in rows.iter().zip(&cells) {
        out.push_str(&line(&r.label, cs));
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
        let r = Row::measured("docs", vec![Some(1200.0), Some(6.0)], int_fmt);
        assert_eq!(
            r.marked_cells(),
            vec!["1200".to_string(), "6 ★ ×200".to_string()]
        );
        let r = Row::measured("docs", vec![Some(5.0), None], int_fmt);
        assert_eq!(r.marked_cells(), vec!["5".to_string(), "—".to_string()]);
    }

    #[test]
    fn bytes() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
    }
}
