//! The shell pane: mongosh JavaScript against the lesson's databases.
//! Output scrolls above, the input line sits at the bottom.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::tui::app::App;
use crate::tui::strings as s;

/// A statement echoed into the output: its prompt (a database's, or the
/// continuation) and the statement.
pub fn echo(text: &str) -> Option<(&str, &str)> {
    if let Some(rest) = text.strip_prefix(crate::dialect::CONTINUATION_PROMPT) {
        return Some((crate::dialect::CONTINUATION_PROMPT, rest));
    }
    let at = text.find("> ")?;
    let name = &text[..at];
    // A database name has no spaces: output that merely contains "> " is
    // not an echo.
    (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| text.split_at(at + 2))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let db = app.shell_db();
    let [out_rect, in_rect] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(3)]).areas(area);
    let rows = usize::from(out_rect.height.saturating_sub(2));
    let mut lines: Vec<Line> = Vec::new();
    if app.shell.output.is_empty() {
        lines.push(Line::from(Span::styled(s::t(s::SHELL_HINT), t.dim)));
    }
    let total = app.shell.output.len();
    let end = total.saturating_sub(app.shell.scroll.min(total));
    let start = end.saturating_sub(rows);
    for (text, error) in &app.shell.output[start..end] {
        lines.push(if *error {
            Line::from(Span::styled(text.clone(), t.bad))
        } else if let Some((prompt, stmt)) = echo(text) {
            let mut spans = vec![Span::styled(prompt.to_string(), t.accent)];
            spans.extend(app.code(stmt, "js").into_iter().flat_map(|l| l.spans));
            Line::from(spans)
        } else {
            Line::from(Span::styled(text.clone(), t.base))
        });
    }
    let title = format!(
        " {} · {} · {db} ",
        s::t(s::SHELL_TITLE),
        app.current_lesson().map_or("", |l| l.title())
    );
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(t.border)
                .title(Span::styled(title, t.title)),
        ),
        out_rect,
    );
    let prompt = if app.shell.pending.is_empty() {
        crate::dialect::prompt(&db)
    } else {
        crate::dialect::CONTINUATION_PROMPT.to_string()
    };
    let mut input = vec![
        Span::styled(prompt, t.accent),
        Span::styled(app.shell.input.clone(), t.base),
    ];
    if app.shell.busy {
        input.push(Span::styled(format!("  {}", s::t(s::SHELL_BUSY)), t.dim));
    } else {
        input.push(Span::styled("▏", t.accent));
    }
    frame.render_widget(
        Paragraph::new(Line::from(input)).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(t.border),
        ),
        in_rect,
    );
}
