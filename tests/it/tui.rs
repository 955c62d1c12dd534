//! TUI tests: snapshots of every screen at 100×30 and 80×24 (TestBackend +
//! insta) built from real course types (the course in `lessons/` and a
//! real tiny run of the bucket lesson, see `crate::support`), and event tests that
//! feed actions/keys and check the state they produce.

use crate::support::tui::{app_with, chars, draw, key, position};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schemalab::course::Scale;
use schemalab::tui::action::{Action, Effect, TaskMsg};
use schemalab::tui::app::{App, ConnState, EngineStatus, ExpTab, Screen};
use schemalab::tui::keys::{self, KeyContext};
use schemalab::tui::progress::{Mark, Progress};
use schemalab::tui::screens::{experiment, explain_tree};
use schemalab::tui::theme::Theme;
use schemalab::tui::{markdown, strings, view};

/// Runs the bucket experiment to completion with the report of a real run.
fn finish_run(app: &mut App) {
    crate::support::tui::finish_with(app, crate::support::bucket_report());
}

/// Launch → bucket comparison, as a learner types it.
fn at_comparison(size: (u16, u16)) -> App {
    let mut app = app_with(Theme::normal(), false, size);
    // The report is a tiny run: run at the scale it was measured at.
    key(&mut app, KeyCode::Char('-'));
    let bucket = position(&app, "bucket");
    let effects = chars(&mut app, "10r");
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::StartRun {
                lesson,
                experiment: 0,
                ..
            } if *lesson == bucket
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
        app.progress.see("thinking-in-documents");
        app.progress.complete("embed-or-reference");
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
        // The third section, "The experiment", holds the measured figures.
        for _ in 0..3 {
            key(&mut app, KeyCode::Char('n'));
        }
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
            progress: schemalab::course::Progress {
                experiment: "readings".into(),
                variant: "naive".into(),
                step: "load".into(),
                done: 6,
                total: 15,
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
        // window, summary, append: the write.
        key(&mut app, KeyCode::Char('j'));
        key(&mut app, KeyCode::Char('j'));
        app
    });
}

/// The bucket comparison with the last entry of the workload list, the
/// summary of the whole experiment, selected.
fn at_summary(size: (u16, u16)) -> App {
    let mut app = at_comparison(size);
    let ops = app.current_experiment().unwrap().operations.len();
    for _ in 0..=ops {
        key(&mut app, KeyCode::Char('j'));
    }
    assert_eq!(app.experiment.op, ops, "j stops on the summary");
    app
}

#[test]
fn snapshot_experiment_summary() {
    snap("experiment_summary", at_summary);
}

/// One model, two renderings: every row of the summary the workbench
/// shows for experiment `exp` of `report` is the one `schemalab run`
/// prints, label and marked cells alike, and the verdict line is the same.
fn assert_summary_as_cli(
    app: &App,
    report: &schemalab::course::LessonReport,
    exp: usize,
) -> Vec<String> {
    use schemalab::course::report;
    let summary = report::summary_in(
        &report.experiments[exp],
        report.engine.modelled,
        schemalab::locale::Lang::En,
    );
    let cli = report::render(report, report::Format::Table);
    let screen = draw(app);
    for row in &summary.rows {
        assert!(
            screen.contains(row.label.trim()),
            "TUI lacks {:?}:\n{screen}",
            row.label
        );
        let cli_line = cli
            .lines()
            .find(|l| l.trim_start().starts_with(row.label.trim()))
            .unwrap_or_else(|| panic!("CLI lacks {:?}", row.label));
        for cell in &row.cells {
            assert!(
                screen.contains(cell.as_str()),
                "TUI lacks {cell:?} of {:?}:\n{screen}",
                row.label
            );
            assert!(
                cli_line.contains(cell.as_str()),
                "CLI line {cli_line:?} lacks {cell:?}"
            );
        }
    }
    let verdict = summary
        .trade_off
        .expect("the experiment recommends a design");
    assert!(cli.contains(&verdict[..40]));
    assert!(screen.contains(&verdict[..40]), "{screen}");
    summary.rows.into_iter().map(|r| r.label).collect()
}

#[test]
fn summary_shows_what_the_cli_prints() {
    let mut app = at_summary((200, 50));
    let labels = assert_summary_as_cli(&app, &crate::support::bucket_report(), 0);
    assert!(
        labels
            .iter()
            .any(|l| l.contains("per 100 requests: docs examined")),
        "the bucket experiment has weighted rows: {labels:?}"
    );
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.screen, Screen::Experiment, "no explain for the summary");
}

