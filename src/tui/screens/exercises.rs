//! The Exercises screen: every exercise with its status and the score
//! ("7/14"), the selected one's prompt, the file to edit, staged hints, and
//! the checklist of its last check (live while watching: the event loop
//! re-checks on save and reports here). Pure: the state is filled by
//! [`ExercisesState::load`] and by task messages; drawing only reads it.

use std::path::Path;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Margin, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::exercises::Workspace;
use crate::tui::app::{App, Screen};
use crate::tui::strings as s;

/// One exercise as the screen shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExItem {
    pub id: String,
    pub lesson: String,
    pub title: String,
    pub prompt: String,
    /// The file the learner edits.
    pub path: String,
    pub hints: Vec<String>,
    pub passed: bool,
    pub attempts: u32,
    pub hints_used: u32,
}

/// The screen's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExercisesState {
    pub items: Vec<ExItem>,
    pub selected: usize,
    /// The last checklist, by exercise id: (text, passed).
    pub results: Vec<(String, String, bool)>,
    /// The exercise being checked now.
    pub checking: Option<String>,
    /// Re-check on save.
    pub watching: bool,
    pub scroll: usize,
    pub return_to: Option<Screen>,
    /// Why the list is empty (no exercises, unreadable workspace).
    pub error: Option<String>,
}

impl ExercisesState {
    /// The course's exercises, their words in `lang`, with the progress of
    /// workspace `ws`.
    pub fn load(root: &Path, ws: &Workspace, lang: crate::locale::Lang) -> ExercisesState {
        let loaded = crate::exercises::exercises(root, lang).and_then(|all| {
            let rows = ws.rows(&all)?;
            Ok(all
                .iter()
                .zip(rows)
                .map(|(ex, row)| ExItem {
                    id: ex.id.clone(),
                    lesson: ex.lesson.clone(),
                    title: ex.spec.title.clone(),
                    prompt: ex.prompt_text().unwrap_or_default(),
                    path: ws.solution_path(&ex.id).display().to_string(),
                    hints: ex.spec.hints.clone(),
                    passed: row.progress.passed,
                    attempts: row.progress.attempts,
                    hints_used: row.progress.hints_used,
                })
                .collect::<Vec<_>>())
        });
        match loaded {
            Ok(items) => ExercisesState {
                items,
                ..ExercisesState::default()
            },
            Err(e) => ExercisesState {
                error: Some(e.to_string()),
                ..ExercisesState::default()
            },
        }
    }

    pub fn current(&self) -> Option<&ExItem> {
        self.items.get(self.selected)
    }

    /// "3/14".
    pub fn score(&self) -> String {
        format!(
            "{}/{}",
            self.items.iter().filter(|i| i.passed).count(),
            self.items.len()
        )
    }

    /// The first exercise of `lesson`, if it has one.
    pub fn first_of(&self, lesson: &str) -> Option<usize> {
        self.items.iter().position(|i| i.lesson == lesson)
    }

    /// The last checklist of exercise `id`.
    pub fn result(&self, id: &str) -> Option<(&str, bool)> {
        self.results
            .iter()
            .find(|(i, _, _)| i == id)
            .map(|(_, t, p)| (t.as_str(), *p))
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let st = &app.exercises;
    let [list_area, detail_area] =
        Layout::horizontal([Constraint::Length(30), Constraint::Min(20)]).areas(area);
    let title = format!(" {} {} ", s::t(s::EXERCISES_TITLE), st.score());
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(title, t.title));
    frame.render_widget(block, list_area);
    let inner = list_area.inner(Margin {
        horizontal: 1,
        vertical: 1,
    });
    let mut lines = Vec::new();
    if let Some(e) = &st.error {
        lines.push(Line::from(Span::styled(e.clone(), t.bad)));
    } else if st.items.is_empty() {
        lines.push(Line::from(Span::styled(s::t(s::EXERCISES_EMPTY), t.dim)));
    }
    let height = usize::from(inner.height);
    let first = st.selected.saturating_sub(height.saturating_sub(1));
    for (i, item) in st.items.iter().enumerate().skip(first).take(height) {
        let mark = if item.passed {
            s::t(s::MARK_DONE)
        } else if item.attempts > 0 {
            s::t(s::EXERCISE_TRIED)
        } else {
            s::t(s::MARK_NONE)
        };
        let style = if i == st.selected {
            t.selected
        } else if item.passed {
            t.good
        } else {
            t.base
        };
        let pointer = if i == st.selected { '›' } else { ' ' };
        let text: String = format!("{pointer}{mark} {}", item.id)
            .chars()
            .take(usize::from(inner.width))
            .collect();
        lines.push(Line::from(Span::styled(text, style)));
    }
    frame.render_widget(Paragraph::new(lines).style(t.base), inner);

    let Some(item) = st.current() else {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border);
        frame.render_widget(block, detail_area);
        return;
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(format!(" {} ", item.title), t.title));
    frame.render_widget(block, detail_area);
    let inner = detail_area.inner(Margin {
        horizontal: 2,
        vertical: 1,
    });
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!("{}: ", s::t(s::EXERCISE_EDIT)), t.dim),
            Span::styled(item.path.clone(), t.code),
        ]),
        Line::from(vec![
            Span::styled(format!("{}: ", s::t(s::EXERCISE_LESSON)), t.dim),
            Span::raw(item.lesson.clone()),
            Span::styled(
                format!(
                    "   {} {} · {} {}/{}",
                    s::t(s::EXERCISE_ATTEMPTS),
                    item.attempts,
                    s::t(s::EXERCISE_HINTS),
                    item.hints_used,
                    item.hints.len()
                ),
                t.dim,
            ),
        ]),
    ];
    let status = match (&st.checking, st.watching) {
        (Some(id), _) if *id == item.id => Some(s::t(s::EXERCISE_CHECKING)),
        (_, true) => Some(s::t(s::EXERCISE_WATCHING)),
        _ => None,
    };
    if let Some(status) = status {
        lines.push(Line::from(Span::styled(status, t.accent)));
    }
    lines.push(Line::default());
    let shown = (item.hints_used as usize).min(item.hints.len());
    for (n, h) in item.hints[..shown].iter().enumerate() {
        lines.push(Line::from(Span::styled(
            format!(
                "{} {}/{}: {h}",
                s::t(s::EXERCISE_HINT),
                n + 1,
                item.hints.len()
            ),
            t.accent,
        )));
    }
    if shown > 0 {
        lines.push(Line::default());
    }
    match st.result(&item.id) {
        Some((text, passed)) => {
            for l in text.lines() {
                let style = if l.trim_start().starts_with('✓') {
                    t.good
                } else if l.trim_start().starts_with('✗') || l.trim_start().starts_with('!') {
                    t.bad
                } else {
                    t.base
                };
                lines.push(Line::from(Span::styled(l.to_string(), style)));
            }
            if passed {
                lines.push(Line::from(Span::styled(s::t(s::EXERCISE_PASSED), t.good)));
            }
        }
        None => lines.extend(crate::tui::markdown::render(&item.prompt, inner.width, t).lines),
    }
    frame.render_widget(
        Paragraph::new(lines)
            .style(t.base)
            .wrap(Wrap { trim: false })
            .scroll((u16::try_from(st.scroll).unwrap_or(u16::MAX), 0)),
        inner,
    );
}
