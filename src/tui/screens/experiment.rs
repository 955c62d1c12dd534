//! The experiment view: variants side by side. Tabs: the workload
//! (statement, stage chain, counters with the winning side and factor), the
//! collections (bar charts of data, storage and index sizes, document
//! stats), sample documents and the lesson's claims.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, Borders, Cell, Gauge, List, ListItem, ListState, Paragraph, Row, Table, Wrap,
};

use crate::course::claims::format_number;
use crate::course::report::{self, Noise, spread_text, star_marks, star_text, time_marks};
use crate::course::{Experiment, ExperimentReport, OpKind, OpResult, Progress, VariantReport};
use crate::locale::Message;
use crate::measure::Timing;
use crate::tui::app::{App, ExpTab};
use crate::tui::screens::explain_tree;
use crate::tui::strings as s;
use crate::tui::theme::Theme;

struct Areas {
    header: Rect,
    status: Rect,
    body: Rect,
}

fn areas(main: Rect) -> Areas {
    let [header, status, body] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(main);
    Areas {
        header,
        status,
        body,
    }
}

fn ops_split(body: Rect) -> (Rect, Rect) {
    let list_w = (body.width / 4).clamp(18, 30);
    let [list, rest] =
        Layout::horizontal([Constraint::Length(list_w), Constraint::Min(1)]).areas(body);
    (list, rest)
}

/// The operation under a mouse click, if any.
pub fn op_at(app: &App, main: Rect, column: u16, row: u16) -> Option<usize> {
    if app.experiment.tab != ExpTab::Operations {
        return None;
    }
    let (list, _) = ops_split(areas(main).body);
    if column <= list.x || column + 1 >= list.right() || row <= list.y || row + 1 >= list.bottom() {
        return None;
    }
    let idx = usize::from(row - list.y - 1);
    (idx < app.workload_items()).then_some(idx)
}

/// How far a run has got, 0.0 ..= 1.0, from the runner's step counts.
pub fn fraction(p: &Progress) -> f64 {
    if p.total == 0 {
        0.0
    } else {
        (p.done as f64 / p.total as f64).clamp(0.0, 1.0)
    }
}

/// The runner's step as one label, in the interface's language:
/// `naive · load`.
pub fn step_label(p: &Progress) -> String {
    let step = p.step_in(s::lang());
    if p.variant.is_empty() {
        step
    } else {
        format!("{} · {step}", p.variant)
    }
}

/// The report of variant `id`, if it ran.
pub fn variant_report<'r>(report: &'r ExperimentReport, id: &str) -> Option<&'r VariantReport> {
    report.variants.iter().find(|v| v.id == id)
}

/// What went wrong in a variant, one line each, in the interface's
/// language: its load, setup or measurement error, else why it failed.
pub fn variant_errors(v: &VariantReport) -> Vec<String> {
    let lang = s::lang();
    let steps: Vec<String> = [&v.load_error, &v.setup_error, &v.measure_error]
        .into_iter()
        .flatten()
        .map(|e| e.render_in(lang))
        .collect();
    if !steps.is_empty() {
        return steps;
    }
    v.failure
        .iter()
        .map(|f| {
            Message::new(s::VARIANT_FAILED)
                .arg_msg("problem", f.clone())
                .render_in(lang)
        })
        .collect()
}

/// Human sizes in binary units.
pub fn bytes(n: i64) -> String {
    let n = u64::try_from(n).unwrap_or(0);
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let a = areas(area);
    let (Some(lesson), Some(exp)) = (app.current_lesson(), app.current_experiment()) else {
        frame.render_widget(Paragraph::new(s::t(s::NO_EXPERIMENT)).style(t.dim), area);
        return;
    };
    let mut tabs = vec![Span::raw(" ")];
    for tab in ExpTab::ALL {
        let style = if tab == app.experiment.tab {
            t.selected
        } else {
            t.dim
        };
        tabs.push(Span::styled(format!(" {} ", tab.label()), style));
        tabs.push(Span::raw(" "));
    }
    let n_exp = lesson.experiments().len();
    let mut first = Vec::new();
    // "experiment 2/3" where a lesson has several (h/l switch them).
    if n_exp > 1 {
        first.push(Span::styled(
            format!(
                " {} ",
                s::lang().f(
                    s::EXPERIMENT_N,
                    &[("n", &(app.experiment.experiment + 1)), ("total", &n_exp)]
                )
            ),
            t.selected,
        ));
    }
    first.extend([
        Span::styled(format!(" {} › ", lesson.title()), t.dim),
        Span::styled(exp.title.clone(), t.title),
        Span::styled(
            format!(
                "  · {} · {}",
                exp.dataset.get_ref(),
                s::scale_label(app.scale)
            ),
            t.dim,
        ),
    ]);
    let header = vec![Line::from(first), Line::from(tabs)];
    frame.render_widget(Paragraph::new(header), a.header);

    let report = app.current_report();
    render_status(app, frame, a.status, report.is_some());
    let Some(report) = report else {
        return;
    };
    match app.experiment.tab {
        ExpTab::Operations => render_ops(app, exp, report, frame, a.body),
        ExpTab::Collections => render_collections(app, exp, report, frame, a.body),
        ExpTab::Samples => render_samples(app, exp, report, frame, a.body),
        ExpTab::Claims => render_claims(app, report, frame, a.body),
    }
}

