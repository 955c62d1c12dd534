//! TUI tests: snapshots of every screen at 100×30 and 80×24 from fixture
//! data (TestBackend + insta), and event tests that feed actions/keys and
//! check the state they produce.
#![allow(clippy::unwrap_used)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schemalab::course::Scale;
use schemalab::tui::action::{Action, Effect, TaskMsg};
use schemalab::tui::app::{App, ConnState, EngineStatus, ExpTab, Screen};
use schemalab::tui::keys::{self, KeyContext};
use schemalab::tui::model::RunProgress;
use schemalab::tui::progress::{Mark, Progress};
use schemalab::tui::screens::explain_tree;
use schemalab::tui::theme::Theme;
use schemalab::tui::{fixture, markdown, strings, view};

fn app_with(theme: Theme, present: bool, size: (u16, u16)) -> App {
    let mut app = App::new(
        fixture::course(),
        theme,
        present,
        EngineStatus {
            label: strings::EMBEDDED_ENGINE.into(),
            state: ConnState::Connected,
        },
        Scale::Default,
        Progress::default(),
    );
    app.update(Action::Resize {
        width: size.0,
        height: size.1,
    });
    app
}

fn draw(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    terminal.draw(|f| view::render(app, f)).unwrap();
    format!("{}", terminal.backend())
}

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    let action = keys::action_for(app.key_context(), KeyEvent::new(code, KeyModifiers::NONE));
    action.map(|a| app.update(a)).unwrap_or_default()
}

fn chars(app: &mut App, s: &str) -> Vec<Effect> {
    s.chars().flat_map(|c| key(app, KeyCode::Char(c))).collect()
}

/// Runs the bucket experiment to completion with the fixture report.
fn finish_run(app: &mut App) {
    let id = match &app.run {
        Some(r) => r.id,
        None => panic!("no run in progress"),
    };
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Ok(Box::new(fixture::bucket_report())),
    }));
}

/// Launch → bucket comparison, as a learner types it.
fn at_comparison(size: (u16, u16)) -> App {
    let mut app = app_with(Theme::normal(), false, size);
    let effects = chars(&mut app, "10r");
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::StartRun {
                lesson: 9,
                experiment: 0,
                ..
            }
        )),
        "{effects:?}"
    );
    finish_run(&mut app);
    app
}

/// Snapshot one state at both sizes.
fn snap(name: &str, build: impl Fn((u16, u16)) -> App) {
    for size in [(100, 30), (80, 24)] {
        let app = build(size);
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), draw(&app));
    }
}

#[test]
fn snapshot_outline() {
    snap("outline", |size| {
        let mut app = app_with(Theme::normal(), false, size);
        app.progress.see("lesson1");
        app.progress.complete("lesson2");
        app
    });
}

#[test]
fn snapshot_outline_search() {
    snap("outline_search", |size| {
        let mut app = app_with(Theme::normal(), false, size);
        chars(&mut app, "/buck");
        app
    });
}

#[test]
fn snapshot_reader_before_run() {
    snap("reader_before_run", |size| {
        let mut app = app_with(Theme::normal(), false, size);
        chars(&mut app, "10");
        key(&mut app, KeyCode::Enter);
        app
    });
}

#[test]
fn snapshot_reader_after_run_second_section() {
    snap("reader_after_run", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Esc);
        key(&mut app, KeyCode::Char('n'));
        app
    });
}

#[test]
fn snapshot_presenter_reader() {
    snap("presenter_reader", |size| {
        let mut app = app_with(Theme::presenter(), true, size);
        chars(&mut app, "10");
        key(&mut app, KeyCode::Enter);
        app
    });
}

#[test]
fn snapshot_experiment_not_run() {
    snap("experiment_not_run", |size| {
        let mut app = app_with(Theme::normal(), false, size);
        chars(&mut app, "10");
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Char('e'));
        app
    });
}

#[test]
fn snapshot_experiment_running() {
    snap("experiment_running", |size| {
        let mut app = app_with(Theme::normal(), false, size);
        chars(&mut app, "10r");
        let id = app.run.as_ref().unwrap().id;
        app.update(Action::Task(TaskMsg::RunProgress {
            run_id: id,
            progress: RunProgress {
                fraction: 0.4,
                step: "loading dataset".into(),
            },
        }));
        app
    });
}

#[test]
fn snapshot_experiment_operations() {
    snap("experiment_operations", at_comparison);
}

