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
    let width = area.width.saturating_sub(8).min(96);
    let inner_w = usize::from(width.saturating_sub(2));
    let mut lines = Vec::new();
    for (section, hints) in keys::help(app.present) {
        lines.push(Line::from(Span::styled(section, t.heading)));
        // Pack hints into lines by hand so the popup's height is exact.
        let mut row: Vec<Span> = Vec::new();
        let mut used = 0;
        for (key, label) in hints {
            let k = Span::styled(format!(" {} ", s::t(key)), t.footer_key);
            let l = Span::styled(format!(" {}  ", s::t(label)), t.base);
            let w = k.width() + l.width();
            if used + w > inner_w && !row.is_empty() {
                lines.push(Line::from(std::mem::take(&mut row)));
                used = 0;
            }
            used += w;
            row.push(k);
            row.push(l);
        }
        lines.push(Line::from(row));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let popup = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    );
    // One column more on each side: a double-width character that starts
    // just left of the popup would otherwise cover its left border.
    let margin = Rect::new(
        popup.x.saturating_sub(1).max(area.x),
        popup.y,
        (popup.width + 2).min(
            area.right()
                .saturating_sub(popup.x.saturating_sub(1).max(area.x)),
        ),
        popup.height,
    );
    frame.render_widget(Clear, margin);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.accent)
        .title(Span::styled(format!(" {} ", s::t(s::HELP_TITLE)), t.title));
    frame.render_widget(Paragraph::new(lines).style(t.base).block(block), popup);
}