fn render_status(app: &App, frame: &mut Frame, area: Rect, has_report: bool) {
    let t = &app.theme;
    if let Some(run) = &app.run {
        let label = format!(
            "{} {:.0}% {}{}",
            s::t(s::EXP_RUNNING),
            fraction(&run.progress) * 100.0,
            step_label(&run.progress),
            if run.cancelling { " (cancelling)" } else { "" }
        );
        let gauge = Gauge::default()
            .gauge_style(t.accent)
            .ratio(fraction(&run.progress))
            .label(label);
        frame.render_widget(gauge, area);
    } else if let Some(ran) = app
        .current_lesson()
        .zip(app.current_experiment())
        .and_then(|(l, e)| app.stale(&l.id, e.id.get_ref()))
        .filter(|_| has_report)
    {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!(" {}", crate::tui::screens::presenter::stale_text(app, ran)),
                t.warn,
            )),
            area,
        );
    } else if let Some(notice) = &app.notice {
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {notice}"), t.bad)),
            area,
        );
    } else if !has_report {
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {}", s::t(s::EXP_NOT_RUN)), t.accent)),
            area,
        );
    }
}

/// How a figure is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A count or a ratio, as the course formats numbers.
    Count,
    /// Bytes, in binary units.
    Bytes,
    /// Milliseconds (the label says so).
    Millis,
}

/// One figure of a comparison, read off the course report: its label, a
/// value per variant (`None` for a failed or unmeasured variant) and, when
/// it is a cost, the winner marks by the report's own rule
/// ([`star_marks`], noise floor included), so the CLI, the comparison and
/// the presenter view star the same cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub label: &'static str,
    pub values: Vec<Option<f64>>,
    pub noise: Option<Noise>,
    /// Per variant: `Some(factor)` on the winner.
    pub marks: Vec<Option<f64>>,
    pub unit: Unit,
    /// Per variant: no value because the server did not report it (not
    /// because the variant failed).
    pub unreported: Vec<bool>,
    /// Per variant: the variant failed, so it has no figure.
    pub failed: Vec<bool>,
    /// The sizes are the embedded engine's model, not measured.
    pub modelled: bool,
    /// Per variant, for a time: the fastest and slowest run (`""` when
    /// there was one run).
    pub spreads: Vec<String>,
}

impl Figure {
    fn new(
        label: &'static str,
        values: Vec<Option<f64>>,
        noise: Option<Noise>,
        unit: Unit,
        failed: &[bool],
    ) -> Figure {
        let marks = match noise {
            Some(n) => star_marks(&values, n),
            None => vec![None; values.len()],
        };
        Figure {
            label,
            unreported: vec![false; values.len()],
            failed: failed.to_vec(),
            values,
            noise,
            marks,
            unit,
            modelled: false,
            spreads: Vec::new(),
        }
    }

    /// A time: each variant's median, its spread, and the star only where
    /// the spreads separate ([`time_marks`]).
    fn time(label: &'static str, timings: Vec<Option<Timing>>, failed: &[bool]) -> Figure {
        let values = timings
            .iter()
            .map(|t| t.as_ref().map(|t| t.median))
            .collect();
        let mut f = Figure::new(label, values, Some(Noise::Time), Unit::Millis, failed);
        f.marks = time_marks(&timings.iter().map(Option::as_ref).collect::<Vec<_>>());
        f.spreads = timings
            .iter()
            .map(|t| t.as_ref().map(spread_text).unwrap_or_default())
            .collect();
        f
    }

    /// Variant `side`'s value as text (`–` when there is none).
    pub fn text(&self, side: usize) -> String {
        match self.values.get(side).copied().flatten() {
            Some(v) => match self.spreads.get(side).filter(|s| !s.is_empty()) {
                Some(spread) => format!("{} ({spread})", format_value(v, self.unit)),
                None => format_value(v, self.unit),
            },
            None if self.failed.get(side) == Some(&true) => {
                format!("✗ {}", s::t(s::FAILED_SHORT))
            }
            None if self.unreported.get(side) == Some(&true) => s::t(s::NOT_REPORTED).into(),
            None => "–".into(),
        }
    }

    /// The winner mark of variant `side`: `★ ×12`, or empty.
    pub fn mark(&self, side: usize) -> String {
        self.marks
            .get(side)
            .copied()
            .flatten()
            .map(star_text)
            .unwrap_or_default()
    }
}

/// A value in its unit: counts as the course formats them (the same
/// digits `schemalab run` prints), bytes in binary units.
pub fn format_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Count | Unit::Millis => format_number(v),
        Unit::Bytes => crate::course::report::human_bytes(v),
    }
}