#[test]
fn snapshot_experiment_write_operation() {
    snap("experiment_write", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Char('j'));
        app
    });
}

#[test]
fn snapshot_experiment_collections() {
    snap("experiment_collections", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Tab);
        app
    });
}

#[test]
fn snapshot_experiment_samples() {
    snap("experiment_samples", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Tab);
        key(&mut app, KeyCode::Tab);
        app
    });
}

#[test]
fn snapshot_experiment_claims() {
    snap("experiment_claims", |size| {
        let mut app = at_comparison(size);
        for _ in 0..3 {
            key(&mut app, KeyCode::Tab);
        }
        app
    });
}

#[test]
fn snapshot_explain_classic() {
    snap("explain_classic", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Enter);
        app
    });
}

#[test]
fn snapshot_explain_sbe() {
    snap("explain_sbe", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Char('l'));
        app
    });
}

#[test]
fn snapshot_explain_raw() {
    snap("explain_raw", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Char('t'));
        app
    });
}

#[test]
fn snapshot_shell() {
    snap("shell", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Char('s'));
        chars(&mut app, "show collections");
        key(&mut app, KeyCode::Enter);
        app.update(Action::Task(TaskMsg::ShellOutput {
            text: "readings".into(),
            error: false,
        }));
        chars(&mut app, "db.nope(");
        key(&mut app, KeyCode::Enter);
        app.update(Action::Task(TaskMsg::ShellOutput {
            text: "SyntaxError: unexpected end (1:9)".into(),
            error: true,
        }));
        app
    });
}

#[test]
fn snapshot_help() {
    snap("help", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Char('?'));
        app
    });
}

#[test]
fn too_small_terminal_shows_notice_instead_of_panicking() {
    for (w, h) in [(79, 24), (80, 23), (20, 5), (1, 1), (0, 0)] {
        let mut app = at_comparison((100, 30));
        app.update(Action::Resize {
            width: w,
            height: h,
        });
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| view::render(&app, f)).unwrap();
        if w >= 40 && h >= 2 {
            assert!(format!("{}", terminal.backend()).contains(strings::TOO_SMALL));
        }
    }
    let mut app = app_with(Theme::normal(), false, (60, 20));
    app.update(Action::Resize {
        width: 60,
        height: 20,
    });
    insta::assert_snapshot!("too_small_60x20", draw(&app));
}

#[test]
fn no_color_theme_renders_same_text() {
    let plain = draw(&at_comparison((100, 30)));
    let mut app = at_comparison((100, 30));
    app.theme = Theme::no_color();
    assert_eq!(plain, draw(&app));
    assert_eq!(
        Theme::select(false, true).kind,
        schemalab::tui::theme::ThemeKind::NoColor
    );
    assert_eq!(
        Theme::select(true, false).kind,
        schemalab::tui::theme::ThemeKind::Presenter
    );
}

// ---- events ----

#[test]
fn three_keys_from_launch_to_bucket_comparison() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    assert_eq!(app.screen, Screen::Outline);
    let footer = keys::footer(KeyContext::Outline);
    assert!(footer.iter().any(|(k, _)| *k == "0-9") && footer.iter().any(|(k, _)| *k == "r"));
    chars(&mut app, "10");
    assert_eq!(app.outline.selected, 9);
    let effects = key(&mut app, KeyCode::Char('r'));
    assert!(matches!(
        effects.last(),
        Some(Effect::StartRun { lesson: 9, .. })
    ));
    assert_eq!(app.screen, Screen::Experiment);
    finish_run(&mut app);
    let screen = draw(&app);
    assert!(
        screen.contains("keys examined") && screen.contains("★ ×180"),
        "{screen}"
    );
    assert_eq!(app.progress.mark("bucket"), Mark::Done);
}

#[test]
fn digits_jump_and_restart() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    chars(&mut app, "3");
    assert_eq!(app.outline.selected, 2);
    chars(&mut app, "1");
    assert_eq!(
        app.outline.selected, 0,
        "31 is out of range, so 1 starts again"
    );
    chars(&mut app, "2");
    assert_eq!(app.outline.selected, 11, "1 then 2 is lesson 12");
    key(&mut app, KeyCode::Down);
    chars(&mut app, "5");
    assert_eq!(app.outline.selected, 4);
}

