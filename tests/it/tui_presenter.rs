//! The presenter view and the views issue 13 §3 and §5 added or changed,
//! built from real course types: real tiny runs of the bucket (two
//! variants), subset (three), trees (four) and computed (three
//! experiments) lessons. Snapshots at 100×30 and 80×24, and checks that
//! make the claims checkable: the winner mark sits on the variant whose
//! figure in the report is the lowest; big numbers at 100×30 and body-size
//! text at 80×24, no line wider than the terminal; results are marked stale
//! after a scale change in every view and unmarked after a re-run; the
//! keys step through operations and claims; the operations table keeps a
//! figure on its label's row and no index name is broken; a lesson's wide
//! Markdown table is drawn whole.

use crate::support::tui::{
    at_lesson_in, buffer, chars, draw, draw_checked, finish_with, key, row_text,
};
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use schemalab::course::{LessonReport, OpKind, Scale};
use schemalab::locale::Lang;
use schemalab::tui::action::Effect;
use schemalab::tui::app::{App, Screen};
use schemalab::tui::screens::presenter::{self, Slide};
use schemalab::tui::theme::Theme;

/// Lesson `number` run (tiny) and shown in presenter mode.
fn presenting(size: (u16, u16), number: &str, id: &str) -> App {
    at_lesson_in(Lang::En, Theme::presenter(), true, size, number, id)
}

/// The same run in the normal workbench.
fn normal(size: (u16, u16), number: &str, id: &str) -> App {
    at_lesson_in(Lang::En, Theme::normal(), false, size, number, id)
}

const LESSONS: [(&str, &str, usize); 3] =
    [("10", "bucket", 2), ("8", "subset", 3), ("15", "trees", 4)];

#[test]
fn snapshots_of_the_first_operation_for_two_three_and_four_variants() {
    for (number, id, variants) in LESSONS {
        for size in [(100, 30), (80, 24)] {
            let app = presenting(size, number, id);
            assert_eq!(app.screen, Screen::Experiment);
            assert_eq!(app.current_experiment().unwrap().variants.len(), variants);
            insta::assert_snapshot!(
                format!("presenter_{id}_{}x{}", size.0, size.1),
                draw_checked(&app)
            );
        }
    }
}