/// The working set's steady-state figure, measured under a cache smaller
/// than the data, is a row of the workbench's summary as of the CLI's.
#[test]
fn summary_shows_the_steady_state_working_set() {
    let mut app = app_with(Theme::normal(), false, (200, 50));
    key(&mut app, KeyCode::Char('-'));
    app.outline.selected = position(&app, "working-set");
    chars(&mut app, "r");
    let report = crate::support::lesson_report("working-set");
    crate::support::tui::finish_with(&mut app, report.clone());
    // The second experiment: the tight cache.
    key(&mut app, KeyCode::Char('l'));
    let exp = app.experiment.experiment;
    assert_eq!(report.experiments[exp].id, "tight");
    let ops = app.current_experiment().unwrap().operations.len();
    for _ in 0..ops {
        key(&mut app, KeyCode::Char('j'));
    }
    let labels = assert_summary_as_cli(&app, &report, exp);
    assert!(
        labels.iter().any(|l| l.contains("(steady state)")),
        "the steady-state row is in the summary: {labels:?}"
    );
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

/// The other side's tree (the SBE shape is covered by
/// `explain_tree_classic_and_sbe_agree_on_shape`: the embedded engine
/// answers classic explains).
#[test]
fn snapshot_explain_other_side() {
    snap("explain_bucket", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Char('l'));
        app
    });
}

/// Both variants' trees side by side, every node with its counters, the
/// heaviest marked by the rule the legend states, IXSCAN bounds.
#[test]
fn snapshot_explain_side_by_side() {
    for size in [(100, 30), (120, 36)] {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Enter);
        insta::assert_snapshot!(
            format!("explain_side_by_side_{}x{}", size.0, size.1),
            draw(&app)
        );
    }
}

/// Lesson `number` (as typed in the outline) run to completion with the
/// report of a real tiny run of lesson `id`.
fn at_lesson(size: (u16, u16), number: &str, id: &str) -> App {
    let mut app = app_with(Theme::normal(), false, size);
    key(&mut app, KeyCode::Char('-'));
    chars(&mut app, number);
    chars(&mut app, "r");
    let run = app.run.as_ref().map(|r| r.id).unwrap();
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: run,
        result: Ok(Box::new(crate::support::lesson_report(id))),
    }));
    app
}

/// A join from a real lesson run: the `$lookup` variant's tree has the
/// join as a node with its own examined counts, beside the application
/// join's `$in` query.
#[test]
fn snapshot_explain_lookup_side_by_side() {
    for size in [(100, 30), (120, 36)] {
        let mut app = at_lesson(size, "4", "one-to-many");
        assert_eq!(app.current_lesson().unwrap().id, "one-to-many");
        key(&mut app, KeyCode::Enter);
        let screen = draw(&app);
        assert!(screen.contains("$lookup"), "{screen}");
        insta::assert_snapshot!(
            format!("explain_lookup_side_by_side_{}x{}", size.0, size.1),
            screen
        );
    }
}

/// Four variants (the trees lesson, a `$graphLookup` among them) at 100
/// and 120 columns: compact node lines, the legend naming the
/// abbreviations.
#[test]
fn snapshot_explain_four_variants() {
    for size in [(100, 30), (120, 36)] {
        let mut app = at_lesson(size, "15", "trees");
        assert_eq!(app.current_experiment().unwrap().variants.len(), 4);
        key(&mut app, KeyCode::Enter);
        insta::assert_snapshot!(
            format!("explain_four_variants_{}x{}", size.0, size.1),
            draw(&app)
        );
    }
}

/// The operations card of the `$lookup` lesson: its plan line is the
/// tree's (the join at the top), never "collection scan" for an _id read.
#[test]
fn snapshot_lookup_operations_card() {
    let app = at_lesson((120, 36), "4", "one-to-many");
    insta::assert_snapshot!("lookup_operations_120x36", draw(&app));
}

/// The raw toggle belongs to one explain: another variant, another
/// operation or opening the view again shows the tree.
#[test]
fn raw_json_resets_per_explain() {
    let mut app = at_comparison((100, 30));
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('t'));
    assert!(app.explain.raw);
    key(&mut app, KeyCode::Char('l'));
    assert!(!app.explain.raw, "another variant");
    key(&mut app, KeyCode::Char('t'));
    let op = app.experiment.op;
    key(&mut app, KeyCode::Char('n'));
    assert!(!app.explain.raw, "another operation");
    assert_ne!(app.experiment.op, op);
    key(&mut app, KeyCode::Char('N'));
    assert_eq!(app.experiment.op, op);
    key(&mut app, KeyCode::Char('t'));
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Enter);
    assert!(!app.explain.raw, "opened again");
}

