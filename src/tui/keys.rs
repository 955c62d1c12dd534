//! All keybindings, in one place: the key → action map per context, and the
//! hints the footer and the help overlay show (generated from the same
//! tables, so they cannot drift apart).
//!
//! From launch to the bucket lesson's comparison: `1` `0` (jump to lesson
//! 10) then `r` (run; the comparison opens when it finishes). Three keys.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::action::Action;
use super::strings as s;

/// Where keys are being typed; decides which table applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyContext {
    Outline,
    Search,
    Reader,
    Presenter,
    Experiment,
    /// The experiment in presenter mode: slides.
    PresenterComparison,
    Explain,
    Shell,
    Exercises,
    Help,
}

/// Maps a key press to an action, or `None` to ignore it.
pub fn action_for(ctx: KeyContext, key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('q')) {
        return Some(Action::Quit);
    }
    if ctx == KeyContext::Help {
        return Some(Action::ToggleHelp);
    }
    // Text entry contexts take printable characters first.
    if matches!(ctx, KeyContext::Search | KeyContext::Shell) {
        return match key.code {
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Tab if ctx == KeyContext::Shell => Some(Action::NextTab),
            KeyCode::Up if ctx == KeyContext::Shell => Some(Action::HistoryPrev),
            KeyCode::Down if ctx == KeyContext::Shell => Some(Action::HistoryNext),
            KeyCode::Up => Some(Action::Up),
            KeyCode::Down => Some(Action::Down),
            KeyCode::PageUp => Some(Action::PageUp),
            KeyCode::PageDown => Some(Action::PageDown),
            // Alt+key (or a fast Esc then key) is not text.
            KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => {
                Some(Action::Input(c))
            }
            _ => None,
        };
    }
    let common = match key.code {
        KeyCode::Char('q') => Some(Action::Quit),
        KeyCode::Char('?') | KeyCode::F(1) => Some(Action::ToggleHelp),
        KeyCode::Esc | KeyCode::Backspace => Some(Action::Back),
        KeyCode::Char('j') | KeyCode::Down => Some(Action::Down),
        KeyCode::Char('k') | KeyCode::Up => Some(Action::Up),
        KeyCode::PageDown => Some(Action::PageDown),
        KeyCode::PageUp => Some(Action::PageUp),
        KeyCode::Home | KeyCode::Char('g') => Some(Action::Top),
        KeyCode::End | KeyCode::Char('G') => Some(Action::Bottom),
        KeyCode::Char('r') => Some(Action::Run),
        KeyCode::Char('s') => Some(Action::OpenShell),
        KeyCode::Char('+') | KeyCode::Char('=') => Some(Action::ScaleUp),
        KeyCode::Char('-') => Some(Action::ScaleDown),
        _ => None,
    };
    let specific = match ctx {
        KeyContext::Outline => match key.code {
            KeyCode::Char('x') => Some(Action::OpenExercises),
            KeyCode::Enter | KeyCode::Char('l') | KeyCode::Right => Some(Action::Open),
            KeyCode::Char('/') => Some(Action::SearchStart),
            KeyCode::Char(c @ '0'..='9') => Some(Action::Digit(c as u8 - b'0')),
            _ => None,
        },
        KeyContext::Reader | KeyContext::Presenter => match key.code {
            KeyCode::Char(' ') if ctx == KeyContext::Presenter => Some(Action::Reveal),
            KeyCode::Char(' ') => Some(Action::PageDown),
            KeyCode::Char('n') | KeyCode::Char(']') | KeyCode::Tab => Some(Action::NextSection),
            KeyCode::Char('N') | KeyCode::Char('[') | KeyCode::BackTab => Some(Action::PrevSection),
            KeyCode::Char('e') | KeyCode::Enter => Some(Action::Results),
            KeyCode::Char('x') => Some(Action::OpenExercises),
            KeyCode::Char('h') | KeyCode::Left => Some(Action::Back),
            _ => None,
        },
        KeyContext::Experiment => match key.code {
            KeyCode::Tab => Some(Action::NextTab),
            KeyCode::Enter | KeyCode::Char('x') => Some(Action::OpenExplain),
            KeyCode::Char('c') => Some(Action::CancelRun),
            KeyCode::Char('f') => Some(Action::ToggleFold),
            KeyCode::Char('h') | KeyCode::Left => Some(Action::Left),
            KeyCode::Char('l') | KeyCode::Right => Some(Action::Right),
            _ => None,
        },
        KeyContext::PresenterComparison => match key.code {
            // A clicker sends PageDown/PageUp (some send space or arrows).
            KeyCode::Char(' ')
            | KeyCode::Char('n')
            | KeyCode::Char('j')
            | KeyCode::Down
            | KeyCode::PageDown => Some(Action::NextSlide),
            KeyCode::Char('N') | KeyCode::Char('k') | KeyCode::Up | KeyCode::PageUp => {
                Some(Action::PrevSlide)
            }
            KeyCode::Tab | KeyCode::BackTab => Some(Action::JumpSlides),
            KeyCode::Enter | KeyCode::Char('x') => Some(Action::OpenExplain),
            KeyCode::Char('c') => Some(Action::CancelRun),
            KeyCode::Char('h') | KeyCode::Left => Some(Action::Left),
            KeyCode::Char('l') | KeyCode::Right => Some(Action::Right),
            _ => None,
        },
        KeyContext::Exercises => match key.code {
            KeyCode::Enter | KeyCode::Char('c') => Some(Action::Check),
            KeyCode::Char('w') => Some(Action::ToggleWatch),
            KeyCode::Char('h') => Some(Action::Hint),
            _ => None,
        },
        KeyContext::Explain => match key.code {
            KeyCode::Char('t') | KeyCode::Char('J') => Some(Action::ToggleRaw),
            KeyCode::Char('n') | KeyCode::Char(']') | KeyCode::Tab => Some(Action::NextSection),
            KeyCode::Char('N') | KeyCode::Char('[') | KeyCode::BackTab => Some(Action::PrevSection),
            KeyCode::Char('h') | KeyCode::Left => Some(Action::Left),
            KeyCode::Char('l') | KeyCode::Right => Some(Action::Right),
            _ => None,
        },
        _ => None,
    };
    specific.or(common)
}

