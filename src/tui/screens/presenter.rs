//! The presenter view of an experiment (`--present`): the comparison an
//! instructor projects, one slide at a time. A slide is one operation
//! (its cost figures as very large right-aligned numbers, one column per
//! variant, the winner of each row starred by the course report's rule),
//! the experiment's sizes (modelled ones say so), or one claim with its
//! verdict. Every figure is read off the course report through the same
//! [`experiment::op_figures`] the normal comparison uses; nothing is
//! recomputed. Nothing here is dimmed: every text is at least body size
//! and body contrast. When the numbers do not fit (80×24, a long value)
//! they fall back to body-size bold text, never to cut glyphs.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use tui_big_text::{BigText, PixelSize};

use crate::course::{Experiment, ExperimentReport};
use crate::tui::app::App;
use crate::tui::screens::experiment::{self, Figure};
use crate::tui::strings as s;

/// What one presenter slide shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slide {
    /// Operation `i` of the experiment.
    Op(usize),
    /// Data, storage and index sizes.
    Sizes,
    /// Claim `i` of the experiment's report.
    Claim(usize),
}

/// Rows a big number takes (the 8×8 font at two pixels per cell).
pub const BIG_ROWS: u16 = 4;
/// Columns a big character takes.
pub const BIG_COLS: usize = 4;

/// The slides of the experiment on screen, in order: its operations, then
/// (once it ran) its sizes and its claims.
pub fn slides(app: &App) -> Vec<Slide> {
    let Some(exp) = app.current_experiment() else {
        return Vec::new();
    };
    let mut out: Vec<Slide> = (0..exp.operations.len()).map(Slide::Op).collect();
    if let Some(report) = app.current_report() {
        if report.variants.iter().any(|v| !v.collections.is_empty()) {
            out.push(Slide::Sizes);
        }
        out.extend((0..report.claims.len()).map(Slide::Claim));
    }
    out
}

/// The slide on screen (the first when the index is out of range).
pub fn current(app: &App) -> Option<Slide> {
    let all = slides(app);
    all.get(app.experiment.slide)
        .or_else(|| all.first())
        .copied()
}

/// The slide after a jump between the operations and the claims: from an
/// operation to the first claim (or the sizes), from there back to the
/// operation last shown.
pub fn jump(app: &App) -> usize {
    let all = slides(app);
    match current(app) {
        Some(Slide::Op(_)) => all
            .iter()
            .position(|s| matches!(s, Slide::Claim(_)))
            .or_else(|| all.iter().position(|s| *s == Slide::Sizes))
            .unwrap_or(app.experiment.slide),
        _ => all
            .iter()
            .position(|s| *s == Slide::Op(app.experiment.op))
            .unwrap_or(0),
    }
}

