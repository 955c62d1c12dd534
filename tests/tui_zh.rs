//! The workbench in Simplified Chinese: insta snapshots of the outline, the
//! reader, the comparison and the help at 80×24 and 120×36, built from the
//! real course and a real run of the bucket lesson in zh-CN; every screen's
//! lines fit the terminal and no double-width character is cut in half.
#![allow(clippy::unwrap_used)]

mod common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schemalab::course::Scale;
use schemalab::locale::{Lang, is_cjk};
use schemalab::tui::action::{Action, TaskMsg};
use schemalab::tui::app::{App, ConnState, EngineStatus};
use schemalab::tui::keys;
use schemalab::tui::lessons::CourseState;
use schemalab::tui::progress::Progress;
use schemalab::tui::theme::Theme;
use schemalab::tui::{strings, view};
use unicode_width::UnicodeWidthStr;

fn app(size: (u16, u16)) -> App {
    strings::set_lang(Lang::ZhCn);
    let course = CourseState::load(&common::root(), Lang::ZhCn).unwrap();
    let mut app = App::new(
        course,
        Theme::normal(),
        false,
        EngineStatus {
            label: strings::t(strings::EMBEDDED_ENGINE).into(),
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

fn key(app: &mut App, code: KeyCode) {
    if let Some(a) = keys::action_for(app.key_context(), KeyEvent::new(code, KeyModifiers::NONE)) {
        app.update(a);
    }
}

fn chars(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn at_comparison(size: (u16, u16)) -> App {
    let mut app = app(size);
    chars(&mut app, "10r");
    let id = app.run.as_ref().map(|r| r.id).unwrap();
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Ok(Box::new(common::bucket_report_in(Lang::ZhCn))),
    }));
    app
}

/// Draw, check that nothing overflows or is cut, and return the screen.
fn draw(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    terminal.draw(|f| view::render(app, f)).unwrap();
    let buffer: &Buffer = terminal.backend().buffer();
    let (w, h) = (buffer.area.width, buffer.area.height);
    for y in 0..h {
        let mut cols = 0usize;
        let mut x = 0;
        while x < w {
            let sym = buffer[(x, y)].symbol();
            let sw = sym.width();
            if sw == 2 {
                // A wide character needs its continuation cell on this line.
                assert!(x + 1 < w, "row {y}: {sym:?} cut at the right edge");
                x += 2;
            } else {
                x += 1;
            }
            cols += sw.max(1);
        }
        assert!(cols <= usize::from(w), "row {y} is {cols} columns wide");
    }
    format!("{}", terminal.backend())
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
