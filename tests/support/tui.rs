//! Helpers the TUI tests share (`tests/tui.rs`, `tests/tui_zh.rs`,
//! `tests/tui_presenter.rs`): an [`App`] over the real course in a given
//! language, keys fed through the real key map, a finished run holding a
//! real report, and drawing into a `TestBackend` with the checks every
//! screen must pass (no line wider than the terminal, no double-width
//! character cut at the right edge).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schemalab::course::{LessonReport, Scale};
use schemalab::locale::Lang;
use schemalab::tui::action::{Action, Effect, TaskMsg};
use schemalab::tui::app::{App, ConnState, EngineStatus};
use schemalab::tui::keys;
use schemalab::tui::lessons::CourseState;
use schemalab::tui::progress::Progress;
use schemalab::tui::theme::Theme;
use schemalab::tui::{strings, view};
use unicode_width::UnicodeWidthStr;

/// The real course in `lang`, the interface in `lang` on this thread, at
/// the default scale, resized to `size`.
pub fn app_in(lang: Lang, theme: Theme, present: bool, size: (u16, u16)) -> App {
    strings::set_lang(lang);
    let course = CourseState::load(&super::root(), lang).unwrap();
    let mut app = App::new(
        course,
        theme,
        present,
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

/// [`app_in`] in English.
pub fn app_with(theme: Theme, present: bool, size: (u16, u16)) -> App {
    app_in(Lang::En, theme, present, size)
}

/// One key press through the key map of the app's current context.
pub fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    let action = keys::action_for(app.key_context(), KeyEvent::new(code, KeyModifiers::NONE));
    action.map(|a| app.update(a)).unwrap_or_default()
}

/// Each character of `s` as a key press.
pub fn chars(app: &mut App, s: &str) -> Vec<Effect> {
    s.chars().flat_map(|c| key(app, KeyCode::Char(c))).collect()
}

/// Ends the run in progress with `report` (a real run's report).
pub fn finish_with(app: &mut App, report: LessonReport) {
    let id = match &app.run {
        Some(r) => r.id,
        None => panic!("no run in progress"),
    };
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Ok(Box::new(report)),
    }));
}

/// Lesson `number` (typed in the outline) run to completion with the
/// report of a real tiny run of lesson `id`.
pub fn at_lesson_in(
    lang: Lang,
    theme: Theme,
    present: bool,
    size: (u16, u16),
    number: &str,
    id: &str,
) -> App {
    let mut app = app_in(lang, theme, present, size);
    // The reports are tiny runs: run at the scale they were measured at.
    key(&mut app, KeyCode::Char('-'));
    chars(&mut app, number);
    chars(&mut app, "r");
    let report = if lang == Lang::En {
        super::lesson_report(id)
    } else {
        assert_eq!(id, "bucket", "only the bucket lesson is run in {lang:?}");
        super::bucket_report_in(lang)
    };
    finish_with(&mut app, report);
    app
}

/// The screen as text.
pub fn draw(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    terminal.draw(|f| view::render(app, f)).unwrap();
    format!("{}", terminal.backend())
}

/// The screen as text, after checking that no row is wider than the
/// terminal and no double-width character is cut at the right edge.
pub fn draw_checked(app: &App) -> String {
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

/// The drawn buffer (for tests that look at where something is).
pub fn buffer(app: &App) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    terminal.draw(|f| view::render(app, f)).unwrap();
    terminal.backend().buffer().clone()
}

/// Row `y` of `buf` as text (wide characters once).
pub fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

/// Where lesson `id` sits in the outline (0-based): tests name lessons by
/// id, so a lesson placed between two others moves no test.
pub fn position(app: &App, id: &str) -> usize {
    app.course
        .lessons
        .iter()
        .position(|l| l.id == id)
        .unwrap_or_else(|| panic!("no lesson {id} in the outline"))
}