#[test]
fn snapshots_of_the_sizes_and_a_claim() {
    for size in [(100, 30), (80, 24)] {
        let mut app = presenting(size, "10", "bucket");
        let slides = presenter::slides(&app);
        let sizes = slides.iter().position(|s| *s == Slide::Sizes).unwrap();
        for _ in 0..sizes {
            key(&mut app, KeyCode::Char(' '));
        }
        let screen = draw_checked(&app);
        // Modelled sizes say so, and the engine is named.
        assert!(screen.contains("modelled"), "{screen}");
        assert!(
            screen.contains("engine: schemalab embedded engine"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("presenter_sizes_{}x{}", size.0, size.1), screen);
        key(&mut app, KeyCode::Char(' '));
        let screen = draw_checked(&app);
        assert!(screen.contains("claim 1/"), "{screen}");
        insta::assert_snapshot!(format!("presenter_claim_{}x{}", size.0, size.1), screen);
    }
}

/// The report's own figure of `row` for each variant of operation `op`.
fn report_figures(report: &LessonReport, op: usize, row: &str) -> Vec<f64> {
    let exp = &report.experiments[0];
    exp.variants
        .iter()
        .map(|v| {
            let o = &v.operations[op];
            match (row, o.kind) {
                ("docs examined", OpKind::Read) => o.read.as_ref().unwrap().docs_examined as f64,
                ("keys examined", OpKind::Read) => o.read.as_ref().unwrap().keys_examined as f64,
                ("keys inserted", OpKind::Write) => {
                    o.write.as_ref().unwrap().keys_inserted.unwrap() as f64
                }
                _ => panic!("no {row} on a {:?}", o.kind),
            }
        })
        .collect()
}

/// Which variant column `x` falls in, as the presenter lays them out.
fn column_of(width: u16, variants: usize, x: u16) -> usize {
    let inner = Rect::new(1, 0, width - 2, 1);
    let cols =
        Layout::horizontal(vec![Constraint::Ratio(1, variants as u32); variants]).split(inner);
    cols.iter().position(|c| x >= c.x && x < c.right()).unwrap()
}

/// Per figure label: the variant columns whose rows (the label's line and
/// the lines under it, up to the next label) hold a `★`.
fn starred_columns(app: &App, label: &str, labels: &[&str]) -> Vec<usize> {
    let buf = buffer(app);
    let variants = app.current_experiment().unwrap().variants.len();
    let start = (0..buf.area.height)
        .find(|&y| row_text(&buf, y).trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} row:\n{}", draw(app)));
    let mut cols = Vec::new();
    for y in start + 1..buf.area.height {
        let text = row_text(&buf, y);
        if labels.iter().any(|l| text.trim_start().starts_with(l)) || text.contains("engine:") {
            break;
        }
        for x in 0..buf.area.width {
            if buf[(x, y)].symbol() == "★" {
                cols.push(column_of(buf.area.width, variants, x));
            }
        }
    }
    cols
}

#[test]
fn the_winner_mark_is_on_the_variant_with_the_lowest_figure_in_the_report() {
    // Examined counts that differ: the lowest wins, wherever it stands.
    let cases = [
        ("10", "bucket", 0, "docs examined"),
        ("8", "subset", 0, "docs examined"),
        ("15", "trees", 1, "docs examined"),
        ("10", "bucket", 4, "keys inserted"),
    ];
    for (number, id, op, row) in cases {
        for size in [(100, 30), (80, 24)] {
            let mut app = presenting(size, number, id);
            for _ in 0..op {
                key(&mut app, KeyCode::Char(' '));
            }
            assert_eq!(presenter::current(&app), Some(Slide::Op(op)));
            let report = crate::support::lesson_report(id);
            let figures = report_figures(&report, op, row);
            let best = figures.iter().copied().fold(f64::INFINITY, f64::min);
            assert!(
                figures.iter().any(|f| *f > best),
                "{id} op {op}: {row} is equal everywhere, nothing to check"
            );
            let expected: Vec<usize> = (0..figures.len()).filter(|&i| figures[i] == best).collect();
            let labels = [
                "keys examined",
                "docs examined",
                "bytes examined",
                "time (ms)",
                "keys inserted",
                "keys deleted",
            ];
            assert_eq!(
                starred_columns(&app, row, &labels),
                expected,
                "{id} op {op} {row} {figures:?} at {size:?}:\n{}",
                draw(&app)
            );
        }
    }
}

#[test]
fn numbers_are_big_at_100x30_and_body_text_at_80x24() {
    let big = presenting((100, 30), "15", "trees");
    let screen = draw_checked(&big);
    // Quadrant glyphs of the 8×8 font, and no figure as plain digits on
    // the docs examined line.
    assert!(screen.contains('▀') && screen.contains('▄'), "{screen}");
    let small = presenting((80, 24), "15", "trees");
    let screen = draw_checked(&small);
    assert!(!screen.contains('▀'), "{screen}");
    // Every value is still there, as text, with its mark.
    let report = crate::support::lesson_report("trees");
    for v in report_figures(&report, 0, "docs examined") {
        assert!(screen.contains(&format!("{v}")), "{v}:\n{screen}");
    }
    // Nothing dimmed: no cell of the view is in the presenter theme's
    // dim colour (the footer's keys aside).
    let buf = buffer(&small);
    let dim = Theme::presenter().dim.fg.unwrap();
    for y in 0..buf.area.height - 1 {
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            assert!(
                cell.symbol().trim().is_empty() || cell.fg != dim,
                "dim text at {x},{y}: {:?}",
                row_text(&buf, y)
            );
        }
    }
}

#[test]
fn the_keys_step_through_operations_and_claims() {
    let mut app = presenting((100, 30), "10", "bucket");
    assert!(draw(&app).contains("operation 1/7"));
    key(&mut app, KeyCode::Char(' '));
    assert!(draw(&app).contains("operation 2/7"));
    key(&mut app, KeyCode::PageDown);
    assert!(draw(&app).contains("operation 3/7"));
    key(&mut app, KeyCode::Char('N'));
    assert_eq!(presenter::current(&app), Some(Slide::Op(1)));
    // Tab: to the claims and back to the operation shown before.
    key(&mut app, KeyCode::Tab);
    assert_eq!(presenter::current(&app), Some(Slide::Claim(0)));
    assert!(draw(&app).contains("claim 1/"));
    key(&mut app, KeyCode::Tab);
    assert_eq!(presenter::current(&app), Some(Slide::Op(1)));
    // Enter opens that operation's explain; back from the explain of
    // another operation, the slide is that operation's.
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.screen, Screen::Explain);
    assert_eq!(app.experiment.op, 1);
    key(&mut app, KeyCode::Char('n'));
    key(&mut app, KeyCode::Esc);
    assert_eq!(presenter::current(&app), Some(Slide::Op(2)));
    // The last slide stays the last.
    for _ in 0..20 {
        key(&mut app, KeyCode::Char('n'));
    }
    let last = presenter::slides(&app).len() - 1;
    assert_eq!(app.experiment.slide, last);
    // The footer and the help list the presenter's keys.
    let screen = draw(&app);
    assert!(
        screen.contains("operations ⇄ claims") && screen.contains("? "),
        "{screen}"
    );
    key(&mut app, KeyCode::Char('?'));
    let help = draw(&app);
    assert!(
        help.contains("Presenter") && help.contains("previous"),
        "{help}"
    );
}

