//! The workbench in Simplified Chinese: insta snapshots of the outline, the
//! reader, the comparison and the help at 80×24 and 120×36, built from the
//! real course and a real run of the bucket lesson in zh-CN; every screen's
//! lines fit the terminal and no double-width character is cut in half.

use crate::support::tui::{app_in, chars, draw_checked, key};

use ratatui::crossterm::event::KeyCode;
use schemalab::locale::{Lang, is_cjk};
use schemalab::tui::action::{Action, TaskMsg};
use schemalab::tui::app::App;
use schemalab::tui::theme::Theme;

fn app(size: (u16, u16)) -> App {
    app_in(Lang::ZhCn, Theme::normal(), false, size)
}

fn at_comparison(size: (u16, u16)) -> App {
    let mut app = app(size);
    key(&mut app, KeyCode::Char('-'));
    chars(&mut app, "10r");
    let id = app.run.as_ref().map(|r| r.id).unwrap();
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Ok(Box::new(crate::support::bucket_report_in(Lang::ZhCn))),
    }));
    app
}

/// Draw, check that nothing overflows or is cut, and return the screen.
fn draw(app: &App) -> String {
    draw_checked(app)
}

fn snap(name: &str, build: impl Fn((u16, u16)) -> App) {
    for size in [(80, 24), (120, 36)] {
        let app = build(size);
        let screen = draw(&app);
        assert!(
            screen.chars().filter(|c| is_cjk(*c)).count() > 20,
            "{name} at {size:?} is not in Chinese:\n{screen}"
        );
        insta::assert_snapshot!(format!("zh_{name}_{}x{}", size.0, size.1), screen);
    }
}

#[test]
fn outline_in_chinese() {
    snap("outline", app);
}

#[test]
fn reader_in_chinese() {
    snap("reader", |size| {
        let mut app = app(size);
        chars(&mut app, "10");
        key(&mut app, KeyCode::Enter);
        app
    });
}

#[test]
fn reader_after_a_run_in_chinese() {
    snap("reader_after_run", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Esc);
        for _ in 0..3 {
            key(&mut app, KeyCode::Char('n'));
        }
        app
    });
}

#[test]
fn comparison_in_chinese() {
    snap("comparison", at_comparison);
}

#[test]
fn claims_in_chinese() {
    snap("claims", |size| {
        let mut app = at_comparison(size);
        for _ in 0..3 {
            key(&mut app, KeyCode::Tab);
        }
        app
    });
}

#[test]
fn help_in_chinese() {
    snap("help", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Char('?'));
        app
    });
}

#[test]
fn explain_in_chinese() {
    // 80×24: one tree at a time; 120×36: the variants side by side.
    snap("explain", |size| {
        let mut app = at_comparison(size);
        key(&mut app, KeyCode::Enter);
        app
    });
}

#[test]
fn presenter_in_chinese() {
    // The comparison as an instructor projects it: labels, the slide's
    // heading, the legend and the keys in Chinese; big numbers at 120×36,
    // body-size text at 80×24; nothing wider than the terminal.
    snap("presenter", |size| {
        let app = crate::support::tui::at_lesson_in(
            Lang::ZhCn,
            schemalab::tui::theme::Theme::presenter(),
            true,
            size,
            "10",
            "bucket",
        );
        let screen = draw(&app);
        assert!(screen.contains("操作 1/7"), "{screen}");
        assert!(screen.contains('★'), "{screen}");
        assert_eq!(screen.contains('▀'), size.0 >= 100, "{screen}");
        app
    });
}