/// Per variant of `exp`: whether it failed (its figures take no part).
fn failed_variants(exp: &Experiment, report: &ExperimentReport) -> Vec<bool> {
    exp.variants
        .iter()
        .map(|v| variant_report(report, v.id.get_ref()).is_some_and(|r| r.failure.is_some()))
        .collect()
}

/// The figures of operation `op`, one per row of the comparison: for a
/// read, returned, keys and docs examined, the examined:returned ratio,
/// bytes returned and time; for a write, n, nModified, index keys
/// inserted and deleted, and time.
pub fn op_figures(exp: &Experiment, report: &ExperimentReport, op: usize) -> Vec<Figure> {
    let results = op_results(exp, report, op);
    let Some(op) = exp.operations.get(op) else {
        return Vec::new();
    };
    let failed = failed_variants(exp, report);
    // A failed variant's figures take no part (shown as failed).
    let metric = |f: &dyn Fn(&OpResult) -> Option<f64>| -> Vec<Option<f64>> {
        results
            .iter()
            .zip(&failed)
            .map(|(r, failed)| r.filter(|o| o.error.is_none() && !*failed).and_then(f))
            .collect()
    };
    // Counts the server may leave out: a missing one reads "not reported".
    let unreported = |fig: &mut Figure| {
        fig.unreported = results
            .iter()
            .zip(&fig.values)
            .zip(&failed)
            .map(|((r, v), failed)| v.is_none() && !*failed && r.is_some_and(|o| o.error.is_none()))
            .collect();
    };
    // Examined totals that leave a stage out are no figure at all.
    let complete = |o: &OpResult| o.read.clone().filter(|m| m.not_reported.is_empty());
    let fig = |label, values, noise, unit| Figure::new(label, values, noise, unit, &failed);
    let timings = || -> Vec<Option<Timing>> {
        results
            .iter()
            .zip(&failed)
            .map(|(r, failed)| {
                r.filter(|o| o.error.is_none() && !*failed)
                    .and_then(|o| o.timing.clone())
            })
            .collect()
    };
    // Bytes read into the (modelled) cache, cold: both kinds have them.
    let mut cache = fig(
        s::t(s::BYTES_READ_INTO_CACHE),
        metric(&|o| o.cache.as_ref().map(|c| c.bytes as f64)),
        Some(Noise::Count),
        Unit::Bytes,
    );
    cache.modelled = results
        .iter()
        .any(|r| r.is_some_and(|o| o.cache.as_ref().is_some_and(|c| c.modelled)));
    unreported(&mut cache);
    if op.kind == OpKind::Write {
        let mut inserted = fig(
            s::t(s::KEYS_INSERTED),
            metric(&|o| {
                o.write
                    .as_ref()
                    .and_then(|w| w.keys_inserted)
                    .map(|v| v as f64)
            }),
            Some(Noise::Count),
            Unit::Count,
        );
        unreported(&mut inserted);
        let mut deleted = fig(
            s::t(s::KEYS_DELETED),
            metric(&|o| {
                o.write
                    .as_ref()
                    .and_then(|w| w.keys_deleted)
                    .map(|v| v as f64)
            }),
            Some(Noise::Count),
            Unit::Count,
        );
        unreported(&mut deleted);
        vec![
            fig(
                s::t(s::WRITE_N),
                metric(&|o| o.write.as_ref().map(|w| w.n as f64)),
                None,
                Unit::Count,
            ),
            fig(
                s::t(s::WRITE_MODIFIED),
                metric(&|o| o.write.as_ref().map(|w| w.n_modified as f64)),
                None,
                Unit::Count,
            ),
            inserted,
            deleted,
            cache,
            Figure::time(s::t(s::TIME), timings(), &failed),
        ]
    } else {
        let mut keys = fig(
            s::t(s::KEYS_EXAMINED),
            metric(&|o| complete(o).map(|m| m.keys_examined as f64)),
            Some(Noise::Count),
            Unit::Count,
        );
        unreported(&mut keys);
        let mut docs = fig(
            s::t(s::DOCS_EXAMINED),
            metric(&|o| complete(o).map(|m| m.docs_examined as f64)),
            Some(Noise::Count),
            Unit::Count,
        );
        unreported(&mut docs);
        let mut bytes = fig(
            s::t(s::BYTES_EXAMINED),
            metric(&|o| complete(o).and_then(|m| m.bytes_examined).map(|v| v as f64)),
            Some(Noise::Count),
            Unit::Bytes,
        );
        unreported(&mut bytes);
        vec![
            fig(
                s::t(s::RETURNED),
                metric(&|o| o.read.as_ref().map(|m| m.n_returned as f64)),
                None,
                Unit::Count,
            ),
            keys,
            docs,
            bytes,
            fig(
                s::t(s::RATIO),
                metric(&|o| complete(o).map(|m| m.ratio)),
                None,
                Unit::Count,
            ),
            fig(
                s::t(s::BYTES_RETURNED),
                metric(&|o| {
                    o.read
                        .as_ref()
                        .and_then(|m| m.bytes_returned)
                        .map(|v| v as f64)
                }),
                Some(Noise::Count),
                Unit::Bytes,
            ),
            cache,
            Figure::time(s::t(s::TIME), timings(), &failed),
        ]
    }
}