#[test]
fn an_experiment_indicator_where_a_lesson_has_several() {
    for present in [true, false] {
        let mut app = if present {
            presenting((100, 30), "9", "computed")
        } else {
            normal((100, 30), "9", "computed")
        };
        assert_eq!(app.current_lesson().unwrap().experiments().len(), 3);
        assert!(draw(&app).contains("experiment 1/3"), "{}", draw(&app));
        key(&mut app, KeyCode::Char('l'));
        assert!(draw(&app).contains("experiment 2/3"), "{}", draw(&app));
        key(&mut app, KeyCode::Char('h'));
        key(&mut app, KeyCode::Char('h'));
        assert!(draw(&app).contains("experiment 3/3"), "{}", draw(&app));
    }
    // One experiment: no indicator.
    let app = normal((100, 30), "10", "bucket");
    assert!(!draw(&app).contains("experiment 1/1"));
}

/// `+` changes the scale: every view of the figures says they are stale
/// until the experiment runs again at the new scale.
#[test]
fn stale_after_a_scale_change_until_a_rerun() {
    for present in [true, false] {
        let mut app = if present {
            presenting((100, 30), "10", "bucket")
        } else {
            normal((100, 30), "10", "bucket")
        };
        assert!(!draw(&app).contains("stale"), "{}", draw(&app));
        key(&mut app, KeyCode::Char('+'));
        assert_eq!(app.scale, Scale::Default);
        let screen = draw_checked(&app);
        assert!(
            screen.contains("stale: measured at tiny, now default"),
            "{screen}"
        );
        // The explain and the reader say so too.
        key(&mut app, KeyCode::Enter);
        assert_eq!(app.screen, Screen::Explain);
        assert!(draw(&app).contains("⚠ stale"), "{}", draw(&app));
        key(&mut app, KeyCode::Esc);
        key(&mut app, KeyCode::Esc);
        assert_eq!(app.screen, Screen::Reader);
        assert!(draw(&app).contains("stale"), "{}", draw(&app));
        // Back to the scale it ran at: not stale.
        key(&mut app, KeyCode::Char('-'));
        assert!(!draw(&app).contains("stale"));
        key(&mut app, KeyCode::Char('+'));
        // A re-run at the new scale clears the mark (the runner reports
        // the scale it was asked for).
        let effects = key(&mut app, KeyCode::Char('r'));
        assert!(
            effects.iter().any(|e| matches!(
                e,
                Effect::StartRun {
                    scale: Scale::Default,
                    ..
                }
            )),
            "{effects:?}"
        );
        let mut report = crate::support::lesson_report("bucket");
        report.scale = Scale::Default;
        finish_with(&mut app, report);
        let screen = draw(&app);
        assert!(!screen.contains("stale"), "{screen}");
        key(&mut app, KeyCode::Esc);
        assert!(!draw(&app).contains("stale"));
    }
}

/// Four variants at 120 columns: one row per figure with every value on
/// its label's line, index names whole.
#[test]
fn the_operations_table_reads_across_and_breaks_no_word() {
    let app = normal((120, 36), "15", "trees");
    let screen = draw_checked(&app);
    insta::assert_snapshot!("operations_four_variants_120x36", screen);
    let report = crate::support::lesson_report("trees");
    let exp = &report.experiments[0];
    let lines: Vec<&str> = screen.lines().collect();
    let docs = lines.iter().find(|l| l.contains("docs examined")).unwrap();
    for v in &exp.variants {
        let r = v.operations[0].read.as_ref().unwrap();
        assert!(docs.contains(&r.docs_examined.to_string()), "{docs}");
        for index in r.index.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            assert!(screen.contains(index), "{index} broken:\n{screen}");
        }
    }
    // Every operation: each word of every plan and index cell whole.
    let mut app = normal((120, 36), "15", "trees");
    for (i, op) in report.experiments[0].operations.iter().enumerate() {
        let screen = draw_checked(&app);
        for v in &exp.variants {
            let Some(r) = v.operations[i].read.as_ref() else {
                continue;
            };
            let o = &v.operations[i];
            let (chain, index) =
                schemalab::tui::screens::experiment::plan_line(o).unwrap_or_default();
            let words = chain
                .split_whitespace()
                .chain(index.iter().flat_map(|i| i.split_whitespace()))
                .map(|w| w.trim_matches(|c| c == ',' || c == '{' || c == '}'))
                .filter(|w| w.len() > 1)
                .collect::<Vec<_>>();
            assert!(!words.is_empty() || r.stages.is_empty(), "{}", op.id);
            for w in words {
                assert!(
                    screen.contains(w),
                    "{} {}: {w} broken:\n{screen}",
                    op.id,
                    v.id
                );
            }
        }
        key(&mut app, KeyCode::Char('j'));
    }
    // Three variants at 100×30 and 80×24.
    for size in [(100, 30), (80, 24)] {
        let app = normal(size, "8", "subset");
        insta::assert_snapshot!(
            format!("operations_three_variants_{}x{}", size.0, size.1),
            draw_checked(&app)
        );
    }
}