#[test]
fn search_filters_and_enter_opens() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    chars(&mut app, "/");
    assert_eq!(app.key_context(), KeyContext::Search);
    chars(&mut app, "bucket");
    assert_eq!(app.visible_lessons(), vec![9]);
    let effects = key(&mut app, KeyCode::Enter);
    assert_eq!(effects, vec![Effect::SaveProgress]);
    assert_eq!(app.screen, Screen::Reader);
    assert_eq!(app.lesson, 9);
    assert_eq!(app.outline.search, None);
    assert_eq!(app.progress.mark("bucket"), Mark::Seen);
}

#[test]
fn placeholders_show_ellipsis_then_values() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    chars(&mut app, "10");
    key(&mut app, KeyCode::Enter);
    let before = draw(&app);
    assert!(before.contains("keeps … readings"), "{before}");
    key(&mut app, KeyCode::Char('r'));
    finish_run(&mut app);
    key(&mut app, KeyCode::Esc);
    let after = draw(&app);
    assert!(
        after.contains("keeps 144,000 readings") && after.contains("200 times fewer"),
        "{after}"
    );
}

#[test]
fn section_jumps_move_between_headings() {
    let mut app = app_with(Theme::normal(), false, (80, 24));
    chars(&mut app, "10");
    key(&mut app, KeyCode::Enter);
    let sections = app.reader.doc.sections.clone();
    assert_eq!(sections.len(), 2);
    let height =
        schemalab::tui::screens::reader::text_area(schemalab::tui::app::main_area(app.size)).height;
    let max_scroll = app
        .reader
        .doc
        .lines
        .len()
        .saturating_sub(usize::from(height));
    key(&mut app, KeyCode::Char('n'));
    assert_eq!(app.reader.scroll, sections[0].min(max_scroll));
    assert!(app.reader.scroll > 0);
    key(&mut app, KeyCode::Char('N'));
    assert_eq!(app.reader.scroll, 0);
}

#[test]
fn presenter_reveals_one_section_at_a_time() {
    let mut app = app_with(Theme::presenter(), true, (100, 30));
    chars(&mut app, "10");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.key_context(), KeyContext::Presenter);
    let first = app.reader_visible_len();
    assert!(!draw(&app).contains("Why it works"));
    key(&mut app, KeyCode::Char(' '));
    assert!(app.reader_visible_len() > first);
    assert!(draw(&app).contains("Why it works"));
}

#[test]
fn cancel_and_stale_results() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    chars(&mut app, "10r");
    let id = app.run.as_ref().unwrap().id;
    assert_eq!(key(&mut app, KeyCode::Char('c')), vec![Effect::CancelRun]);
    // A report from an older run is ignored.
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id + 7,
        result: Err("x".into()),
    }));
    assert!(app.run.is_some());
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Err("cancelled".into()),
    }));
    assert!(app.run.is_none());
    assert!(
        app.notice
            .as_deref()
            .unwrap()
            .starts_with(strings::EXP_CANCELLED)
    );
    assert!(app.current_report().is_none());
    // While a run is in progress `r` does not start another.
    key(&mut app, KeyCode::Char('r'));
    assert!(key(&mut app, KeyCode::Char('r')).is_empty());
}

#[test]
fn scale_cycles_within_bounds_and_is_sent_with_run() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    assert_eq!(app.scale, Scale::Default);
    key(&mut app, KeyCode::Char('+'));
    assert_eq!(app.scale, Scale::Large);
    key(&mut app, KeyCode::Char('+'));
    assert_eq!(app.scale, Scale::Large);
    for _ in 0..5 {
        key(&mut app, KeyCode::Char('-'));
    }
    assert_eq!(app.scale, Scale::Tiny);
    let effects = chars(&mut app, "10r");
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::StartRun {
            scale: Scale::Tiny,
            ..
        }
    )));
}

#[test]
fn help_toggles_and_any_key_closes() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    key(&mut app, KeyCode::Char('?'));
    assert!(app.help);
    assert_eq!(app.key_context(), KeyContext::Help);
    key(&mut app, KeyCode::Char('j'));
    assert!(!app.help);
    assert_eq!(app.outline.selected, 0, "the closing key does nothing else");
}

#[test]
fn quit_keys() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    key(&mut app, KeyCode::Char('q'));
    assert!(app.should_quit);
    let mut app = app_with(Theme::normal(), false, (100, 30));
    key(&mut app, KeyCode::Char('s'));
    chars(&mut app, "q");
    assert!(!app.should_quit, "q is text in the shell");
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    app.update(keys::action_for(app.key_context(), ctrl_c).unwrap());
    assert!(app.should_quit);
}