/// Every read of real reports: the card's plan and index line come from
/// the tree the explain view draws, the card's examined totals equal the
/// tree's sums, exactly one node is heaviest, and a read through an index
/// (IDHACK's _id included) is never called a collection scan.
#[test]
fn card_and_tree_agree_on_every_read() {
    let mut reads = 0;
    for report in [
        crate::support::bucket_report(),
        crate::support::lesson_report("one-to-many"),
        crate::support::lesson_report("trees"),
    ] {
        for exp in &report.experiments {
            for v in &exp.variants {
                for op in &v.operations {
                    let Some(m) = &op.read else { continue };
                    let Some(explain) = &m.explain else { continue };
                    reads += 1;
                    let nodes = explain_tree::build(explain);
                    assert_eq!(nodes.iter().filter(|n| n.heaviest).count(), 1);
                    let sum = explain_tree::summary(&nodes);
                    if m.not_reported.is_empty() {
                        assert_eq!(
                            (sum.keys_examined as i64, sum.docs_examined as i64),
                            (m.keys_examined, m.docs_examined),
                            "{} {} {}",
                            exp.id,
                            v.id,
                            op.id
                        );
                    }
                    let (chain, index) = experiment::plan_line(op).unwrap();
                    assert_eq!(chain, sum.chain);
                    assert_eq!(chain.split(" ← ").next(), Some(nodes[0].stage.as_str()));
                    let index = index.unwrap();
                    for i in m.index.split(',').filter(|i| !i.is_empty()) {
                        assert!(index.contains(i), "{index} lacks {i}");
                    }
                    if !sum.collscan {
                        assert_ne!(index, strings::NO_INDEX, "{} {}", v.id, op.id);
                    }
                }
            }
        }
    }
    assert!(reads >= 6, "{reads}");
}

fn idhack_explain() -> bson::Document {
    bson::doc! {
        "explainVersion": "1",
        "queryPlanner": {"winningPlan": {"stage": "IDHACK"}},
        "executionStats": {
            "nReturned": 1, "executionTimeMillis": 0, "totalKeysExamined": 1, "totalDocsExamined": 1,
            "executionStages": {"stage": "IDHACK", "nReturned": 1, "executionTimeMillisEstimate": 0,
                "keysExamined": 1, "docsExamined": 1}
        }
    }
}

/// IDHACK reads the _id index: the card names `_id_`, not a collection scan.
#[test]
fn idhack_is_labelled_as_the_id_index() {
    let report = crate::support::bucket_report();
    let mut op = report.experiments[0].variants[0]
        .operations
        .iter()
        .find(|o| o.read.is_some())
        .unwrap()
        .clone();
    let explain = idhack_explain();
    let (m, _) = schemalab::measure::figures::parse_explain(&explain).unwrap();
    op.read = Some(schemalab::measure::figures::ReadMetrics {
        explain: Some(explain),
        ..m
    });
    let (chain, index) = experiment::plan_line(&op).unwrap();
    assert_eq!(chain, "IDHACK");
    assert_eq!(index.as_deref(), Some("_id_"));
    // With no explain kept, the report's own (empty) index list is all
    // there is; the tree's reading still wins whenever one is.
    let nodes = explain_tree::build(op.read.as_ref().unwrap().explain.as_ref().unwrap());
    assert_eq!(nodes[0].indexes, ["_id_"]);
    assert!(!nodes[0].collscan);
}

