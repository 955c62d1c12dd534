//! The frame: status bar, the current screen, the footer of its keys, the
//! help overlay, or the "too small" notice. Pure: reads [`App`], draws.

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, ConnState, Screen, main_area};
use super::keys;
use super::screens;
use super::strings as s;

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

const SPINNER: [&str; 4] = ["◐", "◓", "◑", "◒"];

pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    frame.render_widget(Paragraph::new("").style(app.theme.base), area);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let y = area.height / 2;
        let msg = Paragraph::new(vec![
            Line::from(Span::styled(s::t(s::TOO_SMALL), app.theme.bad)),
            Line::from(Span::styled(
                format!("{}×{}", area.width, area.height),
                app.theme.dim,
            )),
        ])
        .alignment(Alignment::Center);
        frame.render_widget(
            msg,
            Rect::new(0, y.saturating_sub(1), area.width, 2.min(area.height)),
        );
        return;
    }
    let size = (area.width, area.height);
    status_bar(app, frame, Rect::new(0, 0, area.width, 1));
    let main = main_area(size);
    match app.screen {
        Screen::Outline => screens::outline::render(app, frame, main),
        Screen::Reader => screens::reader::render(app, frame, main),
        Screen::Experiment if app.present => screens::presenter::render(app, frame, main),
        Screen::Experiment => screens::experiment::render(app, frame, main),
        Screen::Explain => screens::explain_tree::render(app, frame, main),
        Screen::Shell => screens::shell::render(app, frame, main),
        Screen::Exercises => screens::exercises::render(app, frame, main),
    }
    footer(app, frame, Rect::new(0, area.height - 1, area.width, 1));
    if app.help {
        screens::help::render(app, frame, main);
    }
}

fn status_bar(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let (state, state_style) = match &app.engine.state {
        ConnState::Connecting => (s::t(s::CONNECTING).to_string(), t.status),
        ConnState::Connected => (s::t(s::CONNECTED).to_string(), t.status),
        ConnState::Failed(e) => (
            format!("{}: {e}", s::t(s::DISCONNECTED)),
            t.status.patch(t.bad),
        ),
    };
    let app_name = format!(" {}", s::t(s::APP));
    let title = app
        .current_lesson()
        .filter(|_| app.screen != Screen::Outline)
        .map(|l| format!(" › {}", l.title()))
        .unwrap_or_default();
    // What is going on: a run's progress, else the latest notice.
    let mut indicator = String::new();
    if let Some(run) = &app.run {
        let spin = SPINNER[(app.tick % 4) as usize];
        indicator = format!(
            "  {spin} {} {:.0}%",
            s::t(s::EXP_RUNNING),
            screens::experiment::fraction(&run.progress) * 100.0
        );
    } else if let Some(notice) = app
        .notice
        .as_ref()
        .filter(|_| app.screen != Screen::Experiment)
    {
        indicator = format!("  ⚠ {notice}");
    }
    let width = usize::from(area.width);
    let w = crate::locale::width;
    // The engine's label goes first when space is short, then the
    // lesson's title; the running indicator and the scale stay.
    let short = format!("{state} │ {} ", s::scale_label(app.scale));
    let full = format!("{} · {short}", app.engine.label);
    let right = if w(&app_name) + w(&indicator) + w(&title).min(12) + w(&full) < width {
        full
    } else {
        short
    };
    let right_w = w(&right);
    let room = width.saturating_sub(right_w + 1);
    let indicator = screens::experiment::cut(&indicator, room.saturating_sub(w(&app_name)));
    let title_room = room.saturating_sub(w(&app_name) + w(&indicator));
    let title = if w(&title) > title_room {
        let cut = screens::experiment::cut(&title, title_room.saturating_sub(1));
        if cut.is_empty() {
            cut
        } else {
            format!("{cut}…")
        }
    } else {
        title
    };
    let left = format!("{app_name}{title}{indicator}");
    let left = screens::experiment::cut(&left, room);
    let pad = width.saturating_sub(w(&left) + right_w);
    let line = Line::from(vec![
        Span::styled(left, t.status),
        Span::styled(" ".repeat(pad), t.status),
        Span::styled(right, state_style),
    ]);
    frame.render_widget(Paragraph::new(line).style(t.status), area);
}

fn footer(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let hints = keys::footer(app.key_context());
    let entry_w = |(key, label): &keys::Hint| {
        crate::locale::width(s::t(key)) + crate::locale::width(s::t(label)) + 4
    };
    // When the keys do not all fit, the last ones go first, but `? help`
    // always stays: it lists the rest.
    let mut keep: Vec<bool> = vec![true; hints.len()];
    let mut total: usize = hints.iter().map(entry_w).sum();
    for i in (0..hints.len()).rev() {
        if total <= usize::from(area.width) {
            break;
        }
        if hints[i].0 != "?" {
            keep[i] = false;
            total -= entry_w(&hints[i]);
        }
    }
    let mut spans = Vec::new();
    for ((key, label), _) in hints.iter().zip(&keep).filter(|(_, k)| **k) {
        spans.push(Span::styled(format!(" {} ", s::t(key)), t.footer_key));
        spans.push(Span::styled(format!(" {} ", s::t(label)), t.footer_label));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