/// The experiment's sizes per variant, totalled over its collections as
/// `schemalab run` totals them: data, storage and index size (the last
/// two modelled on the embedded engine, and marked so).
pub fn size_figures(exp: &Experiment, report: &ExperimentReport) -> Vec<Figure> {
    let failed = failed_variants(exp, report);
    let total = |f: &dyn Fn(&crate::course::CollStats) -> i64| -> Vec<Option<f64>> {
        exp.variants
            .iter()
            .zip(&failed)
            .map(|(v, failed)| {
                variant_report(report, v.id.get_ref())
                    .filter(|r| !r.collections.is_empty() && !*failed)
                    .map(|r| r.collections.iter().map(f).sum::<i64>() as f64)
            })
            .collect()
    };
    let modelled = report
        .variants
        .iter()
        .any(|v| v.collections.iter().any(|c| c.modelled));
    let mut storage = Figure::new(
        s::t(s::STORAGE_SIZE_TOTAL),
        total(&|c| c.storage_size),
        Some(Noise::Count),
        Unit::Bytes,
        &failed,
    );
    storage.modelled = modelled;
    let mut index = Figure::new(
        s::t(s::INDEX_SIZE_TOTAL),
        total(&|c| c.total_index_size),
        Some(Noise::Count),
        Unit::Bytes,
        &failed,
    );
    index.modelled = modelled;
    vec![
        Figure::new(
            s::t(s::DATA_SIZE_TOTAL),
            total(&|c| c.size),
            Some(Noise::Count),
            Unit::Bytes,
            &failed,
        ),
        storage,
        index,
    ]
}

/// The legend of the marks the comparison shows.
pub fn marks_legend(exp: &Experiment) -> String {
    let mut legend = crate::course::report::legend(s::lang()).to_string();
    if exp.variants.iter().any(|v| v.recommended) {
        legend.push(' ');
        legend.push_str(s::t(s::LEGEND_RECOMMENDED));
    }
    legend
}

pub fn op_results<'r>(
    exp: &Experiment,
    report: &'r ExperimentReport,
    op: usize,
) -> Vec<Option<&'r OpResult>> {
    let Some(op) = exp.operations.get(op) else {
        return Vec::new();
    };
    exp.variants
        .iter()
        .map(|v| {
            variant_report(report, v.id.get_ref())
                .and_then(|vr| vr.operations.iter().find(|o| o.id == *op.id.get_ref()))
        })
        .collect()
}

/// What the card says about a read's plan, read off the tree the explain
/// view draws from the same stored explain (so the two always agree); the
/// report's own chain and index list when no single explain was kept.
pub fn plan_line(op: &OpResult) -> Option<(String, Option<String>)> {
    let m = op.read.as_ref()?;
    match m.explain.as_ref() {
        Some(e) => {
            let nodes = explain_tree::build(e);
            let sum = explain_tree::summary(&nodes);
            let index = explain_tree::index_label(&sum).or_else(|| {
                Some(
                    if sum.collscan {
                        s::t(s::NO_INDEX)
                    } else {
                        s::t(s::NO_INDEX_USED)
                    }
                    .to_string(),
                )
            });
            Some((sum.chain, index))
        }
        None => Some((
            m.stages.replace("<-", " ← "),
            Some(if m.index.is_empty() {
                s::t(s::NO_INDEX).to_string()
            } else {
                m.index.clone()
            }),
        )),
    }
}

/// `FETCH ← IXSCAN {a: 1}`: the measured read's plan (see [`plan_line`]).
pub fn stage_chain(op: &OpResult) -> String {
    plan_line(op).map(|(c, _)| c).unwrap_or_default()
}

/// The kind as the content format writes it.
pub fn kind_name(kind: OpKind) -> &'static str {
    match kind {
        OpKind::Read => s::t("read"),
        OpKind::Write => s::t("write"),
    }
}