/// The heaviest node: the most keys + docs examined by the node itself,
/// ties to the deeper node, then the first in plan order.
#[test]
fn heaviest_node_rule() {
    let node = |depth: usize, keys: u64, docs: u64| explain_tree::Node {
        depth,
        keys_examined: keys,
        docs_examined: docs,
        ..Default::default()
    };
    // Most work wins, wherever it is.
    assert_eq!(
        explain_tree::heaviest(&[node(0, 0, 5), node(1, 9, 0), node(2, 3, 3)]),
        Some(1)
    );
    // A tie goes to the deeper node.
    assert_eq!(
        explain_tree::heaviest(&[node(0, 0, 120), node(1, 120, 0)]),
        Some(1)
    );
    // Same work, same depth: the first in plan order.
    assert_eq!(
        explain_tree::heaviest(&[node(0, 0, 0), node(1, 4, 0), node(1, 0, 4)]),
        Some(1)
    );
    // Nothing examined: still exactly one, the deepest.
    assert_eq!(
        explain_tree::heaviest(&[node(0, 0, 0), node(1, 0, 0)]),
        Some(1)
    );
    assert_eq!(explain_tree::heaviest(&[]), None);
    // A crafted pipeline: the join examines more than the query under it.
    let explain = bson::doc! {
        "stages": [
            {"$cursor": {"queryPlanner": {"winningPlan": {"stage": "FETCH"}},
                         "executionStats": {"executionStages": {"stage": "FETCH", "nReturned": 10, "docsExamined": 10,
                            "inputStage": {"stage": "IXSCAN", "nReturned": 10, "keysExamined": 10, "indexName": "a_1",
                                "indexBounds": {"a": ["[1, 5]"]}}}}}},
            {"$lookup": {"from": "x"}, "nReturned": 10, "totalDocsExamined": 30, "totalKeysExamined": 30,
             "indexesUsed": ["k_1"], "collectionScans": 0},
            {"$unionWith": {"coll": "y", "pipeline": [
                {"$cursor": {"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}},
                             "executionStats": {"executionStages": {"stage": "COLLSCAN", "nReturned": 4, "docsExamined": 4}}}}
            ]}, "nReturned": 14}
        ]
    };
    let nodes = explain_tree::build(&explain);
    let shape: Vec<(&str, usize)> = nodes.iter().map(|n| (n.stage.as_str(), n.depth)).collect();
    assert_eq!(
        shape,
        [
            ("$unionWith", 0),
            ("COLLSCAN", 1),
            ("$lookup", 1),
            ("FETCH", 2),
            ("IXSCAN", 3)
        ]
    );
    let marked: Vec<&str> = nodes
        .iter()
        .filter(|n| n.heaviest)
        .map(|n| n.stage.as_str())
        .collect();
    assert_eq!(marked, ["$lookup"]);
    assert_eq!(nodes[4].bounds, ["a: [1, 5]"]);
    let sum = explain_tree::summary(&nodes);
    assert_eq!((sum.keys_examined, sum.docs_examined), (40, 44));
    assert_eq!(sum.indexes, ["k_1", "a_1"]);
    assert!(sum.collscan);
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
            db: "schemalab_bucket_naive".into(),
        }));
        // An open bracket continues on the next line.
        chars(&mut app, "db.readings.find({");
        key(&mut app, KeyCode::Enter);
        chars(&mut app, "sensor_id: 'S-00001'}).count(");
        key(&mut app, KeyCode::Enter);
        chars(&mut app, ")");
        key(&mut app, KeyCode::Enter);
        app.update(Action::Task(TaskMsg::ShellOutput {
            text: "240".into(),
            error: false,
            db: "schemalab_bucket_naive".into(),
        }));
        chars(&mut app, "db.nope)");
        key(&mut app, KeyCode::Enter);
        app.update(Action::Task(TaskMsg::ShellOutput {
            text: "SyntaxError: unexpected ')' (1:8)".into(),
            error: true,
            db: "schemalab_bucket_naive".into(),
        }));
        // Tab: the next variant's database.
        key(&mut app, KeyCode::Tab);
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
    let bucket = position(&app, "bucket");
    chars(&mut app, "10");
    assert_eq!(app.outline.selected, bucket);
    let effects = key(&mut app, KeyCode::Char('r'));
    assert!(matches!(
        effects.last(),
        Some(Effect::StartRun { lesson, .. }) if *lesson == bucket
    ));
    assert_eq!(app.screen, Screen::Experiment);
    finish_run(&mut app);
    let screen = draw(&app);
    assert!(
        screen.contains("keys examined") && screen.contains("★ ×"),
        "{screen}"
    );
    assert_eq!(app.progress.mark("bucket"), Mark::Done);
}

#[test]
fn digits_jump_and_restart() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    let number = |app: &App| app.course.lessons[app.outline.selected].number.clone();
    chars(&mut app, "3");
    assert_eq!(number(&app), "3");
    chars(&mut app, "1");
    assert_eq!(
        number(&app),
        "1",
        "there is no lesson 31, so 1 starts again"
    );
    chars(&mut app, "2");
    assert_eq!(number(&app), "12", "1 then 2 is lesson 12");
    assert_eq!(app.course.lessons[app.outline.selected].id, "polymorphic");
    key(&mut app, KeyCode::Down);
    chars(&mut app, "5");
    assert_eq!(number(&app), "5");
    // Lesson 7b sits between 7 and 8: typing 7 then 8 goes to lesson 8
    // (there is no lesson 78), and 7b is one step down from 7.
    chars(&mut app, "7");
    key(&mut app, KeyCode::Down);
    assert_eq!(number(&app), "7b");
    assert_eq!(app.course.lessons[app.outline.selected].id, "working-set");
    chars(&mut app, "78");
    assert_eq!(number(&app), "8");
}

#[test]
fn search_filters_and_enter_opens() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    chars(&mut app, "/");
    assert_eq!(app.key_context(), KeyContext::Search);
    chars(&mut app, "bucket");
    // Lesson 10 by its title, and the lessons whose text mentions buckets.
    let bucket = position(&app, "bucket");
    let visible = app.visible_lessons();
    assert!(
        visible.contains(&bucket) && visible.len() > 1,
        "{visible:?}"
    );
    assert_eq!(app.outline_preview(), Some(bucket));
    let effects = key(&mut app, KeyCode::Enter);
    assert_eq!(effects, vec![Effect::SaveProgress]);
    assert_eq!(app.screen, Screen::Reader);
    assert_eq!(app.lesson, bucket);
    assert_eq!(app.outline.search, None);
    assert_eq!(app.progress.mark("bucket"), Mark::Seen);
}

