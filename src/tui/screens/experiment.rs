//! The experiment view: variants side by side. Tabs: the workload
//! (statement, stage chain, counters with the winning side and factor), the
//! collections (bar charts of data, storage and index sizes, document
//! stats), sample documents and the lesson's claims.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, List, ListItem, ListState, Paragraph, Wrap};

use crate::course::claims::format_number;
use crate::course::report::{Noise, star_marks, star_text};
use crate::course::{Experiment, ExperimentReport, OpKind, OpResult, Progress, VariantReport};
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
    (idx < app.current_experiment().map_or(0, |e| e.operations.len())).then_some(idx)
}

/// How far a run has got, 0.0 ..= 1.0, from the runner's step counts.
pub fn fraction(p: &Progress) -> f64 {
    if p.total == 0 {
        0.0
    } else {
        (p.done as f64 / p.total as f64).clamp(0.0, 1.0)
    }
}

/// The runner's step as one label: `naive · load`.
pub fn step_label(p: &Progress) -> String {
    if p.variant.is_empty() {
        p.step.clone()
    } else {
        format!("{} · {}", p.variant, p.step)
    }
}

/// The report of variant `id`, if it ran.
pub fn variant_report<'r>(report: &'r ExperimentReport, id: &str) -> Option<&'r VariantReport> {
    report.variants.iter().find(|v| v.id == id)
}

/// What went wrong in a variant, one line each: its load, setup or
/// measurement error, else why it failed.
pub fn variant_errors(v: &VariantReport) -> Vec<String> {
    let steps: Vec<String> = [&v.load_error, &v.setup_error, &v.measure_error]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if !steps.is_empty() {
        return steps;
    }
    v.failure.iter().map(|f| format!("FAILED: {f}")).collect()
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
    let header = vec![
        Line::from(vec![
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
        ]),
        Line::from(tabs),
    ];
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

/// Per side: `Some(factor)` on the lowest cost, by the course report's
/// own rule (noise floor included), so CLI and TUI star the same cells.
fn winners(values: &[Option<f64>], noise: Noise) -> Vec<Option<f64>> {
    star_marks(values, noise)
}

fn mark_span(t: &Theme, w: Option<f64>) -> Span<'static> {
    match w {
        Some(f) => Span::styled(format!(" {}", star_text(f)), t.good),
        None => Span::raw(""),
    }
}

/// One figure of the operation card: label, a value per variant, and the
/// noise floor when the figure is a cost (starred), `None` otherwise.
type CardRow<'a> = (&'a str, Vec<Option<f64>>, Option<Noise>);