fn render_ops(
    app: &App,
    exp: &Experiment,
    report: &ExperimentReport,
    frame: &mut Frame,
    body: Rect,
) {
    let t = &app.theme;
    let (list_rect, rest) = ops_split(body);
    let total_weight: f64 = exp
        .operations
        .iter()
        .map(|o| o.weight)
        .sum::<f64>()
        .max(1.0);
    let items: Vec<ListItem> = exp
        .operations
        .iter()
        .map(|o| {
            ListItem::new(Line::from(vec![
                Span::styled(format!("{:>3.0}% ", o.weight * 100.0 / total_weight), t.dim),
                Span::styled(o.id.get_ref().clone(), t.base),
            ]))
        })
        .chain(std::iter::once(ListItem::new(Line::from(Span::styled(
            format!("     {}", s::t(s::SUMMARY_ITEM)),
            t.strong,
        )))))
        .collect();
    let list = List::new(items)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(t.border)
                .title(Span::styled(format!(" {} ", s::t(s::OPERATIONS)), t.title)),
        )
        .highlight_style(t.selected)
        .highlight_symbol("▸");
    let mut state = ListState::default().with_selected(Some(app.experiment.op));
    frame.render_stateful_widget(list, list_rect, &mut state);
    let Some(op) = exp.operations.get(app.experiment.op) else {
        render_summary(app, exp, report, frame, rest);
        return;
    };
    let results = op_results(exp, report, app.experiment.op);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Line::from(vec![
            Span::styled(format!(" {} ", op.title), t.strong),
            Span::styled(format!("({}) ", kind_name(op.kind)), t.dim),
        ]));
    let inner = block.inner(rest);
    frame.render_widget(block, rest);
    let table = figure_table(app, exp, report, app.experiment.op, inner.width);
    let mut legend = vec![
        Line::from(Span::styled(s::t(s::TIME_CAVEAT), t.dim)),
        Line::from(Span::styled(marks_legend(exp), t.dim)),
    ];
    let mut legend_h = wrapped_height(&legend, inner.width);
    // Short of room, the figures come first and the legend says only
    // what the marks mean.
    if table.height + legend_h + 2 > inner.height {
        legend = vec![Line::from(Span::styled(s::t(s::PRESENT_LEGEND), t.dim))];
        legend_h = wrapped_height(&legend, inner.width);
    }
    let [table_rect, stmt_rect, legend_rect] = Layout::vertical([
        Constraint::Length(table.height),
        Constraint::Min(0),
        Constraint::Length(legend_h),
    ])
    .areas(inner);
    frame.render_widget(table.widget, table_rect);
    // The statements, one under another at full width (code is not cut
    // into columns).
    let mut lines: Vec<Line> = Vec::new();
    for (side, variant) in exp.variants.iter().enumerate() {
        let Some(r) = results.get(side).copied().flatten() else {
            continue;
        };
        let stmt = op
            .run
            .get(variant.id.get_ref())
            .map(|s| s.get_ref().clone())
            .unwrap_or_else(|| r.statement.clone());
        lines.push(Line::from(Span::styled(
            format!("{}:", variant.id.get_ref()),
            variant_style(t, side),
        )));
        for mut l in app.code(&stmt, "js") {
            l.spans.insert(0, Span::raw("  "));
            lines.push(l);
        }
    }
    if stmt_rect.height > 0 {
        frame.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }),
            stmt_rect.inner(ratatui::layout::Margin {
                horizontal: 0,
                vertical: u16::from(stmt_rect.height > 2),
            }),
        );
    }
    frame.render_widget(
        Paragraph::new(legend).wrap(Wrap { trim: false }),
        legend_rect,
    );
}

/// The summary pane: the experiment's size totals and weighted
/// "per 100 requests" rows, and the verdict line, exactly as
/// `schemalab run` prints them ([`report::summary_in`]): a label column,
/// then one column per variant, cells wrapped within their column.
fn render_summary(
    app: &App,
    exp: &Experiment,
    report: &ExperimentReport,
    frame: &mut Frame,
    area: Rect,
) {
    let t = &app.theme;
    let summary = report::summary_in(report, app.current_modelled(), s::lang());
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(
            format!(" {} ", s::t(s::SUMMARY_TITLE)),
            t.strong,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let n = exp.variants.len().max(1) as u16;
    let label_w = summary
        .rows
        .iter()
        .map(|r| crate::locale::width(&r.label) as u16)
        .max()
        .unwrap_or(8)
        .min(inner.width / 2)
        .max(6);
    let col_w = (inner.width.saturating_sub(label_w + n) / n).max(1);
    let wrap = |text: &str, w: u16| -> Vec<String> {
        textwrap::wrap(text, usize::from(w))
            .into_iter()
            .map(|l| l.into_owned())
            .collect()
    };
    let header = Row::new(
        std::iter::once(Cell::from(""))
            .chain(exp.variants.iter().enumerate().map(|(side, v)| {
                Cell::from(
                    Text::from(cut(&variant_heading(v), usize::from(col_w)))
                        .style(variant_style(t, side))
                        .right_aligned(),
                )
            }))
            .collect::<Vec<_>>(),
    );
    let mut height = 1;
    let rows: Vec<Row> = summary
        .rows
        .iter()
        .map(|r| {
            let label = wrap(r.label.trim(), label_w);
            let cells: Vec<Vec<String>> = r.cells.iter().map(|c| wrap(c, col_w)).collect();
            let h = cells
                .iter()
                .map(Vec::len)
                .chain([label.len()])
                .max()
                .unwrap_or(1) as u16;
            height += h;
            Row::new(
                std::iter::once(Cell::from(Text::from(label.join("\n")).style(t.dim)))
                    .chain(cells.iter().map(|c| {
                        let style = if c.iter().any(|l| l.contains('★')) {
                            t.strong
                        } else {
                            t.base
                        };
                        Cell::from(Text::from(c.join("\n")).style(style).right_aligned())
                    }))
                    .collect::<Vec<_>>(),
            )
            .height(h)
        })
        .collect();
    let widths: Vec<Constraint> = std::iter::once(Constraint::Length(label_w))
        .chain((0..n).map(|_| Constraint::Length(col_w)))
        .collect();
    let table = Table::new(rows, widths).header(header).column_spacing(1);
    let mut notes = Vec::new();
    if let Some(verdict) = &summary.trade_off {
        notes.push(Line::from(Span::styled(verdict.clone(), t.base)));
    }
    if exp.variants.iter().any(|v| v.recommended) {
        notes.push(Line::from(Span::styled(s::t(s::RECOMMENDED_LEGEND), t.dim)));
    }
    notes.push(Line::from(Span::styled(marks_legend(exp), t.dim)));
    let [table_rect, _, notes_rect] = Layout::vertical([
        Constraint::Length(height.min(inner.height)),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(table, table_rect);
    frame.render_widget(Paragraph::new(notes).wrap(Wrap { trim: false }), notes_rect);
}

/// Rows `lines` take at `width` columns, wrapped at words.
fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let w = usize::from(width.max(1));
    lines
        .iter()
        .map(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            textwrap::wrap(&text, w).len().max(1) as u16
        })
        .sum()
}

/// `s` cut to at most `cols` columns, never inside a double-width
/// character (not padded).
pub fn cut(s: &str, cols: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > cols {
            break;
        }
        used += w;
        out.push(c);
    }
    out
}