#[test]
fn placeholders_show_ellipsis_then_values() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    chars(&mut app, "10");
    key(&mut app, KeyCode::Enter);
    let before = app.reader_source();
    assert!(
        before.contains("holds *press r to measure* documents"),
        "{before}"
    );
    key(&mut app, KeyCode::Char('r'));
    finish_run(&mut app);
    key(&mut app, KeyCode::Esc);
    let report = crate::support::bucket_report();
    let count = report.experiments[0].variants[0].collections[0].count;
    let after = app.reader_source();
    assert!(
        after.contains(&format!("holds **{count}** documents")),
        "{after}"
    );
}

/// Issue 13: a `{{ }}` placeholder reads the same in the TUI as in
/// `schemalab run`: the reader's prose is the course's own
/// `render_prose` over the lesson's report, and each figure it shows is
/// written as the Markdown report writes it.
#[test]
fn placeholders_read_as_schemalab_run_reports_them() {
    use schemalab::course::claims::{Expr, format_number, placeholders, render_prose};
    use schemalab::course::runner::LessonMetrics;
    use schemalab::course::{Format, render};
    let report = crate::support::bucket_report();
    let mut app = at_comparison((100, 30));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Reader);
    let prose = app.current_lesson().unwrap().prose().into_owned();
    let metrics = LessonMetrics(&report);
    assert_eq!(
        app.reader_source(),
        schemalab::course::claims::render_prose_marked(
            &prose,
            Some(&metrics),
            schemalab::tui::app::prose_mark
        )
    );
    // The same figures as `render_prose` gives the Markdown report, marked.
    assert_eq!(
        app.reader_source().replace("**", ""),
        render_prose(&prose, Some(&metrics)).replace("**", "")
    );
    let markdown = render(&report, Format::Markdown);
    let (found, errors) = placeholders(&prose);
    assert!(errors.is_empty(), "{errors:?}");
    let mut compared = 0;
    for p in found {
        let Expr::Metric(m) = &p.expr else { continue };
        if !m.to_string().ends_with(".count") {
            continue;
        }
        let value = format_number(match p.expr.eval(&metrics).unwrap() {
            schemalab::course::Val::Num(n) => n,
            other => panic!("{other:?}"),
        });
        assert!(app.reader_source().contains(&value), "{value}");
        assert!(
            markdown.contains(&format!(" {value} ")),
            "{m} = {value} not in\n{markdown}"
        );
        compared += 1;
    }
    assert!(compared >= 2, "{compared}");
}

/// The explain tree draws the explain the report's figures were read from
/// (kept by the runner), so its counters and the card beside it agree.
#[test]
fn explain_tree_shows_the_measured_explain() {
    let report = crate::support::bucket_report();
    let exp = &report.experiments[0];
    let mut app = at_comparison((100, 30));
    key(&mut app, KeyCode::Enter);
    for (side, v) in exp.variants.iter().enumerate() {
        app.explain.side = side;
        let op = v
            .operations
            .iter()
            .find(|o| o.id == "window_early")
            .unwrap();
        let m = op.read.as_ref().unwrap();
        let shown = explain_tree::selected_explain(&app).unwrap();
        assert_eq!(Some(shown), m.explain.as_ref());
        let nodes = explain_tree::build(shown);
        let keys: u64 = nodes.iter().map(|n| n.keys_examined).sum();
        let docs: u64 = nodes.iter().map(|n| n.docs_examined).sum();
        assert_eq!(
            (keys as i64, docs as i64),
            (m.keys_examined, m.docs_examined),
            "{}",
            v.id
        );
    }
}

