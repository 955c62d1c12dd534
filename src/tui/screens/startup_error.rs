//! The screen shown instead of the course when the course cannot be read
//! (an empty or broken `lessons/manifest.toml`, a missing folder): what is
//! wrong, in `lint`'s own `file:line:col: message` lines, and how to leave.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::tui::strings as s;

/// Draw the problems (one per line) across the whole frame.
pub fn render(frame: &mut Frame, problems: &[String]) {
    let area = frame.area();
    let [body, footer] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let mut lines = vec![Line::from(s::t(s::STARTUP_ERROR_LEAD)), Line::from("")];
    lines.extend(problems.iter().map(|p| Line::from(p.as_str())));
    lines.push(Line::from(""));
    lines.push(Line::from(s::t(s::STARTUP_ERROR_HINT)));
    let block = Block::default()
        .borders(Borders::ALL)
        .title(s::t(s::STARTUP_ERROR_TITLE))
        .title_style(Style::default().add_modifier(Modifier::BOLD));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        body,
    );
    frame.render_widget(Paragraph::new(s::t(s::STARTUP_ERROR_KEYS)), footer);
}