/// One footer/help entry: the key as shown and what it does (English: the
/// screens show it through `strings::t`).
pub type Hint = (&'static str, &'static str);

/// The footer for a context: the keys that matter most there.
pub fn footer(ctx: KeyContext) -> &'static [Hint] {
    match ctx {
        KeyContext::Outline => &[
            ("0-9", s::K_JUMP),
            ("⏎", s::K_OPEN),
            ("r", s::K_RUN),
            ("/", s::K_SEARCH),
            ("s", s::K_SHELL),
            ("?", s::K_HELP),
            ("q", s::K_QUIT),
        ],
        KeyContext::Search => &[("⏎", s::K_OPEN), ("esc", s::K_CLEAR), ("↑↓", s::K_MOVE)],
        KeyContext::Reader => &[
            ("j/k", s::K_SCROLL),
            ("n/N", s::K_SECTION),
            ("r", s::K_RUN),
            ("e", s::K_RESULTS),
            ("s", s::K_SHELL),
            ("esc", s::K_BACK),
            ("?", s::K_HELP),
        ],
        KeyContext::Presenter => &[
            ("space", s::K_REVEAL),
            ("r", s::K_RUN),
            ("n/N", s::K_SECTION),
            ("esc", s::K_BACK),
            ("?", s::K_HELP),
        ],
        KeyContext::Experiment => &[
            ("j/k", s::K_MOVE),
            ("tab", s::K_TAB),
            ("⏎", s::K_EXPLAIN),
            ("r", s::K_RUN),
            ("c", s::K_CANCEL),
            ("+/-", s::K_SCALE),
            ("esc", s::K_BACK),
            ("?", s::K_HELP),
        ],
        KeyContext::PresenterComparison => &[
            ("space/n", s::K_NEXT),
            ("N", s::K_PREVIOUS),
            ("tab", s::K_CLAIMS),
            ("h/l", s::K_EXPERIMENT),
            ("r", s::K_RUN),
            ("+/-", s::K_SCALE),
            ("esc", s::K_BACK),
            ("?", s::K_HELP),
        ],
        KeyContext::Explain => &[
            ("j/k", s::K_MOVE),
            ("h/l", s::K_VARIANT_FOCUS),
            ("n/N", s::K_OPERATION),
            ("t", s::K_RAW),
            ("esc", s::K_BACK),
            ("?", s::K_HELP),
        ],
        KeyContext::Shell => &[
            ("⏎", s::K_SEND),
            ("↑↓", s::K_HISTORY),
            ("tab", s::K_VARIANT),
            ("esc", s::K_BACK),
        ],
        KeyContext::Exercises => &[
            ("j/k", s::K_MOVE),
            ("⏎/c", s::K_CHECK),
            ("w", s::K_WATCH),
            ("h", s::K_HINT),
            ("esc", s::K_BACK),
            ("?", s::K_HELP),
        ],
        KeyContext::Help => &[("any key", s::K_BACK)],
    }
}

/// The full list for the help overlay, grouped by context; in presenter
/// mode (`present`) the reader's and the experiment's keys are the
/// presenter's.
pub fn help(present: bool) -> Vec<(&'static str, Vec<Hint>)> {
    let reading = if present {
        (
            s::t(s::PRESENTER_TITLE),
            [footer(KeyContext::Presenter), &[("x", s::K_EXERCISES)]].concat(),
        )
    } else {
        (
            s::t("Reader"),
            [footer(KeyContext::Reader), &[("x", s::K_EXERCISES)]].concat(),
        )
    };
    let comparing = if present {
        (
            s::t("Experiment"),
            [
                footer(KeyContext::PresenterComparison),
                &[("⏎", s::K_EXPLAIN), ("c", s::K_CANCEL)],
            ]
            .concat(),
        )
    } else {
        (
            s::t("Experiment"),
            [
                footer(KeyContext::Experiment),
                &[("f", s::K_FOLD), ("h/l", s::K_EXPERIMENT)],
            ]
            .concat(),
        )
    };
    vec![
        (s::t(s::OUTLINE_TITLE), footer(KeyContext::Outline).to_vec()),
        reading,
        comparing,
        (s::t(s::EXPLAIN_TITLE), footer(KeyContext::Explain).to_vec()),
        (s::t(s::SHELL_TITLE), footer(KeyContext::Shell).to_vec()),
        (
            s::t(s::EXERCISES_TITLE),
            footer(KeyContext::Exercises).to_vec(),
        ),
        (
            s::t("Everywhere"),
            vec![
                ("q / ctrl-c", s::K_QUIT),
                ("?", s::K_HELP),
                ("wheel", s::K_SCROLL),
            ],
        ),
    ]
}
