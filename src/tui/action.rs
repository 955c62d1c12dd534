//! Everything that can change the TUI's state: user intents (from keys.rs
//! and the mouse), background task reports, and the effects that `update`
//! asks the event loop to perform (the only place I/O happens).

use super::model::{Report, RunProgress};

/// One state change, applied by [`super::app::App::update`].
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Quit,
    ToggleHelp,
    Back,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Left,
    Right,
    Digit(u8),
    SearchStart,
    Input(char),
    Backspace,
    Submit,
    NextSection,
    PrevSection,
    Reveal,
    Run,
    CancelRun,
    ScaleUp,
    ScaleDown,
    Results,
    NextTab,
    OpenExplain,
    ToggleRaw,
    ToggleFold,
    OpenShell,
    HistoryPrev,
    HistoryNext,
    ScrollUp,
    ScrollDown,
    Click {
        column: u16,
        row: u16,
    },
    Resize {
        width: u16,
        height: u16,
    },
    /// Animation tick while background work runs.
    Tick,
    Task(TaskMsg),
}

/// A report from background work (runner, connection, shell).
#[derive(Debug, Clone, PartialEq)]
pub enum TaskMsg {
    /// The database answered; `label` names it for the status bar.
    Connected {
        label: String,
    },
    ConnectionFailed(String),
    RunProgress {
        run_id: u64,
        progress: RunProgress,
    },
    RunFinished {
        run_id: u64,
        result: Result<Box<Report>, String>,
    },
    ShellOutput {
        text: String,
        error: bool,
    },
}

/// Work `update` wants done outside the pure state machine.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    StartRun {
        run_id: u64,
        lesson: usize,
        experiment: usize,
        scale: crate::course::Scale,
    },
    CancelRun,
    ShellEval {
        db: String,
        src: String,
    },
    SaveProgress,
}