/// A variant's colour: the first and the others.
pub fn variant_style(t: &Theme, side: usize) -> Style {
    if side == 0 { t.bar_a } else { t.bar_b }.patch(t.strong)
}

/// A variant's name as column headings show it (`◆` on the recommended).
pub fn variant_heading(v: &crate::course::Variant) -> String {
    format!(
        "{}{}",
        if v.recommended { "◆ " } else { "" },
        v.id.get_ref()
    )
}

/// The comparison table and the rows it takes.
pub struct FigureTable<'a> {
    pub widget: Table<'a>,
    pub height: u16,
}

/// One row per figure, one column per variant, so a figure reads across:
/// the plan (stages, index) as words wrapped inside their column, each
/// value right-aligned and never split (its winner mark goes to a second
/// line of the row when both do not fit).
pub fn figure_table<'a>(
    app: &App,
    exp: &Experiment,
    report: &ExperimentReport,
    op_index: usize,
    width: u16,
) -> FigureTable<'a> {
    let t = &app.theme;
    let figures = op_figures(exp, report, op_index);
    let results = op_results(exp, report, op_index);
    let is_write = exp
        .operations
        .get(op_index)
        .is_some_and(|o| o.kind == OpKind::Write);
    let n = exp.variants.len().max(1);
    let mut labels: Vec<&str> = figures.iter().map(|f| f.label).collect();
    labels.extend([s::t(s::STAGES), s::t(s::INDEX), s::t(s::WRITE_ERROR)]);
    let label_w = labels
        .iter()
        .map(|l| crate::locale::width(l))
        .max()
        .unwrap_or(8)
        .min(usize::from(width / 4).max(6)) as u16;
    // Columns share what the labels leave, one space between columns.
    let col_w = width.saturating_sub(label_w + n as u16) / n as u16;
    let col = usize::from(col_w.max(1));
    let wrap = |text: &str| -> Vec<String> {
        textwrap::wrap(text, textwrap::Options::new(col).break_words(true))
            .into_iter()
            .map(|c| c.into_owned())
            .collect()
    };
    // Each row with the lines it takes.
    let mut rows: Vec<(Row, u16)> = Vec::new();
    let label_cell = |l: &str| {
        Cell::from(Span::styled(
            crate::locale::fit(l, usize::from(label_w)),
            t.dim,
        ))
    };
    let text_row = |label: &str, texts: Vec<Option<(String, Style)>>| -> (Row<'a>, u16) {
        let mut h = 1;
        let mut cells = vec![label_cell(label)];
        for cell in texts {
            let (text, style) = cell.unwrap_or_else(|| ("–".into(), t.dim));
            let lines: Vec<Line> = wrap(&text)
                .into_iter()
                .map(|l| Line::from(Span::styled(l, style)))
                .collect();
            h = h.max(lines.len());
            cells.push(Cell::from(Text::from(lines)));
        }
        let h = h as u16;
        (Row::new(cells).height(h), h)
    };
    if !is_write {
        let plans: Vec<Option<(String, Option<String>)>> =
            results.iter().map(|r| r.and_then(plan_line)).collect();
        rows.push(text_row(
            s::t(s::STAGES),
            plans
                .iter()
                .map(|p| p.as_ref().map(|(c, _)| (c.clone(), t.accent)))
                .collect(),
        ));
        rows.push(text_row(
            s::t(s::INDEX),
            plans
                .iter()
                .map(|p| {
                    p.as_ref().and_then(|(_, i)| i.clone()).map(|i| {
                        let warn = i == s::t(s::NO_INDEX);
                        (i, if warn { t.warn } else { t.base })
                    })
                })
                .collect(),
        ));
    }
    // Errors and failures, in the variant's column.
    let errors: Vec<Option<(String, Style)>> = exp
        .variants
        .iter()
        .enumerate()
        .map(|(side, v)| {
            let mut all: Vec<String> = variant_report(report, v.id.get_ref())
                .map(variant_errors)
                .unwrap_or_default();
            if let Some(err) = results
                .get(side)
                .copied()
                .flatten()
                .and_then(|r| r.error.as_ref())
            {
                all.push(if err.code_name.is_empty() {
                    err.message.render_in(s::lang())
                } else {
                    err.code_name.clone()
                });
            }
            if results.get(side).copied().flatten().is_none() && all.is_empty() {
                all.push(s::t(s::NOT_MEASURED).to_string());
            }
            (!all.is_empty()).then(|| (format!("✗ {}", all.join("; ")), t.bad))
        })
        .collect();
    if errors.iter().any(Option::is_some) {
        rows.push(text_row(
            s::t(s::WRITE_ERROR),
            errors
                .into_iter()
                .map(|e| e.or_else(|| Some((String::new(), t.base))))
                .collect(),
        ));
    }
    for f in &figures {
        let mut h = 1;
        let mut cells = vec![label_cell(f.label)];
        for side in 0..exp.variants.len() {
            let value = f.text(side);
            let mark = f.mark(side);
            let style = if f.values.get(side).copied().flatten().is_some() {
                t.strong
            } else {
                t.dim
            };
            let together = crate::locale::width(&value) + 1 + crate::locale::width(&mark);
            let lines = if mark.is_empty() {
                vec![Line::from(Span::styled(value, style))]
            } else if together <= col {
                vec![Line::from(vec![
                    Span::styled(value, style),
                    Span::styled(format!(" {mark}"), t.good),
                ])]
            } else {
                h = 2;
                vec![
                    Line::from(Span::styled(value, style)),
                    Line::from(Span::styled(mark, t.good)),
                ]
            };
            let lines: Vec<Line> = lines.into_iter().map(|l| l.right_aligned()).collect();
            cells.push(Cell::from(Text::from(lines)));
        }
        rows.push((Row::new(cells).height(h), h));
    }
    let header = Row::new(
        std::iter::once(Cell::from(""))
            .chain(exp.variants.iter().enumerate().map(|(side, v)| {
                Cell::from(
                    Line::from(Span::styled(
                        cut(&variant_heading(v), col),
                        variant_style(t, side),
                    ))
                    .right_aligned(),
                )
            }))
            .collect::<Vec<_>>(),
    );
    let widths: Vec<Constraint> = std::iter::once(Constraint::Length(label_w))
        .chain(std::iter::repeat_n(
            Constraint::Length(col_w),
            exp.variants.len(),
        ))
        .collect();
    let height = 1 + rows.iter().map(|(_, h)| *h).sum::<u16>();
    FigureTable {
        widget: Table::new(rows.into_iter().map(|(r, _)| r), widths)
            .header(header)
            .column_spacing(1),
        height,
    }
}
fn bar(t: &Theme, value: u64, max: u64, width: usize, side: usize) -> Span<'static> {
    const EIGHTHS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    let units = if max == 0 {
        0
    } else {
        (value as f64 / max as f64 * (width * 8) as f64).round() as usize
    };
    let mut s = "█".repeat(units / 8);
    s.push_str(EIGHTHS[units % 8]);
    if value > 0 && s.is_empty() {
        s.push('▏');
    }
    let pad = width.saturating_sub(s.chars().count());
    s.push_str(&" ".repeat(pad));
    Span::styled(s, if side == 0 { t.bar_a } else { t.bar_b })
}