/// Whether a number written `text` fits `width` columns in big glyphs.
pub fn fits_big(text: &str, width: u16) -> bool {
    text.is_ascii() && text.chars().count() * BIG_COLS < usize::from(width)
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let (Some(lesson), Some(exp)) = (app.current_lesson(), app.current_experiment()) else {
        frame.render_widget(Paragraph::new(s::t(s::NO_EXPERIMENT)).style(t.base), area);
        return;
    };
    let report = app.current_report();
    let all = slides(app);
    let slide = current(app);
    // Heading: what the slide is, the experiment, where we are.
    let what = match slide {
        Some(Slide::Op(i)) => {
            let op = &exp.operations[i];
            format!(
                "{} · {} ({})",
                s::lang().f(
                    s::PRESENT_OPERATION,
                    &[("n", &(i + 1)), ("total", &exp.operations.len())]
                ),
                op.title,
                experiment::kind_name(op.kind)
            )
        }
        Some(Slide::Sizes) => s::t(s::PRESENT_SIZES).to_string(),
        Some(Slide::Claim(i)) => s::lang().f(
            s::PRESENT_CLAIM,
            &[
                ("n", &(i + 1)),
                ("total", &report.map_or(0, |r| r.claims.len())),
            ],
        ),
        None => String::new(),
    };
    let n_exp = lesson.experiments().len();
    let mut right = String::new();
    if n_exp > 1 {
        right = s::lang().f(
            s::EXPERIMENT_N,
            &[("n", &(app.experiment.experiment + 1)), ("total", &n_exp)],
        );
    }
    if !all.is_empty() {
        let pos = all.iter().position(|x| Some(*x) == slide).unwrap_or(0);
        right = format!(
            "{}{}{}/{} ",
            right,
            if right.is_empty() { "" } else { " · " },
            pos + 1,
            all.len()
        );
    }
    let head_line = spread(
        vec![Span::styled(format!(" {what}"), t.title)],
        vec![Span::styled(right, t.base)],
        area.width,
    );
    // Footer of the slide: the engine and the scale the figures come from,
    // the stale mark, the legend of the marks.
    let mut info: Vec<Line> = Vec::new();
    if let Some(r) = app.reports.get(&lesson.id).filter(|_| report.is_some()) {
        info.push(Line::from(Span::styled(
            format!(
                " {}",
                s::lang().f(
                    s::PRESENT_ENGINE,
                    &[
                        ("engine", &r.engine.name_in(s::lang())),
                        (
                            "scale",
                            &s::scale_label(
                                app.ran_at(&lesson.id, exp.id.get_ref()).unwrap_or(r.scale)
                            )
                        ),
                    ]
                )
            ),
            t.base,
        )));
    }
    if let Some(ran) = app.stale(&lesson.id, exp.id.get_ref()) {
        info.push(Line::from(Span::styled(
            format!(" {}", stale_text(app, ran)),
            t.warn,
        )));
    }
    if report.is_some() && matches!(slide, Some(Slide::Op(_) | Slide::Sizes)) {
        info.push(Line::from(Span::styled(
            format!(" {}", s::t(s::PRESENT_LEGEND)),
            t.base,
        )));
    }
    let info_h = info
        .iter()
        .map(|l| {
            let w = l.width();
            w.div_ceil(usize::from(area.width.max(1))).max(1) as u16
        })
        .sum::<u16>();
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(info_h),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(head_line).style(t.base), head);
    frame.render_widget(
        Paragraph::new(info)
            .style(t.base)
            .wrap(Wrap { trim: false }),
        foot,
    );
    if let Some(run) = &app.run {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!(
                    " {} {:.0}% {}",
                    s::t(s::EXP_RUNNING),
                    experiment::fraction(&run.progress) * 100.0,
                    experiment::step_label(&run.progress)
                ),
                t.accent,
            )),
            Rect::new(body.x, body.y, body.width, 1.min(body.height)),
        );
        return;
    }
    let Some(report) = report else {
        let line = app
            .notice
            .clone()
            .unwrap_or_else(|| s::t(s::EXP_NOT_RUN).to_string());
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {line}"), t.accent)).wrap(Wrap { trim: false }),
            body,
        );
        return;
    };
    match slide {
        Some(Slide::Op(i)) => {
            // The costs, as big numbers: four fit a projector's 30 rows,
            // so bytes returned (the client's side) and bytes read into the
            // modelled cache (both in the comparison table) give way to
            // bytes examined (the server's).
            let figures: Vec<Figure> = experiment::op_figures(exp, report, i)
                .into_iter()
                .filter(|f| {
                    f.noise.is_some()
                        && f.label != s::t(s::BYTES_RETURNED)
                        && f.label != s::t(s::BYTES_READ_INTO_CACHE)
                })
                .collect();
            render_figures(app, exp, &figures, frame, body);
        }
        Some(Slide::Sizes) => render_figures(
            app,
            exp,
            &experiment::size_figures(exp, report),
            frame,
            body,
        ),
        Some(Slide::Claim(i)) => render_claim(app, report, i, frame, body),
        None => {}
    }
}

/// The stale notice: the scale the figures were measured at and the one
/// now chosen.
pub fn stale_text(app: &App, ran: crate::course::Scale) -> String {
    s::lang().f(
        s::STALE,
        &[("ran", &ran.as_str()), ("now", &app.scale.as_str())],
    )
}