#[test]
fn section_jumps_move_between_headings() {
    let mut app = app_with(Theme::normal(), false, (80, 24));
    chars(&mut app, "10");
    key(&mut app, KeyCode::Enter);
    let sections = app.reader.doc.sections.clone();
    assert!(sections.len() >= 2, "{sections:?}");
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
    assert!(!draw(&app).contains("Writing into buckets"));
    key(&mut app, KeyCode::Char(' '));
    assert!(app.reader_visible_len() > first);
    assert!(draw(&app).contains("Writing into buckets"));
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
        db: "schemalab_bucket_naive".into(),
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

fn classic_explain() -> bson::Document {
    bson::doc! {
        "explainVersion": "1",
        "queryPlanner": {"winningPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "sensor_id_1_ts_1", "keyPattern": {"sensor_id": 1, "ts": 1}}}},
        "executionStats": {
            "nReturned": 1440, "executionTimeMillis": 12, "totalKeysExamined": 1440, "totalDocsExamined": 1440,
            "executionStages": {"stage": "FETCH", "nReturned": 1440, "executionTimeMillisEstimate": 9, "docsExamined": 1440,
                "inputStage": {"stage": "IXSCAN", "nReturned": 1440, "executionTimeMillisEstimate": 3, "keysExamined": 1440,
                    "indexName": "sensor_id_1_ts_1", "keyPattern": {"sensor_id": 1, "ts": 1}}}
        }
    }
}

/// mongod's slot-based explain (the embedded engine answers classic only).
fn sbe_explain() -> bson::Document {
    bson::doc! {
        "explainVersion": "2",
        "queryPlanner": {"winningPlan": {"queryPlan": {"stage": "FETCH", "planNodeId": 2,
            "inputStage": {"stage": "IXSCAN", "planNodeId": 1, "indexName": "sensor_id_1_start_1", "keyPattern": {"sensor_id": 1, "start": 1}}},
            "slotBasedPlan": {"stages": "[2] nlj ..."}}},
        "executionStats": {
            "nReturned": 8, "executionTimeMillis": 0, "totalKeysExamined": 8, "totalDocsExamined": 8,
            "executionStages": {"stage": "nlj", "planNodeId": 2, "nReturned": 8, "executionTimeMillisEstimate": 0,
                "outerStage": {"stage": "ixseek", "planNodeId": 1, "nReturned": 8, "numReads": 8, "executionTimeMillisEstimate": 0},
                "innerStage": {"stage": "seek", "planNodeId": 2, "nReturned": 8, "numReads": 8, "executionTimeMillisEstimate": 0}}
        }
    }
}

#[test]
fn explain_tree_classic_and_sbe_agree_on_shape() {
    let classic = explain_tree::build(&classic_explain());
    let sbe = explain_tree::build(&sbe_explain());
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
    // Wrapping respects the width.
    let long = markdown::render(&"word ".repeat(100), 30, &Theme::normal());
    assert!(long.lines.iter().all(|l| l.width() <= 30));
}

#[test]
fn real_lessons_load_and_render_at_both_sizes() {
    let course = crate::support::course();
    assert!(course.lessons.iter().all(|l| l.problem().is_none()));
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

/// A lesson whose files do not load keeps its place in the outline, with
/// its problem; a manifest that cannot open a course says what is wrong.
#[test]
fn broken_lessons_show_their_problem_and_a_broken_manifest_stops() {
    use schemalab::locale::Lang;
    let dir = tempfile::tempdir().unwrap();
    let lessons = dir.path().join("lessons");
    std::fs::create_dir_all(lessons.join("ok")).unwrap();
    std::fs::write(
        lessons.join("manifest.toml"),
        "format_version = 1\ntitle = \"T\"\n[[lessons]]\nid = \"ok\"\ndir = \"ok\"\n[[lessons]]\nid = \"gone\"\ndir = \"gone\"\n",
    )
    .unwrap();
    std::fs::write(
        lessons.join("ok/lesson.toml"),
        "title = \"Fine\"\nsummary = \"s\"\nprose = \"lesson.md\"\n",
    )
    .unwrap();
    std::fs::write(lessons.join("ok/lesson.md"), "# Fine\n\nText.\n").unwrap();
    // A lesson file that does not parse (a missing folder is a manifest
    // problem, which stops the TUI below).
    std::fs::create_dir_all(lessons.join("gone")).unwrap();
    std::fs::write(lessons.join("gone/lesson.toml"), "title = [\n").unwrap();
    let course = schemalab::tui::load_course(dir.path(), Lang::En).unwrap();
    assert_eq!(course.lessons.len(), 2);
    assert!(course.lessons[0].problem().is_none());
    let problem = course.lessons[1].problem().unwrap().to_string();
    assert!(problem.contains("gone"), "{problem}");
    let mut app = App::new(
        course,
        Theme::normal(),
        false,
        EngineStatus {
            label: strings::EMBEDDED_ENGINE.into(),
            state: ConnState::Connected,
        },
        Scale::Default,
        Progress::default(),
    );
    app.update(Action::Resize {
        width: 100,
        height: 30,
    });
    key(&mut app, KeyCode::Down);
    let screen = draw(&app);
    assert!(screen.contains("✗  2  gone"), "{screen}");
    assert!(screen.contains("lesson.toml"), "{screen}");
    key(&mut app, KeyCode::Enter);
    assert!(app.reader_source().contains(strings::LESSON_BROKEN));

    for manifest in ["", "format_version = 1\n", "not toml ["] {
        std::fs::write(lessons.join("manifest.toml"), manifest).unwrap();
        let err = schemalab::tui::load_course(dir.path(), Lang::En).unwrap_err();
        let lines = schemalab::tui::startup_problems(dir.path(), &err);
        assert!(
            lines.iter().any(|l| l.contains("manifest.toml")),
            "{manifest:?}: {lines:?}"
        );
    }
}

/// The TUI loads its course through `Course::load` with the language it
/// is given: the Chinese edition's titles and prose, placeholders still
/// filled by the course's renderer.
#[test]
fn the_course_shows_in_the_language_given() {
    use schemalab::locale::Lang;
    use schemalab::tui::lessons::CourseState;
    let course = CourseState::load(&crate::support::root(), Lang::ZhCn).unwrap();
    let bucket = course
        .lessons
        .iter()
        .position(|l| l.id == "bucket")
        .unwrap();
    assert_eq!(course.lessons[bucket].title(), "桶模式");
    let mut app = App::new(
        course,
        Theme::normal(),
        false,
        EngineStatus {
            label: strings::EMBEDDED_ENGINE.into(),
            state: ConnState::Connected,
        },
        Scale::Default,
        Progress::default(),
    );
    app.update(Action::Resize {
        width: 100,
        height: 30,
    });
    chars(&mut app, "10r");
    finish_run(&mut app);
    key(&mut app, KeyCode::Esc);
    let source = app.reader_source();
    let count = crate::support::bucket_report().experiments[0].variants[0].collections[0].count;
    assert!(!source.contains("{{"), "{source}");
    assert!(source.contains(&count.to_string()), "{source}");
    assert!(draw(&app).contains("桶模式"));
}

/// Each run's report is merged into its lesson's report: a re-run replaces
/// the experiment it ran, other experiments stay, in the lesson's order.
#[test]
fn runs_merge_into_the_lessons_report() {
    let mut app = at_comparison((100, 30));
    let mut other = crate::support::bucket_report();
    other.experiments[0].id = "zz-other".into();
    other.experiments[0].claims.clear();
    key(&mut app, KeyCode::Char('r'));
    let id = app.run.as_ref().unwrap().id;
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Ok(Box::new(other)),
    }));
    finish_run_again(&mut app);
    let ids: Vec<&str> = app.reports["bucket"]
        .experiments
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(ids, ["readings", "zz-other"]);
    assert_eq!(app.reports["bucket"].experiments[0].claims.len(), 7);
}