/// The trees lesson's comparison table is wider than 80 columns: the
/// reader draws it whole, cells wrapped inside their columns.
#[test]
fn a_wide_markdown_table_renders_whole() {
    let mut app = crate::support::tui::app_with(Theme::normal(), false, (80, 24));
    chars(&mut app, "15");
    key(&mut app, KeyCode::Enter);
    let doc = &app.reader.doc;
    let text: Vec<String> = doc
        .lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    let start = text
        .iter()
        .position(|l| l.contains("Design") && l.contains('│'))
        .unwrap();
    let table: Vec<&String> = text[start..]
        .iter()
        .take_while(|l| l.contains('│') || l.contains('┼'))
        .collect();
    for l in &table {
        assert!(schemalab::locale::width(l) <= 76, "{l:?} is too wide");
    }
    let joined = table
        .iter()
        .map(|l| l.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    for word in [
        "Parent",
        "references",
        "Ancestors",
        "recursive",
        "subtree",
        "Moving",
    ] {
        assert!(
            joined.contains(word),
            "{word} missing:\n{}",
            table
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    // Prose is capped at a readable measure on a wide terminal.
    let mut wide = crate::support::tui::app_with(Theme::normal(), false, (200, 40));
    chars(&mut wide, "15");
    key(&mut wide, KeyCode::Enter);
    assert!(wide.reader.doc.lines.iter().all(|l| l.width() <= 100));
    assert!(wide.reader.doc.lines.iter().any(|l| l.width() > 80));
}

/// At 80×24 the header keeps the running indicator and the footer `? help`.
#[test]
fn at_80x24_the_indicator_and_help_stay_visible() {
    let mut app = crate::support::tui::app_with(Theme::normal(), false, (80, 24));
    chars(&mut app, "18r");
    let screen = draw_checked(&app);
    let top = screen.lines().next().unwrap();
    assert!(top.contains("running"), "{top}");
    assert!(top.contains("scale: default"), "{top}");
    for ctx in [false, true] {
        let mut app = if ctx {
            presenting((80, 24), "15", "trees")
        } else {
            normal((80, 24), "15", "trees")
        };
        for _ in 0..2 {
            let screen = draw_checked(&app);
            let last = screen.lines().last().unwrap();
            assert!(last.contains("?  help"), "{last}");
            key(&mut app, KeyCode::Enter);
        }
    }
}

/// The help overlay fits 80×24 whole in both modes, and in presenter mode
/// lists the presenter's keys where the reader's and the comparison's go.
#[test]
fn help_fits_and_lists_the_keys_of_the_mode() {
    for present in [false, true] {
        let mut app = if present {
            presenting((80, 24), "10", "bucket")
        } else {
            normal((80, 24), "10", "bucket")
        };
        key(&mut app, KeyCode::Char('?'));
        let help = draw_checked(&app);
        assert!(
            help.contains("Everywhere") && help.contains("wheel"),
            "{help}"
        );
        assert_eq!(help.contains("operations ⇄ claims"), present, "{help}");
        assert_eq!(help.contains("next tab"), !present, "{help}");
        if present {
            insta::assert_snapshot!("presenter_help_80x24", help);
        }
    }
}

/// Before a run the slide names the operation and says what to press.
#[test]
fn before_a_run_the_slide_says_press_r() {
    for size in [(100, 30), (80, 24)] {
        let mut app = crate::support::tui::app_in(Lang::En, Theme::presenter(), true, size);
        chars(&mut app, "10");
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Char('e'));
        assert_eq!(app.screen, Screen::Experiment);
        let screen = draw_checked(&app);
        assert!(
            screen.contains("operation 1/7") && screen.contains("press r"),
            "{screen}"
        );
        assert!(!screen.contains('★'), "{screen}");
        insta::assert_snapshot!(format!("presenter_not_run_{}x{}", size.0, size.1), screen);
    }
}