#[test]
fn shell_history_and_eval_effect() {
    let mut app = at_comparison((100, 30));
    key(&mut app, KeyCode::Char('s'));
    assert_eq!(app.screen, Screen::Shell);
    chars(&mut app, "db.buckets.countDocuments()");
    let effects = key(&mut app, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::ShellEval {
            db: "schemalab_bucket_naive".into(),
            src: "db.buckets.countDocuments()".into()
        }]
    );
    assert!(app.shell.busy);
    app.update(Action::Task(TaskMsg::ShellOutput {
        text: "720".into(),
        error: false,
    }));
    assert!(!app.shell.busy);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.shell.input, "db.buckets.countDocuments()");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.shell.input, "");
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Experiment);
}

#[test]
fn mouse_click_selects_then_opens() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    // Row 2 is the first lesson (status bar, list border).
    app.update(Action::Click { column: 5, row: 4 });
    assert_eq!(app.outline.selected, 2);
    assert_eq!(app.screen, Screen::Outline);
    app.update(Action::Click { column: 5, row: 4 });
    assert_eq!(app.screen, Screen::Reader);
    app.update(Action::ScrollDown);
    assert!(app.reader.scroll <= app.reader.doc.lines.len());
}

#[test]
fn experiment_tabs_cycle_and_explain_sides() {
    let mut app = at_comparison((100, 30));
    assert_eq!(app.experiment.tab, ExpTab::Operations);
    for expected in [
        ExpTab::Collections,
        ExpTab::Samples,
        ExpTab::Claims,
        ExpTab::Operations,
    ] {
        key(&mut app, KeyCode::Tab);
        assert_eq!(app.experiment.tab, expected);
    }
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.screen, Screen::Explain);
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(app.explain.node, 1);
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(app.explain.node, 1, "two nodes only");
    key(&mut app, KeyCode::Right);
    assert_eq!((app.explain.side, app.explain.node), (1, 0));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Experiment);
}

#[test]
fn explain_tree_classic_and_sbe_agree_on_shape() {
    let report = fixture::bucket_report();
    let classic = explain_tree::build(report.variants[0].operations[0].explain.as_ref().unwrap());
    let sbe = explain_tree::build(report.variants[1].operations[0].explain.as_ref().unwrap());
    for nodes in [&classic, &sbe] {
        let stages: Vec<&str> = nodes.iter().map(|n| n.stage.as_str()).collect();
        assert_eq!(stages, ["FETCH", "IXSCAN"]);
        assert_eq!(nodes.iter().filter(|n| n.heaviest).count(), 1);
        let total: f64 = nodes.iter().map(|n| n.share).sum();
        assert!((total - 1.0).abs() < 1e-9);
    }
    assert_eq!(
        (classic[1].keys_examined, classic[0].docs_examined),
        (1440, 1440)
    );
    assert_eq!(
        (
            sbe[1].keys_examined,
            sbe[0].docs_examined,
            sbe[0].n_returned
        ),
        (8, 8, Some(8))
    );
    assert_eq!(sbe[1].detail, "sensor_id_1_start_1");
}

#[test]
fn explain_tree_aggregate_stages() {
    let explain = bson::doc! {
        "stages": [
            {"$cursor": {"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}},
                         "executionStats": {"executionStages": {"stage": "COLLSCAN", "nReturned": 10, "docsExamined": 100}}}},
            {"$lookup": {"from": "x"}, "nReturned": 10, "totalDocsExamined": 300}
        ]
    };
    let nodes = explain_tree::build(&explain);
    let names: Vec<(&str, usize)> = nodes.iter().map(|n| (n.stage.as_str(), n.depth)).collect();
    assert_eq!(names, [("$lookup", 0), ("COLLSCAN", 1)]);
    assert!(nodes[0].heaviest);
}

#[test]
fn progress_round_trips_and_tolerates_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/progress.json");
    let mut p = Progress::default();
    p.see("bucket");
    p.complete("bucket");
    p.save(&path).unwrap();
    assert_eq!(Progress::load(&path), p);
    std::fs::write(&path, "{not json").unwrap();
    assert_eq!(Progress::load(&path), Progress::default());
    assert_eq!(
        Progress::load(&dir.path().join("missing.json")),
        Progress::default()
    );
}