fn finish_run_again(app: &mut App) {
    key(app, KeyCode::Char('r'));
    finish_run(app);
}

/// The shell pane follows the lesson's databases: its prompt names the
/// database, an open bracket continues the statement on the next line,
/// `use` moves it (the worker reports where the session is), and tab steps
/// through the experiment's variants.
#[test]
fn the_shell_pane_prompts_with_its_database_continues_lines_and_switches_variants() {
    let mut app = at_comparison((100, 30));
    key(&mut app, KeyCode::Char('s'));
    assert!(
        draw(&app).contains("schemalab_bucket_naive> "),
        "{}",
        draw(&app)
    );
    chars(&mut app, "db.readings.find({");
    assert!(
        key(&mut app, KeyCode::Enter).is_empty(),
        "an open brace ran"
    );
    assert!(draw(&app).contains("... "), "{}", draw(&app));
    chars(&mut app, "sensor_id: 1})");
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::ShellEval {
            db: "schemalab_bucket_naive".into(),
            src: "db.readings.find({\nsensor_id: 1})".into()
        }]
    );
    // After `use`, the worker says where the session is.
    app.update(Action::Task(TaskMsg::ShellOutput {
        text: "switched to db schemalab_bucket_bucket".into(),
        error: false,
        db: "schemalab_bucket_bucket".into(),
    }));
    assert_eq!(app.shell_db(), "schemalab_bucket_bucket");
    assert!(draw(&app).contains("schemalab_bucket_bucket> "));
    // Tab: bucket → naive → bucket.
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.shell_db(), "schemalab_bucket_naive");
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.shell_db(), "schemalab_bucket_bucket");
    chars(&mut app, "db.buckets.countDocuments()");
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::ShellEval {
            db: "schemalab_bucket_bucket".into(),
            src: "db.buckets.countDocuments()".into()
        }]
    );
}

/// Search covers the lessons' text, not only their titles; the preview
/// shows only a lesson the search found, with the words around the hit;
/// with no hit, Enter opens nothing.
#[test]
fn search_covers_lesson_text_and_the_preview_follows_it() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    key(&mut app, KeyCode::Char('/'));
    // "sensor-hour"-like words are in the bucket prose, not its title.
    chars(&mut app, "half-empty");
    let visible = app.visible_lessons();
    let bucket = app
        .course
        .lessons
        .iter()
        .position(|l| l.id == "bucket")
        .unwrap();
    assert_eq!(
        visible,
        vec![bucket],
        "the hit is in lesson 10's prose only"
    );
    assert_eq!(app.outline_preview(), Some(bucket));
    let screen = draw(&app);
    assert!(screen.contains("half-empty"), "{screen}");
    // Nothing found: no preview, and Enter opens nothing.
    chars(&mut app, "zzzz");
    assert!(app.visible_lessons().is_empty());
    assert_eq!(app.outline_preview(), None);
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(app.screen, Screen::Outline);
}

/// The outline counts the lessons run ("1/19 run"), shows how many claims
/// held in each lesson's last run and suggests the next lesson.
#[test]
fn the_outline_shows_runs_claims_held_and_the_next_lesson() {
    let mut app = at_comparison((100, 30));
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Outline);
    assert_eq!(app.progress.claims.get("bucket"), Some(&(7, 7)));
    let screen = draw(&app);
    assert!(screen.contains("1/19 run"), "{screen}");
    assert!(screen.contains("The bucket pattern  7/7"), "{screen}");
    assert!(
        screen.contains("next: 11 The attribute pattern"),
        "{screen}"
    );
}