fn op_results<'r>(
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
fn kind_name(kind: OpKind) -> &'static str {
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

    let results = op_results(exp, report, app.experiment.op);
    let Some(op) = exp.operations.get(app.experiment.op) else {
        return;
    };
    let [title_rect, cols_rect] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(rest);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {} ", op.title), t.strong),
            Span::styled(format!("({})", kind_name(op.kind)), t.dim),
        ])),
        title_rect,
    );
    let cols = Layout::horizontal(vec![
        Constraint::Ratio(1, exp.variants.len().max(1) as u32);
        exp.variants.len()
    ])
    .split(cols_rect);
    let is_write = op.kind == OpKind::Write;
    let failed: Vec<bool> = exp
        .variants
        .iter()
        .map(|v| variant_report(report, v.id.get_ref()).is_some_and(|r| r.failure.is_some()))
        .collect();
    // A failed variant's figures take no part (shown as "–").
    let metric = |f: &dyn Fn(&OpResult) -> Option<f64>| -> Vec<Option<f64>> {
        results
            .iter()
            .zip(&failed)
            .map(|(r, failed)| r.filter(|o| o.error.is_none() && !*failed).and_then(f))
            .collect()
    };
    // Examined totals that leave a stage out are no figure at all.
    let complete = |o: &OpResult| o.read.clone().filter(|m| m.not_reported.is_empty());
    let rows: Vec<CardRow> = if is_write {
        vec![
            (
                s::t(s::WRITE_N),
                metric(&|o| o.write.as_ref().map(|w| w.n as f64)),
                None,
            ),
            (
                s::t(s::WRITE_MODIFIED),
                metric(&|o| o.write.as_ref().map(|w| w.n_modified as f64)),
                None,
            ),
            (
                s::t(s::KEYS_INSERTED),
                metric(&|o| {
                    o.write
                        .as_ref()
                        .and_then(|w| w.keys_inserted)
                        .map(|v| v as f64)
                }),
                Some(Noise::Count),
            ),
            (
                s::t(s::KEYS_DELETED),
                metric(&|o| {
                    o.write
                        .as_ref()
                        .and_then(|w| w.keys_deleted)
                        .map(|v| v as f64)
                }),
                Some(Noise::Count),
            ),
            (s::t(s::TIME), metric(&|o| o.millis), Some(Noise::Time)),
        ]
    } else {
        vec![
            (
                s::t(s::RETURNED),
                metric(&|o| o.read.as_ref().map(|m| m.n_returned as f64)),
                None,
            ),
            (
                s::t(s::KEYS_EXAMINED),
                metric(&|o| complete(o).map(|m| m.keys_examined as f64)),
                Some(Noise::Count),
            ),
            (
                s::t(s::DOCS_EXAMINED),
                metric(&|o| complete(o).map(|m| m.docs_examined as f64)),
                Some(Noise::Count),
            ),
            (
                s::t(s::RATIO),
                metric(&|o| complete(o).map(|m| m.ratio)),
                None,
            ),
            (
                s::t(s::BYTES_RETURNED),
                metric(&|o| {
                    o.read
                        .as_ref()
                        .and_then(|m| m.bytes_returned)
                        .map(|v| v as f64)
                }),
                Some(Noise::Count),
            ),
            (s::t(s::TIME), metric(&|o| o.millis), Some(Noise::Time)),
        ]
    };
    let marks: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|(_, vals, noise)| match noise {
            Some(n) => winners(vals, *n),
            None => vec![None; vals.len()],
        })
        .collect();
    for (side, (variant, col)) in exp.variants.iter().zip(cols.iter()).enumerate() {
        let mut lines: Vec<Line> = Vec::new();
        for err in variant_report(report, variant.id.get_ref())
            .map(variant_errors)
            .unwrap_or_default()
        {
            lines.push(Line::from(Span::styled(format!("✗ {err}"), t.bad)));
        }
        match results.get(side).copied().flatten() {
            None => lines.push(Line::from(Span::styled(s::t(s::NOT_MEASURED), t.dim))),
            Some(r) => {
                let stmt = op
                    .run
                    .get(variant.id.get_ref())
                    .map(|s| s.get_ref().clone())
                    .unwrap_or_else(|| r.statement.clone());
                lines.extend(app.code(&stmt, "js"));
                lines.push(Line::default());
                if !is_write {
                    let (chain, index) = plan_line(r).unwrap_or_default();
                    lines.push(Line::from(vec![
                        Span::styled(crate::locale::pad(s::t(s::STAGES), 8, true), t.dim),
                        Span::styled(chain, t.accent),
                    ]));
                    let index = index.unwrap_or_default();
                    let warn = index == s::t(s::NO_INDEX);
                    lines.push(Line::from(vec![
                        Span::styled(crate::locale::pad(s::t(s::INDEX), 8, true), t.dim),
                        Span::styled(index, if warn { t.warn } else { t.base }),
                    ]));
                }
                if let Some(err) = &r.error {
                    let text = if err.code_name.is_empty() {
                        err.message.clone()
                    } else {
                        err.code_name.clone()
                    };
                    lines.push(Line::from(vec![
                        Span::styled(crate::locale::pad(s::t(s::WRITE_ERROR), 8, true), t.dim),
                        Span::styled(text, t.bad),
                    ]));
                }
                for ((label, vals, _), m) in rows.iter().zip(&marks) {
                    let value = match vals.get(side).copied().flatten() {
                        Some(v) => format_number(v),
                        None if (*label == s::t(s::KEYS_INSERTED)
                            || *label == s::t(s::KEYS_DELETED)
                            || *label == s::t(s::KEYS_EXAMINED)
                            || *label == s::t(s::DOCS_EXAMINED))
                            && r.error.is_none() =>
                        {
                            s::t(s::NOT_REPORTED).into()
                        }
                        None => "–".into(),
                    };
                    lines.push(Line::from(vec![
                        Span::styled(crate::locale::pad(label, 15, true), t.dim),
                        Span::styled(format!("{value:>8}"), t.strong),
                        mark_span(t, m.get(side).copied().flatten()),
                    ]));
                }
                lines.push(Line::default());
                lines.push(Line::from(Span::styled(s::t(s::TIME_CAVEAT), t.dim)));
                lines.push(Line::from(Span::styled(
                    crate::course::report::legend(s::lang()),
                    t.dim,
                )));
            }
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border)
            .title(
                Span::styled(
                    format!(
                        " {}{} ",
                        if variant.recommended { "◆ " } else { "" },
                        variant.id.get_ref()
                    ),
                    if side == 0 { t.bar_a } else { t.bar_b },
                )
                .patch_style(t.strong),
            );
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block),
            *col,
        );
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
        if !c.verdict.reason.is_empty() {
            let reason = &c.verdict.reason;
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
