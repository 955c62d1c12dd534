//! The TUI's state and its one state machine, [`App::update`]: an action in,
//! state changed, effects out. No I/O happens here (effects are performed by
//! the event loop in `tui.rs`), so every behaviour is testable by feeding
//! actions and reading state.

use std::collections::HashMap;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::course::claims::MetricSource;
use crate::course::runner::LessonMetrics;
use crate::course::{Experiment, ExperimentReport, LessonReport, Scale};

use super::action::{Action, Effect, TaskMsg};
use super::highlight;
use super::keys::KeyContext;
use super::lessons::{CourseState, LessonSlot};
use super::markdown::{self, Doc};
use super::progress::Progress;
use super::screens;
use super::strings as s;
use super::theme::Theme;

/// The screen in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Outline,
    Reader,
    Experiment,
    Explain,
    Shell,
    Exercises,
}

/// Tabs of the experiment view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpTab {
    Operations,
    Collections,
    Samples,
    Claims,
}

impl ExpTab {
    pub const ALL: [ExpTab; 4] = [
        ExpTab::Operations,
        ExpTab::Collections,
        ExpTab::Samples,
        ExpTab::Claims,
    ];

    pub fn label(self) -> &'static str {
        match self {
            ExpTab::Operations => s::t(s::TAB_OPERATIONS),
            ExpTab::Collections => s::t(s::TAB_COLLECTIONS),
            ExpTab::Samples => s::t(s::TAB_SAMPLES),
            ExpTab::Claims => s::t(s::TAB_CLAIMS),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConnState {
    Connecting,
    Connected,
    Failed(String),
}

/// What the status bar says about the database.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineStatus {
    pub label: String,
    pub state: ConnState,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunState {
    pub id: u64,
    pub lesson: usize,
    pub experiment: usize,
    /// The runner's last step report.
    pub progress: crate::course::Progress,
    pub cancelling: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutlineState {
    pub selected: usize,
    /// `Some` while searching (the query typed so far).
    pub search: Option<String>,
    /// Digits typed so far for a lesson-number jump.
    pub digits: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReaderState {
    pub scroll: usize,
    /// Presenter mode: how many `##` sections are revealed.
    pub revealed: usize,
    pub doc: Doc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentState {
    pub experiment: usize,
    pub op: usize,
    pub tab: ExpTab,
    pub folded: bool,
    pub scroll: usize,
    /// Presenter mode: the slide on screen (see `screens::presenter`).
    pub slide: usize,
}

impl Default for ExperimentState {
    /// A lesson's first experiment, its first operation, folded.
    fn default() -> Self {
        ExperimentState {
            experiment: 0,
            op: 0,
            tab: ExpTab::Operations,
            folded: true,
            scroll: 0,
            slide: 0,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExplainState {
    pub side: usize,
    pub node: usize,
    pub raw: bool,
    pub scroll: usize,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShellState {
    pub input: String,
    /// The database statements run in: `None` until chosen, then the one
    /// the last statement left (after `use`) or the variant picked with tab.
    pub db: Option<String>,
    /// Lines of a statement still open (an unclosed bracket, comment or
    /// template): the next Enter continues it, as in the command-line shell.
    pub pending: Vec<String>,
    pub history: Vec<String>,
    pub history_pos: Option<usize>,
    /// (text, is_error)
    pub output: Vec<(String, bool)>,
    /// Lines scrolled up from the bottom.
    pub scroll: usize,
    pub busy: bool,
    pub return_to: Option<Screen>,
}

/// The widest the reader lays prose out, in columns.
pub const READER_MAX_WIDTH: u16 = 100;

/// Dataset scales the runner can be asked for.
pub const SCALES: [Scale; 3] = [Scale::Tiny, Scale::Default, Scale::Large];

#[derive(Debug, Clone)]
pub struct App {
    /// The course's own types: every manifest entry, loaded or with the
    /// error that stopped it.
    pub course: CourseState,
    /// How the course's databases are named (what the shell pane opens).
    pub names: crate::course::DbNames,
    pub theme: Theme,
    pub present: bool,
    pub size: (u16, u16),
    pub screen: Screen,
    pub help: bool,
    pub engine: EngineStatus,
    pub progress: Progress,
    pub lesson: usize,
    pub outline: OutlineState,
    pub reader: ReaderState,
    pub experiment: ExperimentState,
    pub explain: ExplainState,
    pub shell: ShellState,
    /// The Exercises screen (filled by the event loop at start).
    pub exercises: screens::exercises::ExercisesState,
    pub run: Option<RunState>,
    /// The course runner's reports per lesson id: each experiment's last
    /// run, merged into one report of the lesson (what its prose
    /// placeholders read, as `schemalab run` would report it).
    pub reports: HashMap<String, LessonReport>,
    /// The scale each (lesson id, experiment id) was last measured at: a
    /// figure measured at another scale than [`App::scale`] is stale.
    pub measured_at: HashMap<(String, String), Scale>,
    /// A message for the status line (failed run, save error).
    pub notice: Option<String>,
    pub scale: Scale,
    pub tick: u64,
    pub should_quit: bool,
    /// Highlighted code by (language, text), filled by `update` so that
    /// rendering never runs the (slow) syntax parser.
    pub code_cache: HashMap<(String, String), Vec<Line<'static>>>,
    next_run_id: u64,
}

impl App {
    pub fn new(
        course: CourseState,
        theme: Theme,
        present: bool,
        engine: EngineStatus,
        scale: Scale,
        progress: Progress,
    ) -> App {
        let lesson = progress
            .last
            .as_ref()
            .and_then(|id| course.lessons.iter().position(|l| &l.id == id))
            .unwrap_or(0);
        App {
            course,
            names: crate::course::DbNames::default(),
            theme,
            present,
            size: (100, 30),
            screen: Screen::Outline,
            help: false,
            engine,
            progress,
            lesson,
            outline: OutlineState {
                selected: lesson,
                ..OutlineState::default()
            },
            reader: ReaderState {
                revealed: 1,
                ..ReaderState::default()
            },
            experiment: ExperimentState::default(),
            explain: ExplainState::default(),
            shell: ShellState::default(),
            exercises: screens::exercises::ExercisesState::default(),
            run: None,
            reports: HashMap::new(),
            measured_at: HashMap::new(),
            notice: None,
            scale,
            tick: 0,
            should_quit: false,
            code_cache: HashMap::new(),
            next_run_id: 0,
        }
    }

    /// Which key table applies now.
    pub fn key_context(&self) -> KeyContext {
        if self.help {
            return KeyContext::Help;
        }
        match self.screen {
            Screen::Outline if self.outline.search.is_some() => KeyContext::Search,
            Screen::Outline => KeyContext::Outline,
            Screen::Reader if self.present => KeyContext::Presenter,
            Screen::Reader => KeyContext::Reader,
            Screen::Experiment if self.present => KeyContext::PresenterComparison,
            Screen::Experiment => KeyContext::Experiment,
            Screen::Explain => KeyContext::Explain,
            Screen::Shell => KeyContext::Shell,
            Screen::Exercises => KeyContext::Exercises,
        }
    }

    /// Whether something runs in the background (the loop then ticks).
    pub fn busy(&self) -> bool {
        self.run.is_some() || self.shell.busy || self.exercises.checking.is_some()
    }

    pub fn current_lesson(&self) -> Option<&LessonSlot> {
        self.course.lessons.get(self.lesson)
    }

    pub fn current_experiment(&self) -> Option<&Experiment> {
        self.current_lesson()?
            .experiments()
            .get(self.experiment.experiment)
    }

    /// The report of the experiment on screen, if it ran.
    pub fn current_report(&self) -> Option<&ExperimentReport> {
        let lesson = self.current_lesson()?;
        let exp = self.current_experiment()?;
        self.experiment_report(&lesson.id, exp.id.get_ref())
    }

    /// The last report of experiment `exp` of lesson `lesson`, if it ran.
    pub fn experiment_report(&self, lesson: &str, exp: &str) -> Option<&ExperimentReport> {
        self.reports
            .get(lesson)?
            .experiments
            .iter()
            .find(|e| e.id == exp)
    }

    /// The scale experiment `exp` of lesson `lesson` was last measured at.
    pub fn ran_at(&self, lesson: &str, exp: &str) -> Option<Scale> {
        self.measured_at
            .get(&(lesson.to_string(), exp.to_string()))
            .copied()
    }

    /// `Some(scale it ran at)` when the experiment's figures were measured
    /// at another scale than the one now chosen (until it runs again).
    pub fn stale(&self, lesson: &str, exp: &str) -> Option<Scale> {
        self.ran_at(lesson, exp).filter(|s| *s != self.scale)
    }

    /// Whether any of the lesson's figures is stale (the reader's prose
    /// reads them all): the first stale experiment's scale.
    pub fn lesson_stale(&self, lesson: &str) -> Option<Scale> {
        self.reports
            .get(lesson)
            .and_then(|r| r.experiments.iter().find_map(|e| self.stale(lesson, &e.id)))
    }

    /// The current lesson's prose with every `{{ }}` filled by the course's
    /// own prose renderer from this lesson's runs (`…` before a run): the
    /// same evaluator and number formatting as `schemalab run`.
    pub fn reader_source(&self) -> String {
        let Some(lesson) = self.current_lesson() else {
            return String::new();
        };
        let metrics = self.reports.get(&lesson.id).map(LessonMetrics);
        crate::course::claims::render_prose_marked(
            &lesson.prose(),
            metrics.as_ref().map(|m| m as &dyn MetricSource),
            prose_mark,
        )
    }

    /// Lessons shown in the outline (all, or those matching the search).
    pub fn visible_lessons(&self) -> Vec<usize> {
        let query = self.outline.search.as_deref().unwrap_or("").to_lowercase();
        self.course
            .lessons
            .iter()
            .enumerate()
            .filter(|(_, l)| query.is_empty() || search_hit(l, &query).is_some())
            .map(|(i, _)| i)
            .collect()
    }

    /// The lesson the outline's preview shows: the selected one when the
    /// search kept it, else the first the search found (never one it did
    /// not find).
    pub fn outline_preview(&self) -> Option<usize> {
        let visible = self.visible_lessons();
        if visible.contains(&self.outline.selected) {
            Some(self.outline.selected)
        } else {
            visible.first().copied()
        }
    }

    /// Lines the reader shows (presenter mode hides unrevealed sections).
    pub fn reader_visible_len(&self) -> usize {
        let doc = &self.reader.doc;
        if self.present {
            doc.sections
                .get(self.reader.revealed)
                .copied()
                .unwrap_or(doc.lines.len())
        } else {
            doc.lines.len()
        }
    }

    /// Re-lays out the lesson prose for the current width and report.
    pub fn relayout(&mut self) {
        let area = screens::reader::text_area(main_area(self.size));
        if self.current_lesson().is_none() {
            self.reader.doc = Doc::default();
            return;
        }
        let prose = self.reader_source();
        // Prose is capped at a readable measure, however wide the terminal.
        let width = area.width.min(READER_MAX_WIDTH);
        self.reader.doc = markdown::render(&prose, width, &self.theme);
        self.clamp_reader();
    }

    fn reader_height(&self) -> usize {
        usize::from(screens::reader::text_area(main_area(self.size)).height)
    }

    fn clamp_reader(&mut self) {
        let max = self
            .reader_visible_len()
            .saturating_sub(self.reader_height());
        self.reader.scroll = self.reader.scroll.min(max);
    }

    /// Make lesson `index` the current one. Everything the experiment
    /// screen selected belongs to the lesson it was selected in, so moving
    /// to another lesson starts it over at its first experiment and
    /// operation (the one place `lesson` changes: setting it anywhere else
    /// would carry the previous lesson's experiment index over).
    fn select_lesson(&mut self, index: usize) {
        if self.lesson != index {
            self.experiment = ExperimentState::default();
            self.explain = ExplainState::default();
        }
        self.lesson = index;
    }

    fn open_lesson(&mut self, index: usize) -> Vec<Effect> {
        if index >= self.course.lessons.len() {
            return Vec::new();
        }
        self.select_lesson(index);
        self.screen = Screen::Reader;
        self.reader.scroll = 0;
        self.reader.revealed = 1;
        self.relayout();
        let id = self.course.lessons[index].id.clone();
        self.progress.see(&id);
        vec![Effect::SaveProgress]
    }

    fn start_run(&mut self) -> Vec<Effect> {
        if self.run.is_some() {
            return Vec::new();
        }
        if self.current_experiment().is_none() {
            self.notice = Some(s::t(s::NO_EXPERIMENT).to_string());
            return Vec::new();
        }
        self.next_run_id += 1;
        self.notice = None;
        let run = RunState {
            id: self.next_run_id,
            lesson: self.lesson,
            experiment: self.experiment.experiment,
            progress: crate::course::Progress {
                experiment: String::new(),
                variant: String::new(),
                step: String::new(),
                done: 0,
                total: 0,
            },
            cancelling: false,
        };
        let effect = Effect::StartRun {
            run_id: run.id,
            lesson: run.lesson,
            experiment: run.experiment,
            scale: self.scale,
        };
        self.run = Some(run);
        self.screen = Screen::Experiment;
        self.experiment.tab = ExpTab::Operations;
        vec![effect]
    }

    /// The database the shell runs in: the one it is in, else the current
    /// experiment's first variant.
    pub fn shell_db(&self) -> String {
        match &self.shell.db {
            Some(db) => db.clone(),
            None => self.default_shell_db(),
        }
    }

    /// The databases of the current experiment's variants, in order.
    pub fn variant_dbs(&self) -> Vec<String> {
        match (self.current_lesson(), self.current_experiment()) {
            (Some(l), Some(e)) => e
                .variants
                .iter()
                .map(|v| self.names.lesson(&l.id, v.id.get_ref()))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn default_shell_db(&self) -> String {
        match (self.current_lesson(), self.current_experiment()) {
            (Some(l), Some(e)) => match e.variants.first() {
                Some(v) => self.names.lesson(&l.id, v.id.get_ref()),
                None => "test".into(),
            },
            _ => "test".into(),
        }
    }

    fn op_count(&self) -> usize {
        self.current_experiment().map_or(0, |e| e.operations.len())
    }

    /// Entries of the workload list: the operations, then the summary of
    /// the whole experiment.
    pub fn workload_items(&self) -> usize {
        self.current_experiment()
            .map_or(0, |e| e.operations.len() + 1)
    }

    /// Whether the current experiment's report has sizes modelled by the
    /// embedded engine (labelled so), as `schemalab run` says.
    pub fn current_modelled(&self) -> bool {
        self.current_lesson()
            .and_then(|l| self.reports.get(&l.id))
            .is_some_and(|r| r.engine.modelled)
    }

    fn variant_count(&self) -> usize {
        self.current_experiment().map_or(0, |e| e.variants.len())
    }

    fn move_selection(&mut self, delta: isize) {
        let page = self.reader_height().max(1) as isize;
        match self.screen {
            Screen::Outline => {
                let visible = self.visible_lessons();
                let pos = visible
                    .iter()
                    .position(|&i| i == self.outline.selected)
                    .unwrap_or(0) as isize;
                let next = (pos + delta.signum() * delta.abs().min(page))
                    .clamp(0, visible.len() as isize - 1);
                if let Some(&i) = usize::try_from(next).ok().and_then(|n| visible.get(n)) {
                    self.outline.selected = i;
                }
            }
            Screen::Reader => {
                self.reader.scroll = self.reader.scroll.saturating_add_signed(delta);
                self.clamp_reader();
            }
            Screen::Experiment => match self.experiment.tab {
                ExpTab::Operations => {
                    let n = self.workload_items() as isize;
                    if n > 0 {
                        self.experiment.op =
                            (self.experiment.op as isize + delta).clamp(0, n - 1) as usize;
                    }
                }
                _ => self.experiment.scroll = self.experiment.scroll.saturating_add_signed(delta),
            },
            Screen::Explain => {
                if self.explain.raw {
                    self.explain.scroll = self.explain.scroll.saturating_add_signed(delta);
                } else {
                    let n = screens::explain_tree::node_count(self) as isize;
                    if n > 0 {
                        self.explain.node =
                            (self.explain.node as isize + delta).clamp(0, n - 1) as usize;
                    }
                }
            }
            Screen::Shell => {
                self.shell.scroll = self.shell.scroll.saturating_add_signed(-delta);
            }
            Screen::Exercises => {
                let n = self.exercises.items.len() as isize;
                if n > 0 {
                    self.exercises.selected =
                        (self.exercises.selected as isize + delta).clamp(0, n - 1) as usize;
                    self.exercises.scroll = 0;
                }
            }
        }
    }

    fn jump_section(&mut self, forward: bool) {
        let sections = &self.reader.doc.sections;
        let cur = self.reader.scroll;
        let target = if forward {
            sections.iter().copied().find(|&l| l > cur)
        } else {
            sections
                .iter()
                .rev()
                .copied()
                .find(|&l| l < cur)
                .or(Some(0))
        };
        if let Some(line) = target {
            if self.present {
                let idx = sections
                    .iter()
                    .position(|&l| l == line)
                    .map_or(0, |i| i + 1);
                self.reader.revealed = self.reader.revealed.max(idx);
            }
            self.reader.scroll = line;
            self.clamp_reader();
        }
    }

    /// Highlighted `code`: from the cache, or plain when not warmed.
    pub fn code(&self, code: &str, lang: &str) -> Vec<Line<'static>> {
        match self.code_cache.get(&(lang.to_string(), code.to_string())) {
            Some(lines) => lines.clone(),
            None => code
                .lines()
                .map(|l| Line::from(Span::styled(l.to_string(), self.theme.code)))
                .collect(),
        }
    }

    fn warm(&mut self, code: &str, lang: &str) {
        let key = (lang.to_string(), code.to_string());
        if !self.code_cache.contains_key(&key) {
            let lines = highlight::highlight(code, lang, &self.theme);
            self.code_cache.insert(key, lines);
        }
    }

    /// Highlights what the current screen may show.
    fn warm_cache(&mut self) {
        let mut todo: Vec<(String, &'static str)> = Vec::new();
        if let Some(lesson) = self.current_lesson() {
            for exp in lesson.experiments() {
                for op in &exp.operations {
                    todo.extend(op.run.values().map(|s| (s.get_ref().clone(), "js")));
                }
            }
        }
        if let Some(report) = self.current_report() {
            for v in &report.variants {
                for sample in &v.samples {
                    todo.extend(
                        sample
                            .documents
                            .iter()
                            .map(|d| (screens::experiment::shell_doc(d), "js")),
                    );
                }
                todo.extend(v.operations.iter().map(|o| (o.statement.clone(), "js")));
            }
        }
        if self.screen == Screen::Explain
            && self.explain.raw
            && let Some(explain) = screens::explain_tree::selected_explain(self)
        {
            todo.push((screens::explain_tree::raw_text(explain), "js"));
        }
        for (src, _) in &self.shell.output {
            if let Some((_, stmt)) = screens::shell::echo(src) {
                todo.push((stmt.to_string(), "js"));
            }
        }
        for (code, lang) in todo {
            self.warm(&code, lang);
        }
    }

    /// Applies one action; returns the effects for the event loop.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let effects = self.apply(action);
        if !matches!(self.screen, Screen::Outline) {
            self.warm_cache();
        }
        effects
    }

    fn apply(&mut self, action: Action) -> Vec<Effect> {
        if !matches!(action, Action::Digit(_) | Action::Task(_) | Action::Tick) {
            self.outline.digits.clear();
        }
        if self.help
            && !matches!(
                action,
                Action::Task(_) | Action::Resize { .. } | Action::Tick | Action::Quit
            )
        {
            self.help = false;
            return Vec::new();
        }
        match action {
            Action::Quit => {
                self.should_quit = true;
                if self.run.is_some() {
                    return vec![Effect::CancelRun];
                }
            }
            Action::ToggleHelp => self.help = !self.help,
            Action::Tick => self.tick = self.tick.wrapping_add(1),
            Action::Resize { width, height } => {
                self.size = (width, height);
                self.relayout();
            }
            Action::Back => match self.screen {
                Screen::Outline => {
                    self.outline.search = None;
                }
                Screen::Reader => self.screen = Screen::Outline,
                Screen::Experiment => self.screen = Screen::Reader,
                Screen::Explain => {
                    self.screen = Screen::Experiment;
                    // The presenter shows the operation explain ended on.
                    if self.present
                        && let Some(i) = screens::presenter::slides(self)
                            .iter()
                            .position(|s| *s == screens::presenter::Slide::Op(self.experiment.op))
                    {
                        self.experiment.slide = i;
                    }
                }
                Screen::Shell => {
                    self.screen = self.shell.return_to.take().unwrap_or(Screen::Outline)
                }
                Screen::Exercises => {
                    self.screen = self.exercises.return_to.take().unwrap_or(Screen::Outline)
                }
            },
            Action::Up => self.move_selection(-1),
            Action::Down => self.move_selection(1),
            Action::ScrollUp => self.move_selection(if self.screen == Screen::Reader {
                -3
            } else {
                -1
            }),
            Action::ScrollDown => {
                self.move_selection(if self.screen == Screen::Reader { 3 } else { 1 })
            }
            Action::PageUp => {
                let page = self.reader_height().max(2) as isize - 1;
                self.move_selection(-page);
            }
            Action::PageDown => {
                let page = self.reader_height().max(2) as isize - 1;
                self.move_selection(page);
            }
            Action::Top => self.move_selection(isize::MIN / 2),
            Action::Bottom => self.move_selection(isize::MAX / 2),
            Action::Open | Action::Submit if self.screen == Screen::Outline => {
                // Only a lesson the search found opens.
                let Some(index) = self.outline_preview() else {
                    return Vec::new();
                };
                self.outline.search = None;
                return self.open_lesson(index);
            }
            Action::Open => {}
            Action::Digit(d) => {
                // Typed digits name a lesson by its number ("1", then "0"
                // for lesson 10); a digit that extends no number starts
                // a new one.
                let find = |typed: &str| self.course.lessons.iter().position(|l| l.number == typed);
                let longer = format!("{}{d}", self.outline.digits);
                let (pick, typed) = match find(&longer) {
                    Some(i) => (Some(i), longer),
                    None => (find(&d.to_string()), d.to_string()),
                };
                match pick {
                    Some(i) => {
                        self.outline.selected = i;
                        self.outline.digits = typed;
                    }
                    None => self.outline.digits.clear(),
                }
            }
            Action::SearchStart => {
                self.outline.search = Some(String::new());
            }
            Action::Input(c) => match self.screen {
                Screen::Shell => {
                    self.shell.input.push(c);
                    self.shell.history_pos = None;
                }
                _ => {
                    if let Some(q) = self.outline.search.as_mut() {
                        q.push(c);
                    }
                    // A lesson whose title or id matches comes before one
                    // whose text does.
                    let q = self.outline.search.as_deref().unwrap_or("").to_lowercase();
                    let visible = self.visible_lessons();
                    let named = visible.iter().copied().find(|&i| {
                        let l = &self.course.lessons[i];
                        l.title().to_lowercase().contains(&q) || l.id.to_lowercase().contains(&q)
                    });
                    if let Some(first) = named.or(visible.first().copied()) {
                        self.outline.selected = first;
                    }
                }
            },
            Action::Backspace => match self.screen {
                Screen::Shell => {
                    self.shell.input.pop();
                }
                _ => {
                    if let Some(q) = self.outline.search.as_mut() {
                        q.pop();
                    }
                }
            },
            Action::Submit => {
                if self.screen == Screen::Shell && !self.shell.busy {
                    let line = std::mem::take(&mut self.shell.input);
                    if line.trim().is_empty() && self.shell.pending.is_empty() {
                        return Vec::new();
                    }
                    let prompt = if self.shell.pending.is_empty() {
                        crate::dialect::prompt(&self.shell_db())
                    } else {
                        crate::dialect::CONTINUATION_PROMPT.to_string()
                    };
                    self.shell.output.push((format!("{prompt}{line}"), false));
                    self.shell.history_pos = None;
                    self.shell.scroll = 0;
                    self.shell.pending.push(line);
                    let src = self.shell.pending.join("\n");
                    // An open bracket, comment or template goes on in the
                    // next line, as in the command-line shell.
                    if crate::dialect::needs_more_input(&src) {
                        return Vec::new();
                    }
                    self.shell.pending.clear();
                    let src = src.trim().to_string();
                    if self.shell.history.last() != Some(&src) {
                        self.shell.history.push(src.clone());
                    }
                    self.shell.busy = true;
                    return vec![Effect::ShellEval {
                        db: self.shell_db(),
                        src,
                    }];
                }
            }
            Action::HistoryPrev => {
                if !self.shell.history.is_empty() {
                    let pos = match self.shell.history_pos {
                        Some(p) => p.saturating_sub(1),
                        None => self.shell.history.len() - 1,
                    };
                    self.shell.history_pos = Some(pos);
                    self.shell.input = self.shell.history[pos].clone();
                }
            }
            Action::HistoryNext => {
                if let Some(p) = self.shell.history_pos {
                    if p + 1 < self.shell.history.len() {
                        self.shell.history_pos = Some(p + 1);
                        self.shell.input = self.shell.history[p + 1].clone();
                    } else {
                        self.shell.history_pos = None;
                        self.shell.input.clear();
                    }
                }
            }
            Action::NextSection | Action::PrevSection if self.screen == Screen::Explain => {
                // The next (or previous) operation's explain, tree first.
                let n = self.op_count();
                if n > 0 {
                    let op = self.experiment.op;
                    self.experiment.op = if action == Action::NextSection {
                        (op + 1) % n
                    } else {
                        (op + n - 1) % n
                    };
                    self.explain.node = 0;
                    self.explain.scroll = 0;
                    self.explain.raw = false;
                }
            }
            Action::NextSection => self.jump_section(true),
            Action::PrevSection => self.jump_section(false),
            Action::Reveal => {
                let total = self.reader.doc.sections.len();
                if self.reader.revealed < total {
                    self.reader.revealed += 1;
                    if let Some(&line) = self.reader.doc.sections.get(self.reader.revealed - 1) {
                        self.reader.scroll = line;
                    }
                    self.clamp_reader();
                } else {
                    self.move_selection(self.reader_height().max(2) as isize - 1);
                }
            }
            Action::Run => {
                if self.screen == Screen::Outline {
                    let mut effects = self.open_lesson(self.outline.selected);
                    effects.extend(self.start_run());
                    return effects;
                }
                return self.start_run();
            }
            Action::CancelRun => {
                if let Some(run) = self.run.as_mut() {
                    run.cancelling = true;
                    return vec![Effect::CancelRun];
                }
            }
            Action::ScaleUp | Action::ScaleDown => {
                let pos = SCALES.iter().position(|&x| x == self.scale).unwrap_or(1);
                let next = if action == Action::ScaleUp {
                    (pos + 1).min(SCALES.len() - 1)
                } else {
                    pos.saturating_sub(1)
                };
                self.scale = SCALES[next];
            }
            Action::Results => {
                if self.current_experiment().is_some() {
                    self.screen = Screen::Experiment;
                } else {
                    self.notice = Some(s::t(s::NO_EXPERIMENT).to_string());
                }
            }
            Action::NextTab if self.screen == Screen::Shell => {
                // Tab moves the shell to the experiment's next variant.
                let dbs = self.variant_dbs();
                if !dbs.is_empty() && !self.shell.busy {
                    let current = self.shell_db();
                    let next = dbs
                        .iter()
                        .position(|d| *d == current)
                        .map_or(0, |i| (i + 1) % dbs.len());
                    let db = dbs[next].clone();
                    self.shell
                        .output
                        .push((s::lang().f("now in {db}", &[("db", &db)]), false));
                    self.shell.db = Some(db);
                    self.shell.scroll = 0;
                }
            }
            Action::NextSlide | Action::PrevSlide | Action::JumpSlides => {
                let n = screens::presenter::slides(self).len();
                if n > 0 {
                    let cur = self.experiment.slide.min(n - 1);
                    self.experiment.slide = match action {
                        Action::NextSlide => (cur + 1).min(n - 1),
                        Action::PrevSlide => cur.saturating_sub(1),
                        _ => screens::presenter::jump(self),
                    };
                    // The operation on a slide is the one explain opens.
                    if let Some(screens::presenter::Slide::Op(i)) =
                        screens::presenter::current(self)
                    {
                        self.experiment.op = i;
                    }
                }
            }
            Action::NextTab => {
                let i = ExpTab::ALL
                    .iter()
                    .position(|&t| t == self.experiment.tab)
                    .unwrap_or(0);
                self.experiment.tab = ExpTab::ALL[(i + 1) % ExpTab::ALL.len()];
                self.experiment.scroll = 0;
            }
            Action::Left | Action::Right => {
                let forward = action == Action::Right;
                match self.screen {
                    Screen::Explain => {
                        let n = self.variant_count().max(1);
                        self.explain.side = if forward {
                            (self.explain.side + 1) % n
                        } else {
                            (self.explain.side + n - 1) % n
                        };
                        self.explain.node = 0;
                        self.explain.scroll = 0;
                        // Another explain: its tree first.
                        self.explain.raw = false;
                    }
                    Screen::Experiment => {
                        let n = self.current_lesson().map_or(0, |l| l.experiments().len());
                        if n > 1 {
                            let e = self.experiment.experiment;
                            self.experiment.experiment = if forward {
                                (e + 1) % n
                            } else {
                                (e + n - 1) % n
                            };
                            self.experiment.op = 0;
                            self.experiment.slide = 0;
                        }
                    }
                    _ => {}
                }
            }
            Action::OpenExplain => {
                let on_op = if self.present {
                    matches!(
                        screens::presenter::current(self),
                        Some(screens::presenter::Slide::Op(_))
                    )
                } else {
                    self.experiment.tab == ExpTab::Operations
                };
                if on_op && self.experiment.op < self.op_count() {
                    self.screen = Screen::Explain;
                    self.explain.node = 0;
                    self.explain.scroll = 0;
                    self.explain.raw = false;
                }
            }
            Action::ToggleRaw => {
                self.explain.raw = !self.explain.raw;
                self.explain.scroll = 0;
            }
            Action::ToggleFold => self.experiment.folded = !self.experiment.folded,
            Action::OpenShell => {
                // From the outline, the shell is the selected lesson's.
                if self.screen == Screen::Outline
                    && self.outline.selected < self.course.lessons.len()
                {
                    self.select_lesson(self.outline.selected);
                }
                // A shell left in another lesson's database starts over in
                // this experiment's first variant.
                let dbs = self.variant_dbs();
                if self
                    .shell
                    .db
                    .as_ref()
                    .is_some_and(|d| !dbs.is_empty() && !dbs.contains(d))
                {
                    self.shell.db = None;
                }
                if self.screen != Screen::Shell {
                    self.shell.return_to = Some(self.screen);
                    self.screen = Screen::Shell;
                }
            }
            Action::OpenExercises => {
                if self.screen != Screen::Exercises {
                    let lesson = match self.screen {
                        Screen::Outline => self.course.lessons.get(self.outline.selected),
                        _ => self.current_lesson(),
                    };
                    if let Some(i) = lesson.and_then(|l| self.exercises.first_of(&l.id)) {
                        self.exercises.selected = i;
                        self.exercises.scroll = 0;
                    }
                    self.exercises.return_to = Some(self.screen);
                    self.screen = Screen::Exercises;
                }
            }
            Action::Hint => {
                if let Some(item) = self.exercises.items.get_mut(self.exercises.selected)
                    && (item.hints_used as usize) < item.hints.len()
                {
                    item.hints_used += 1;
                    return vec![Effect::RecordHint {
                        id: item.id.clone(),
                    }];
                }
            }
            Action::Check => {
                if self.exercises.checking.is_none()
                    && let Some(item) = self.exercises.current()
                {
                    let id = item.id.clone();
                    self.exercises.checking = Some(id.clone());
                    return vec![Effect::CheckExercise { id }];
                }
            }
            Action::ToggleWatch => {
                self.exercises.watching = !self.exercises.watching;
                return vec![Effect::WatchExercises(self.exercises.watching)];
            }
            Action::Click { column, row } => return self.click(column, row),
            Action::Task(msg) => return self.task(msg),
        }
        Vec::new()
    }

    fn click(&mut self, column: u16, row: u16) -> Vec<Effect> {
        let main = main_area(self.size);
        match self.screen {
            Screen::Outline => {
                let list = screens::outline::list_area(main);
                if let Some(idx) = screens::outline::row_at(self, list, column, row) {
                    if idx == self.outline.selected {
                        return self.open_lesson(idx);
                    }
                    self.outline.selected = idx;
                }
            }
            Screen::Experiment if !self.present => {
                if let Some(op) = screens::experiment::op_at(self, main, column, row) {
                    if op == self.experiment.op && op < self.op_count() {
                        self.screen = Screen::Explain;
                        self.explain.node = 0;
                        self.explain.scroll = 0;
                        self.explain.raw = false;
                    }
                    self.experiment.op = op;
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn task(&mut self, msg: TaskMsg) -> Vec<Effect> {
        match msg {
            TaskMsg::Connected { label } => {
                self.engine = EngineStatus {
                    label,
                    state: ConnState::Connected,
                };
            }
            TaskMsg::ConnectionFailed(e) => self.engine.state = ConnState::Failed(e),
            TaskMsg::RunProgress { run_id, progress } => {
                if let Some(run) = self.run.as_mut().filter(|r| r.id == run_id) {
                    run.progress = progress;
                }
            }
            TaskMsg::RunFinished { run_id, result } => {
                let Some(run) = self.run.take_if(|r| r.id == run_id) else {
                    return Vec::new();
                };
                let Some(lesson) = self.course.lessons.get(run.lesson) else {
                    return Vec::new();
                };
                let lesson_id = lesson.id.clone();
                match result {
                    Ok(report) => {
                        self.merge_report(&lesson_id, *report);
                        self.progress.complete(&lesson_id);
                        if let Some(r) = self.reports.get(&lesson_id) {
                            let claims = r.experiments.iter().flat_map(|e| &e.claims);
                            let (held, total) = claims.fold((0, 0), |(h, t), c| {
                                (h + usize::from(c.verdict.passed), t + 1)
                            });
                            self.progress.record_claims(&lesson_id, held, total);
                        }
                        self.notice = None;
                        self.relayout();
                        return vec![Effect::SaveProgress];
                    }
                    Err(e) if run.cancelling => {
                        self.notice = Some(format!("{} ({e})", s::t(s::EXP_CANCELLED)))
                    }
                    Err(e) => self.notice = Some(format!("{}: {e}", s::t(s::EXP_FAILED))),
                }
            }
            TaskMsg::CheckFinished { id, text, passed } => {
                self.exercises.checking = None;
                if let Some(item) = self.exercises.items.iter_mut().find(|i| i.id == id) {
                    item.attempts += 1;
                    item.passed |= passed;
                }
                self.exercises.results.retain(|(i, _, _)| *i != id);
                self.exercises.results.push((id, text, passed));
                self.exercises.scroll = 0;
            }
            TaskMsg::ExerciseChanged(id) => {
                if self.exercises.watching && self.exercises.checking.is_none() {
                    if let Some(i) = self.exercises.items.iter().position(|x| x.id == id) {
                        self.exercises.selected = i;
                    }
                    self.exercises.checking = Some(id.clone());
                    return vec![Effect::CheckExercise { id }];
                }
            }
            TaskMsg::ShellOutput { text, error, db } => {
                self.shell.busy = false;
                if !db.is_empty() {
                    self.shell.db = Some(db);
                }
                for line in text.lines() {
                    self.shell.output.push((line.to_string(), error));
                }
                const KEEP: usize = 2000;
                if self.shell.output.len() > KEEP {
                    self.shell.output.drain(..self.shell.output.len() - KEEP);
                }
            }
        }
        Vec::new()
    }
}

impl App {
    /// Keep a run's report: its experiments replace their earlier runs in
    /// the lesson's report, the others stay, in the lesson's order (so a
    /// placeholder reads the experiment `schemalab run` would).
    fn merge_report(&mut self, lesson_id: &str, report: LessonReport) {
        let order: Vec<String> = self
            .course
            .lessons
            .iter()
            .find(|l| l.id == lesson_id)
            .map(|l| {
                l.experiments()
                    .iter()
                    .map(|e| e.id.get_ref().clone())
                    .collect()
            })
            .unwrap_or_default();
        for exp in &report.experiments {
            self.measured_at
                .insert((lesson_id.to_string(), exp.id.clone()), report.scale);
        }
        let held = self
            .reports
            .entry(lesson_id.to_string())
            .or_insert_with(|| LessonReport {
                lesson: report.lesson.clone(),
                title: String::new(),
                scale: report.scale,
                engine: report.engine.clone(),
                experiments: Vec::new(),
            });
        held.title = report.title;
        held.scale = report.scale;
        held.engine = report.engine;
        for exp in report.experiments {
            match held.experiments.iter_mut().find(|e| e.id == exp.id) {
                Some(slot) => *slot = exp,
                None => held.experiments.push(exp),
            }
        }
        held.experiments.sort_by_key(|e| {
            order
                .iter()
                .position(|id| *id == e.id)
                .unwrap_or(usize::MAX)
        });
    }
}

/// The area between the status bar and the footer.
pub fn main_area(size: (u16, u16)) -> Rect {
    Rect::new(0, 1, size.0, size.1.saturating_sub(2))
}

/// Where `query` (lower case) occurs in a lesson: its title, id, summary,
/// an experiment's or claim's text, or the prose. `Some(snippet)` with the
/// words around a hit in the prose (empty for a hit elsewhere).
pub fn search_hit(l: &super::lessons::LessonSlot, query: &str) -> Option<String> {
    if l.title().to_lowercase().contains(query)
        || l.id.to_lowercase().contains(query)
        || l.summary().to_lowercase().contains(query)
        || l.experiments().iter().any(|e| {
            e.title.to_lowercase().contains(query)
                || e.claims
                    .iter()
                    .any(|c| c.text.to_lowercase().contains(query))
        })
    {
        return Some(String::new());
    }
    let prose = l.prose();
    let line = prose
        .lines()
        .find(|line| line.to_lowercase().contains(query))?;
    Some(snippet(line.trim(), query, 60))
}

/// About `cols` columns of `line` around the first `query` hit.
fn snippet(line: &str, query: &str, cols: usize) -> String {
    let lower = line.to_lowercase();
    let at = lower.find(query).unwrap_or(0);
    // Lower-casing can move byte offsets in rare scripts: fall back to the
    // line's start rather than cut a character.
    let at = if line.is_char_boundary(at) { at } else { 0 };
    let before: Vec<char> = line[..at].chars().collect();
    let start = before.len().saturating_sub(20);
    let text: String = before[start..]
        .iter()
        .chain(line[at..].chars().collect::<Vec<_>>().iter())
        .collect();
    let cut = crate::locale::fit(&text, cols).trim_end().to_string();
    format!("{}{cut}…", if start > 0 { "…" } else { "" })
}

/// How the reader shows a placeholder: a measured figure in bold, so it
/// stands out from the prose around it; before a run, what to press.
pub fn prose_mark(value: Option<String>) -> String {
    match value {
        Some(v) => format!("**{v}**"),
        None => format!("*{}*", s::t(s::PRESS_R_TO_MEASURE)),
    }
}
