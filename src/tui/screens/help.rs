//! The `?` overlay: every key, from keys.rs.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::tui::app::App;
use crate::tui::keys;
use crate::tui::strings as s;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let mut lines = Vec::new();
    for (section, hints) in keys::help() {
        lines.push(Line::from(Span::styled(section, t.heading)));
        let mut row = Vec::new();
        for (key, label) in hints {
            row.push(Span::styled(format!(" {key} "), t.footer_key));
            row.push(Span::styled(format!(" {label}  "), t.base));
        }
        lines.push(Line::from(row));
    }
    let width = area.width.saturating_sub(8).min(96);
    let height = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let popup = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.accent)
        .title(Span::styled(format!(" {} ", s::HELP_TITLE), t.title));
    frame.render_widget(
        Paragraph::new(lines)
            .style(t.base)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(block),
        popup,
    );
}
