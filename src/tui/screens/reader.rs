//! The lesson reader: the laid-out prose (see markdown.rs), scrolled, with a
//! scrollbar and, in presenter mode, only the revealed sections.

use ratatui::Frame;
use ratatui::layout::{Margin, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, Borders, Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState,
};

use crate::tui::app::App;
use crate::tui::strings as s;

/// Where the prose goes inside the main area (borders and padding off).
pub fn text_area(main: Rect) -> Rect {
    main.inner(Margin {
        horizontal: 2,
        vertical: 1,
    })
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let title = app
        .current_lesson()
        .map(|l| format!(" {} ", l.title()))
        .unwrap_or_default();
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(title, t.title));
    // The prose's figures came from a run at another scale: said on the
    // bottom border, in full (the mark and what it means).
    if let Some(ran) = app.current_lesson().and_then(|l| app.lesson_stale(&l.id)) {
        let text = crate::tui::screens::presenter::stale_text(app, ran);
        let text =
            crate::tui::screens::experiment::cut(&text, usize::from(area.width.saturating_sub(4)));
        block = block.title_bottom(Line::from(Span::styled(format!(" {text} "), t.warn)));
    }
    frame.render_widget(block, area);
    let text = text_area(area);
    let end = app.reader_visible_len();
    let start = app.reader.scroll.min(end);
    let mut lines: Vec<Line> = app.reader.doc.lines[start..end]
        .iter()
        .take(usize::from(text.height))
        .cloned()
        .collect();
    if app.present && end < app.reader.doc.lines.len() && lines.len() < usize::from(text.height) {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            s::t(s::READER_NEXT_SECTION),
            t.dim,
        )));
    }
    frame.render_widget(Paragraph::new(lines).style(t.base), text);
    if end > usize::from(text.height) {
        let mut state =
            ScrollbarState::new(end.saturating_sub(usize::from(text.height))).position(start);
        frame.render_stateful_widget(
            Scrollbar::new(ScrollbarOrientation::VerticalRight).style(t.dim),
            area.inner(Margin {
                horizontal: 0,
                vertical: 1,
            }),
            &mut state,
        );
    }
}