/// `left` and `right` on one line, `right` at the right edge (cut from
/// the left's end when both do not fit).
fn spread(left: Vec<Span<'static>>, right: Vec<Span<'static>>, width: u16) -> Line<'static> {
    let width = usize::from(width);
    let right_w: usize = right.iter().map(Span::width).sum();
    let room = width.saturating_sub(right_w + 1);
    let mut spans = Vec::new();
    let mut used = 0;
    for sp in left {
        let text = experiment::cut(&sp.content, room.saturating_sub(used));
        used += crate::locale::width(&text);
        spans.push(Span::styled(text, sp.style));
    }
    spans.push(Span::raw(" ".repeat(width.saturating_sub(used + right_w))));
    spans.extend(right);
    Line::from(spans)
}

/// The figures of a slide: a heading row of variant names, then per
/// figure its label (with the row's unit and "modelled" where sizes are
/// modelled) over the values, big when every value of the row fits its
/// column with its winner mark beside it, else bold body text.
fn render_figures(app: &App, exp: &Experiment, figures: &[Figure], frame: &mut Frame, body: Rect) {
    let t = &app.theme;
    let n = exp.variants.len().max(1);
    // One column of margin on each side.
    let inner = Rect::new(
        body.x + 1,
        body.y,
        body.width.saturating_sub(2),
        body.height,
    );
    let cols = Layout::horizontal(vec![Constraint::Ratio(1, n as u32); n]).split(inner);
    // Big numbers only when every figure fits at that size.
    let tall = figures.len() as u16 * (BIG_ROWS + 1) < inner.height;
    let mut y = inner.y;
    // Variant names over their columns.
    for (side, (v, col)) in exp.variants.iter().zip(cols.iter()).enumerate() {
        let name = experiment::cut(
            &experiment::variant_heading(v),
            usize::from(col.width.saturating_sub(1)),
        );
        frame.render_widget(
            Paragraph::new(Span::styled(name, experiment::variant_style(t, side)))
                .alignment(Alignment::Right),
            Rect::new(col.x, y, col.width.saturating_sub(1), 1),
        );
    }
    y += 1;
    let bottom = inner.y + inner.height;
    for f in figures {
        if y >= bottom {
            break;
        }
        let unit = RowUnit::of(f);
        let numbers: Vec<Option<String>> = (0..exp.variants.len())
            .map(|side| {
                f.values
                    .get(side)
                    .copied()
                    .flatten()
                    .map(|v| unit.number(v))
            })
            .collect();
        let big = tall
            && cols.iter().enumerate().all(|(side, col)| {
                numbers[side].as_ref().is_none_or(|num| {
                    let mark = crate::locale::width(&f.mark(side));
                    let room = usize::from(col.width.saturating_sub(1));
                    fits_big(num, col.width.saturating_sub(1))
                        && num.chars().count() * BIG_COLS + usize::from(mark > 0) + mark <= room
                })
            });
        let mut label = vec![Span::styled(f.label.to_string(), t.heading)];
        if let Some(name) = unit.name {
            label.push(Span::styled(format!(" ({name})"), t.strong));
        }
        if f.modelled {
            label.push(Span::styled(format!(" · {}", s::t(s::MODELLED)), t.warn));
        }
        frame.render_widget(
            Paragraph::new(fit_line(label, usize::from(inner.width))),
            Rect::new(inner.x, y, inner.width, 1),
        );
        y += 1;
        if y >= bottom {
            break;
        }
        let rows = if big { BIG_ROWS.min(bottom - y) } else { 1 };
        for (side, col) in cols.iter().enumerate() {
            let w = col.width.saturating_sub(1);
            let mark = f.mark(side);
            match (&numbers[side], big) {
                (Some(num), true) => {
                    let num_w = (num.chars().count() * BIG_COLS) as u16;
                    let text = BigText::builder()
                        .pixel_size(PixelSize::Quadrant)
                        .style(t.strong)
                        .lines(vec![Line::from(num.clone())])
                        .right_aligned()
                        .build();
                    frame.render_widget(text, Rect::new(col.x, y, w, rows));
                    if !mark.is_empty() {
                        // The mark at body size, just left of the number.
                        frame.render_widget(
                            Paragraph::new(Span::styled(mark, t.good)).alignment(Alignment::Right),
                            Rect::new(
                                col.x,
                                y + (rows / 2).min(rows.saturating_sub(1)),
                                w.saturating_sub(num_w + 1),
                                1,
                            ),
                        );
                    }
                }
                _ => {
                    // Body size, bold: the value with its unit, the mark.
                    let mut spans = vec![match &numbers[side] {
                        Some(num) => Span::styled(num.clone(), t.strong),
                        None => Span::styled(f.text(side), t.base),
                    }];
                    if !mark.is_empty() {
                        spans.push(Span::styled(format!(" {mark}"), t.good));
                    }
                    frame.render_widget(
                        Paragraph::new(fit_line(spans, usize::from(w))).alignment(Alignment::Right),
                        Rect::new(col.x, y + rows / 2, w, 1),
                    );
                }
            }
        }
        y += rows;
        // A blank line between figures when there is room.
        if !big && inner.height > 1 + figures.len() as u16 * 3 {
            y += 1;
        }
    }
}