fn columns(exp: &Experiment, body: Rect) -> std::rc::Rc<[Rect]> {
    Layout::horizontal(vec![
        Constraint::Ratio(1, exp.variants.len().max(1) as u32);
        exp.variants.len()
    ])
    .split(body)
}

fn render_collections(
    app: &App,
    exp: &Experiment,
    report: &ExperimentReport,
    frame: &mut Frame,
    body: Rect,
) {
    let t = &app.theme;
    let max = report
        .variants
        .iter()
        .flat_map(|v| v.collections.iter())
        .flat_map(|c| {
            [c.size, c.storage_size]
                .into_iter()
                .chain(c.indexes.iter().map(|i| i.size))
        })
        .max()
        .map_or(0, |m| u64::try_from(m).unwrap_or(0));
    for (side, (variant, col)) in exp
        .variants
        .iter()
        .zip(columns(exp, body).iter())
        .enumerate()
    {
        let colls = variant_report(report, variant.id.get_ref())
            .map(|v| v.collections.as_slice())
            .unwrap_or(&[]);
        let label_w = colls
            .iter()
            .flat_map(|c| c.indexes.iter().map(|i| i.name.chars().count()))
            .chain([s::t(s::STORAGE_SIZE).len(), s::t(s::DATA_SIZE).len()])
            .max()
            .unwrap_or(8)
            .min(usize::from(col.width / 3));
        // Room for " modelled" whenever any size on this side is modelled.
        let any_modelled = colls.iter().any(|c| c.modelled);
        let tag_w = if any_modelled {
            s::t(s::MODELLED).chars().count() + 1
        } else {
            0
        };
        let bar_w = usize::from(col.width.saturating_sub(2))
            .saturating_sub(label_w + 1 + 11 + tag_w)
            .max(4);
        let mut lines = Vec::new();
        for c in colls {
            lines.push(Line::from(vec![
                Span::styled(c.name.clone(), t.strong),
                Span::styled(
                    format!("  {} {}", format_number(c.count as f64), s::t(s::DOCUMENTS)),
                    t.base,
                ),
            ]));
            lines.push(Line::from(Span::styled(
                format!(
                    "{} {} · {} {}",
                    s::t(s::AVG_SIZE),
                    bytes(c.avg_obj_size.round() as i64),
                    s::t(s::MAX_SIZE),
                    bytes(c.max_obj_size)
                ),
                t.dim,
            )));
            let mut row = |label: String, value: i64, modelled: bool| {
                let mut spans = vec![
                    Span::styled(format!("{} ", crate::locale::fit(&label, label_w)), t.dim),
                    bar(t, u64::try_from(value).unwrap_or(0), max, bar_w, side),
                    Span::styled(format!(" {:>10}", bytes(value)), t.base),
                ];
                if modelled {
                    spans.push(Span::styled(format!(" {}", s::t(s::MODELLED)), t.warn));
                }
                lines.push(Line::from(spans));
            };
            row(s::t(s::DATA_SIZE).to_string(), c.size, false);
            row(
                s::t(s::STORAGE_SIZE).to_string(),
                c.storage_size,
                c.modelled,
            );
            for i in &c.indexes {
                row(i.name.clone(), i.size, c.modelled);
            }
            lines.push(Line::default());
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border)
            .title(Span::styled(
                format!(" {} ", variant.id.get_ref()),
                t.strong,
            ));
        frame.render_widget(
            Paragraph::new(lines)
                .scroll((app.experiment.scroll.min(u16::MAX as usize) as u16, 0))
                .block(block),
            *col,
        );
    }
}

