//! The course outline: numbered lessons with progress marks, a search
//! filter, and the selected lesson's summary and experiments.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, List, ListItem, ListState, Paragraph, Wrap};

use crate::tui::app::App;
use crate::tui::progress::Mark;
use crate::tui::strings as s;

/// The lesson list's area inside the main area.
pub fn list_area(main: Rect) -> Rect {
    let [list, _] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(main);
    list
}

fn offset(app: &App, list: Rect) -> usize {
    let rows = usize::from(list.height.saturating_sub(2)).max(1);
    let pos = app
        .visible_lessons()
        .iter()
        .position(|&i| i == app.outline.selected)
        .unwrap_or(0);
    pos.saturating_sub(rows - 1)
}

/// The lesson index under a mouse click, if any.
pub fn row_at(app: &App, list: Rect, column: u16, row: u16) -> Option<usize> {
    let inner = Rect::new(
        list.x + 1,
        list.y + 1,
        list.width.saturating_sub(2),
        list.height.saturating_sub(2),
    );
    if column < inner.x || column >= inner.right() || row < inner.y || row >= inner.bottom() {
        return None;
    }
    let idx = offset(app, list) + usize::from(row - inner.y);
    app.visible_lessons().get(idx).copied()
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let list_rect = list_area(area);
    let detail_rect = Rect::new(
        list_rect.right(),
        area.y,
        area.width - list_rect.width,
        area.height,
    );
    let visible = app.visible_lessons();
    let items: Vec<ListItem> = visible
        .iter()
        .map(|&i| {
            let lesson = &app.course.lessons[i];
            let (mark, style) = match app.progress.mark(&lesson.id) {
                _ if lesson.problem().is_some() => (s::t(s::MARK_BROKEN), t.bad),
                Mark::Done => (s::t(s::MARK_DONE), t.good),
                Mark::Seen => (s::t(s::MARK_SEEN), t.accent),
                Mark::None => (s::t(s::MARK_NONE), t.dim),
            };
            let mut spans = vec![
                Span::styled(format!("{mark} "), style),
                Span::styled(format!("{:>2}  ", lesson.number), t.dim),
                Span::styled(lesson.title().to_string(), t.base),
            ];
            // How many claims held in its last run: "4/4".
            if let Some((held, total)) = app.progress.claims.get(&lesson.id) {
                spans.push(Span::styled(
                    format!("  {held}/{total}"),
                    if held == total { t.good } else { t.bad },
                ));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let run = app
        .course
        .lessons
        .iter()
        .filter(|l| app.progress.done.contains(&l.id))
        .count();
    let count = format!(
        " {} ",
        s::lang().f(
            "{done}/{all} run",
            &[("done", &run), ("all", &app.course.lessons.len())]
        )
    );
    let room = usize::from(list_rect.width)
        .saturating_sub(crate::locale::width(&count) + 4)
        .max(1);
    let title = match &app.outline.search {
        Some(q) => format!(" {}{q}▏ ", s::t(s::SEARCH_PROMPT)),
        None => {
            let name = if app.course.title().is_empty() {
                s::t(s::OUTLINE_TITLE)
            } else {
                app.course.title()
            };
            let name = if crate::locale::width(name) > room {
                format!("{}…", crate::locale::fit(name, room - 1).trim_end())
            } else {
                name.to_string()
            };
            format!(" {name} ")
        }
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(title, t.title))
        .title_top(Line::from(Span::styled(count, t.dim)).right_aligned());
    if items.is_empty() {
        frame.render_widget(
            Paragraph::new(s::t(s::OUTLINE_EMPTY))
                .style(t.dim)
                .block(block),
            list_rect,
        );
    } else {
        let list = List::new(items)
            .block(block)
            .highlight_style(t.selected)
            .highlight_symbol("▸");
        let mut state = ListState::default()
            .with_offset(offset(app, list_rect))
            .with_selected(visible.iter().position(|&i| i == app.outline.selected));
        frame.render_stateful_widget(list, list_rect, &mut state);
    }

    let mut lines = Vec::new();
    let preview = app.outline_preview();
    if let Some(lesson) = preview.and_then(|i| app.course.lessons.get(i)) {
        lines.push(Line::from(Span::styled(
            lesson.title().to_string(),
            t.heading,
        )));
        if let Some(q) = app.outline.search.as_deref().filter(|q| !q.is_empty())
            && let Some(hit) = crate::tui::app::search_hit(lesson, &q.to_lowercase())
            && !hit.is_empty()
        {
            lines.push(Line::from(Span::styled(hit, t.accent)));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            lesson.summary().into_owned(),
            if lesson.problem().is_some() {
                t.bad
            } else {
                t.base
            },
        )));
        lines.push(Line::default());
        for exp in lesson.experiments() {
            lines.push(Line::from(vec![
                Span::styled("▶ ", t.accent),
                Span::styled(exp.title.clone(), t.strong),
            ]));
            for v in &exp.variants {
                lines.push(Line::from(vec![
                    Span::styled(format!("   {:<10} ", v.id.get_ref()), t.accent),
                    Span::styled(v.title.clone(), t.dim),
                ]));
            }
            let done = app
                .experiment_report(&lesson.id, exp.id.get_ref())
                .is_some();
            if done {
                lines.push(Line::from(Span::styled(
                    format!("   {}", s::t(s::MARK_DONE)),
                    t.good,
                )));
            }
        }
        if lesson.experiments().is_empty() && lesson.problem().is_none() {
            lines.push(Line::from(Span::styled(s::t(s::NO_EXPERIMENT), t.dim)));
        }
    }
    lines.push(Line::default());
    let order: Vec<String> = app.course.lessons.iter().map(|l| l.id.clone()).collect();
    if let Some(next) = app.progress.next(&order)
        && let Some(i) = order.iter().position(|x| x == next)
    {
        lines.push(Line::from(Span::styled(
            s::lang().f(
                "next: {n} {title}",
                &[
                    ("n", &app.course.lessons[i].number),
                    ("title", &app.course.lessons[i].title()),
                ],
            ),
            t.accent,
        )));
    }
    lines.push(Line::from(Span::styled(s::t(s::OUTLINE_HINT), t.dim)));
    // What the marks beside the lessons mean.
    lines.push(Line::from(Span::styled(s::t(s::OUTLINE_LEGEND), t.dim)));
    let detail = Paragraph::new(lines).wrap(Wrap { trim: false }).block(
        Block::default()
            .borders(Borders::ALL)
            .border_style(t.border),
    );
    frame.render_widget(detail, detail_rect);
}