/// Ends the run in progress with an error (the walk below needs no figures,
/// only the run to be over so that the next `r` starts one).
fn fail_run(app: &mut App) {
    let id = app.run.as_ref().expect("a run in progress").id;
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Err("not run in this test".into()),
    }));
}

/// The `StartRun` effect among `effects`: (lesson, experiment).
fn started(effects: &[Effect]) -> Option<(usize, usize)> {
    effects.iter().find_map(|e| match e {
        Effect::StartRun {
            lesson, experiment, ..
        } => Some((*lesson, *experiment)),
        _ => None,
    })
}

/// The instructor's blocker: `1 6 r`, `l l l` (the anti-patterns lesson's
/// fourth experiment), `esc esc`, `1 0 r` starts the bucket lesson's first
/// experiment, with its first operation selected (the experiment index
/// used to be carried over, leaving "This lesson has no experiment").
#[test]
fn a_lesson_opened_from_the_outline_starts_at_its_first_experiment() {
    let mut app = app_with(Theme::normal(), true, (100, 30));
    let anti = position(&app, "anti-patterns");
    assert_eq!(
        app.course.lessons[anti].number, "16",
        "the key sequence assumes lesson 16 is anti-patterns"
    );
    assert_eq!(app.course.lessons[anti].experiments().len(), 4);
    assert_eq!(started(&chars(&mut app, "16r")), Some((anti, 0)));
    fail_run(&mut app);
    chars(&mut app, "lll");
    assert_eq!(app.experiment.experiment, 3);
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Outline);
    let bucket = position(&app, "bucket");
    assert_eq!(started(&chars(&mut app, "10r")), Some((bucket, 0)));
    assert_eq!(app.current_lesson().unwrap().id, "bucket");
    assert!(app.current_experiment().is_some());
    assert_eq!(app.experiment.op, 0);
    assert_eq!(app.notice, None);
}

/// Every lesson's every experiment, in order, from the outline: each
/// lesson's `r` starts its own first experiment with the first operation
/// selected, and `l` reaches each of its experiments in turn, so no lesson
/// ever shows "has no experiment" or another lesson's selection.
#[test]
fn walking_every_lesson_through_every_experiment_carries_nothing_over() {
    for present in [false, true] {
        let mut app = app_with(Theme::normal(), present, (120, 36));
        let lessons = app.course.lessons.len();
        let mut walked = 0;
        for index in 0..lessons {
            let experiments = app.course.lessons[index].experiments().len();
            while app.outline.selected != index {
                key(&mut app, KeyCode::Down);
            }
            let effects = chars(&mut app, "r");
            if experiments == 0 {
                assert_eq!(started(&effects), None);
                key(&mut app, KeyCode::Esc);
                continue;
            }
            assert_eq!(started(&effects), Some((index, 0)), "lesson {index}");
            fail_run(&mut app);
            assert_eq!(app.lesson, index);
            for exp in 0..experiments {
                assert_eq!(app.experiment.experiment, exp, "lesson {index}");
                assert_eq!(app.experiment.op, 0, "lesson {index} experiment {exp}");
                let id = app.current_experiment().map(|e| e.id.get_ref().to_string());
                assert!(id.is_some(), "lesson {index} experiment {exp}");
                // Select a later operation, as a learner would, before moving on.
                if !present {
                    key(&mut app, KeyCode::Down);
                }
                walked += 1;
                if exp + 1 < experiments {
                    key(&mut app, KeyCode::Char('l'));
                }
            }
            key(&mut app, KeyCode::Esc);
            key(&mut app, KeyCode::Esc);
            assert_eq!(app.screen, Screen::Outline);
        }
        let total: usize = app
            .course
            .lessons
            .iter()
            .map(|l| l.experiments().len())
            .sum();
        assert_eq!(walked, total);
        assert!(
            total > lessons,
            "the course has lessons with several experiments"
        );
    }
}

/// `s` on the outline opens the shell in the selected lesson's database,
/// not the lesson last opened.
#[test]
fn the_shell_from_the_outline_is_the_selected_lessons() {
    let mut app = app_with(Theme::normal(), false, (100, 30));
    chars(&mut app, "10r");
    fail_run(&mut app);
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    chars(&mut app, "11");
    let selected = app.course.lessons[app.outline.selected].id.clone();
    assert_ne!(selected, "bucket");
    chars(&mut app, "s");
    assert_eq!(app.screen, Screen::Shell);
    let first = &app.course.lessons[app.outline.selected].experiments()[0].variants[0];
    let want = schemalab::course::DbNames::default().lesson(&selected, first.id.get_ref());
    assert_eq!(app.shell_db(), want);
}
