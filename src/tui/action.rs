//! Everything that can change the TUI's state: user intents (from keys.rs
//! and the mouse), background task reports, and the effects that `update`
//! asks the event loop to perform (the only place I/O happens).

use crate::course::{LessonReport, Progress};

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
    /// Presenter view: the next slide (operation, sizes, claim).
    NextSlide,
    /// Presenter view: the previous slide.
    PrevSlide,
    /// Presenter view: from the operations to the claims and back.
    JumpSlides,
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
    /// The Exercises screen (from a lesson: its exercises).
    OpenExercises,
    /// Reveal the selected exercise's next hint.
    Hint,
    /// Check the selected exercise.
    Check,
    /// Re-check on save, on or off.
    ToggleWatch,
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
    /// A step of a run, as the course runner reports it.
    RunProgress {
        run_id: u64,
        progress: Progress,
    },
    /// A run ended: the course's report of the experiment that ran (its
    /// lesson with that one experiment), or why it did not.
    RunFinished {
        run_id: u64,
        result: Result<Box<LessonReport>, String>,
    },
    ShellOutput {
        text: String,
        error: bool,
        /// The session's database after the statement (`use` changes it).
        db: String,
    },
    /// A check finished: its printed checklist.
    CheckFinished {
        id: String,
        text: String,
        passed: bool,
    },
    /// A file of this exercise's workspace folder was saved.
    ExerciseChanged(String),
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
    /// Check an exercise of the workspace in the background.
    CheckExercise {
        id: String,
    },
    /// Start or stop watching the workspace.
    WatchExercises(bool),
    /// Record that a hint of an exercise was revealed.
    RecordHint {
        id: String,
    },
}