/// One unit for a whole row of sizes (the largest value's binary unit),
/// so the numbers of a row compare digit for digit; counts have none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowUnit {
    pub divisor: f64,
    pub name: Option<&'static str>,
}

impl RowUnit {
    pub fn of(f: &Figure) -> RowUnit {
        if f.unit != experiment::Unit::Bytes {
            return RowUnit {
                divisor: 1.0,
                name: None,
            };
        }
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let max = f.values.iter().flatten().copied().fold(0.0, f64::max);
        let mut divisor = 1.0;
        let mut u = 0;
        while max / divisor >= 1024.0 && u + 1 < UNITS.len() {
            divisor *= 1024.0;
            u += 1;
        }
        RowUnit {
            divisor,
            name: Some(UNITS[u]),
        }
    }

    /// `v` in this unit: counts and bytes as the course writes numbers,
    /// larger units with one decimal.
    pub fn number(&self, v: f64) -> String {
        if self.divisor == 1.0 {
            crate::course::claims::format_number(v)
        } else {
            format!("{:.1}", v / self.divisor)
        }
    }
}

/// Spans cut to `width` columns (by display width), never mid-character.
fn fit_line(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let mut out = Vec::new();
    let mut used = 0;
    for sp in spans {
        let room = width.saturating_sub(used);
        if room == 0 {
            break;
        }
        let text = experiment::cut(&sp.content, room);
        used += crate::locale::width(&text);
        out.push(Span::styled(text, sp.style));
    }
    Line::from(out)
}

/// One claim: its text in bold, its verdict and the reason, at body size.
fn render_claim(app: &App, report: &ExperimentReport, i: usize, frame: &mut Frame, body: Rect) {
    let t = &app.theme;
    let mut lines = vec![Line::default()];
    match report.claims.get(i) {
        None => lines.push(Line::from(Span::styled(s::t(s::PRESENT_NO_CLAIMS), t.base))),
        Some(c) => {
            lines.push(Line::from(Span::styled(c.text.clone(), t.title)));
            lines.push(Line::default());
            let (mark, style) = if c.verdict.passed {
                (s::t(s::CLAIM_HOLDS), t.good)
            } else {
                (s::t(s::CLAIM_FAILS), t.bad)
            };
            lines.push(Line::from(Span::styled(mark, style)));
            let reason = c.verdict.reason.render_in(s::lang());
            if !reason.is_empty() {
                lines.push(Line::default());
                lines.push(Line::from(Span::styled(reason, t.base)));
            }
        }
    }
    let area = Rect::new(
        body.x + 2,
        body.y,
        body.width.saturating_sub(4).min(100),
        body.height,
    );
    frame.render_widget(
        Paragraph::new(lines)
            .style(t.base)
            .wrap(Wrap { trim: false }),
        area,
    );
}