#[test]
fn report_expressions() {
    let r = fixture::bucket_report();
    assert_eq!(
        r.eval("naive.coll.readings.count / bucket.coll.buckets.count")
            .unwrap()
            .to_string(),
        "200"
    );
    assert_eq!(
        r.eval("naive.op.one_day.stages").unwrap().to_string(),
        "FETCH<-IXSCAN"
    );
    assert_eq!(
        r.eval("bucket.coll.buckets.index.sensor_id_1_start_1")
            .unwrap()
            .to_string(),
        "12,000"
    );
    assert_eq!(r.eval("(1 + 2) * 3").unwrap().to_string(), "9");
    assert!(r.eval("naive.coll.nope.count").is_none());
    assert!(r.eval("1 / 0").is_none());
    assert!(r.eval("1 +").is_none());
}

#[test]
fn markdown_blocks() {
    let src = "# T\n\n## A\n\n*em* **strong** [l](http://x)\n\n- one\n- two\n\n1. first\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 22 |\n\n```js\ndb.x.find({a: 1})\n```\n\n## B\n\nend\n";
    let doc = markdown::render(src, 60, &Theme::normal());
    let text: Vec<String> = doc.lines.iter().map(|l| l.to_string()).collect();
    let joined = text.join("\n");
    assert_eq!(doc.sections.len(), 2);
    assert!(text[doc.sections[1]].contains("B"));
    for needle in [
        "• one",
        "1. first",
        "▌ quoted",
        "a │ b",
        "1 │ 22",
        "│ db.x.find({a: 1})",
        "⟨http://x⟩",
    ] {
        assert!(joined.contains(needle), "missing {needle:?} in\n{joined}");
    }
    assert_eq!(
        markdown::fill_placeholders("a {{ x }} b {{y}}", |e| (e == "x").then(|| "1".into())),
        "a 1 b …"
    );
    // Wrapping respects the width.
    let long = markdown::render(&"word ".repeat(100), 30, &Theme::normal());
    assert!(long.lines.iter().all(|l| l.width() <= 30));
}

#[test]
fn real_lessons_load_and_render_at_both_sizes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons");
    if !dir.join("manifest.toml").is_file() {
        eprintln!("skipped: no lessons/ in this checkout");
        return;
    }
    let course = schemalab::tui::content::load_course(&dir).unwrap();
    assert!(!course.lessons.is_empty());
    for size in [(100, 30), (80, 24)] {
        let mut app = App::new(
            course.clone(),
            Theme::normal(),
            false,
            EngineStatus {
                label: strings::EMBEDDED_ENGINE.into(),
                state: ConnState::Connecting,
            },
            Scale::Default,
            Progress::default(),
        );
        app.update(Action::Resize {
            width: size.0,
            height: size.1,
        });
        for i in 0..course.lessons.len() {
            app.outline.selected = i;
            app.update(Action::Open);
            assert!(
                !app.reader.doc.lines.is_empty(),
                "lesson {} has prose",
                course.lessons[i].id
            );
            draw(&app);
            app.update(Action::Bottom);
            draw(&app);
            app.update(Action::Results);
            draw(&app);
            app.update(Action::Back);
            app.update(Action::Back);
        }
    }
}

#[test]
fn highlighting_uses_the_app_theme() {
    use schemalab::tui::highlight;
    let theme = Theme::normal();
    let line = highlight::highlight_line("db.x.find({a: 'text', n: 42}) // why", "js", &theme);
    let style_of = |needle: &str| {
        line.spans
            .iter()
            .find(|s| s.content.contains(needle))
            .map(|s| s.style)
    };
    assert_eq!(style_of("text"), Some(theme.string));
    assert_eq!(style_of("42"), Some(theme.number));
    assert_eq!(style_of("why"), Some(theme.comment));
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    assert_eq!(text, "db.x.find({a: 'text', n: 42}) // why", "no text lost");
    let plain = Theme::no_color();
    let line = highlight::highlight_line("db.x.find({a: 'text'})", "js", &plain);
    assert!(
        line.spans
            .iter()
            .all(|s| s.style.fg.is_none() && s.style.bg.is_none())
    );
    // Unknown languages come back unhighlighted but whole.
    let lines = highlight::highlight("a\nb", "cobol-ish", &theme);
    assert_eq!(lines.len(), 2);
}