/// A document as mongosh prints it (`db.c.find()` in the shell:
/// `ObjectId('…')`, `ISODate('…')`, bare keys, single quotes).
pub fn shell_doc(doc: &bson::Document) -> String {
    crate::dialect::print::inspect_doc(doc)
}

fn render_samples(
    app: &App,
    exp: &Experiment,
    report: &ExperimentReport,
    frame: &mut Frame,
    body: Rect,
) {
    let t = &app.theme;
    const FOLD_LINES: usize = 8;
    for (variant, col) in exp.variants.iter().zip(columns(exp, body).iter()) {
        let mut lines = Vec::new();
        let samples = variant_report(report, variant.id.get_ref())
            .map(|v| v.samples.as_slice())
            .unwrap_or(&[]);
        if samples.is_empty() {
            lines.push(Line::from(Span::styled(s::t(s::NO_SAMPLES), t.dim)));
        }
        for sample in samples {
            lines.push(Line::from(Span::styled(
                format!("{}:", sample.collection),
                t.strong,
            )));
            for doc in &sample.documents {
                let text = shell_doc(doc);
                let all = app.code(&text, "js");
                let total = all.len();
                if app.experiment.folded && total > FOLD_LINES {
                    lines.extend(all.into_iter().take(FOLD_LINES));
                    lines.push(Line::from(Span::styled(
                        format!("  … {} lines, {}", total - FOLD_LINES, s::t(s::FOLDED)),
                        t.dim,
                    )));
                } else {
                    lines.extend(all);
                }
            }
            lines.push(Line::default());
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border)
            .title(Span::styled(
                format!(" {} ", variant.id.get_ref()),
                t.strong,
            ));
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((app.experiment.scroll.min(u16::MAX as usize) as u16, 0))
                .block(block),
            *col,
        );
    }
}

fn render_claims(app: &App, report: &ExperimentReport, frame: &mut Frame, body: Rect) {
    let t = &app.theme;
    let mut lines = Vec::new();
    if report.claims.is_empty() {
        lines.push(Line::from(Span::styled(s::t(s::NO_CLAIMS), t.dim)));
    }
    for c in &report.claims {
        let (mark, style) = if c.verdict.passed {
            (s::t(s::CLAIM_PASS), t.good)
        } else {
            (s::t(s::CLAIM_FAIL), t.bad)
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{mark}  "), style),
            Span::styled(c.text.clone(), t.base),
        ]));
        let reason = c.verdict.reason.render_in(s::lang());
        if !reason.is_empty() {
            lines.push(Line::from(Span::styled(format!("        {reason}"), t.dim)));
        }
        lines.push(Line::default());
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((app.experiment.scroll.min(u16::MAX as usize) as u16, 0))
            .block(block),
        body,
    );
}
