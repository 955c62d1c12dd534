//! The course as the TUI holds it: the course module's own [`Course`] and,
//! per manifest entry, the [`Lesson`] it loads (with its prose read) or the
//! [`CourseError`] that stopped it, so a lesson whose files are broken
//! keeps its place in the outline and says what is wrong. There is no
//! second reader of the course files and no mirror of its types: screens
//! render `course` types. Loading is the only I/O here; the event loop does
//! it before the TUI starts (tests call it too).

use crate::locale::Localized;
use std::borrow::Cow;
use std::path::Path;

use crate::course::{Course, CourseError, Experiment, Lesson};
use crate::locale::Lang;

/// The course and every lesson of its manifest, in course order.
#[derive(Debug, Clone)]
pub struct CourseState {
    pub course: Course,
    pub lessons: Vec<LessonSlot>,
}

/// One manifest entry: its id and what loading it gave.
#[derive(Debug, Clone)]
pub struct LessonSlot {
    pub id: String,
    /// The number it goes by ([`Course::lesson_numbers`]).
    pub number: String,
    pub loaded: Result<LoadedLesson, CourseError>,
}

/// A lesson that loaded, with its prose Markdown (placeholders left in).
#[derive(Debug, Clone)]
pub struct LoadedLesson {
    pub lesson: Lesson,
    pub prose: String,
}

impl CourseState {
    /// Read the course under `root` in `lang` (English wherever a
    /// translation is missing). Only a manifest that cannot be read fails;
    /// a lesson that cannot is kept with its error.
    pub fn load(root: &Path, lang: Lang) -> Result<CourseState, CourseError> {
        Course::load(root, lang).map(CourseState::from_course)
    }

    /// Load every lesson of `course`.
    pub fn from_course(course: Course) -> CourseState {
        let lessons = course
            .lesson_ids()
            .into_iter()
            .zip(course.lesson_numbers())
            .map(|(id, number)| {
                let loaded = course.lesson(&id).and_then(|lesson| {
                    let prose = lesson.prose_text()?.unwrap_or_default();
                    Ok(LoadedLesson { lesson, prose })
                });
                LessonSlot { id, number, loaded }
            })
            .collect();
        CourseState { course, lessons }
    }

    /// The course title from the manifest (translated).
    pub fn title(&self) -> &str {
        &self.course.manifest.title
    }
}

impl LessonSlot {
    /// The lesson, when it loaded.
    pub fn lesson(&self) -> Option<&Lesson> {
        self.loaded.as_ref().ok().map(|l| &l.lesson)
    }

    /// Why the lesson did not load.
    pub fn problem(&self) -> Option<&CourseError> {
        self.loaded.as_ref().err()
    }

    /// The lesson's title, or its id when it did not load.
    pub fn title(&self) -> &str {
        self.lesson().map_or(self.id.as_str(), |l| l.title.as_str())
    }

    /// The lesson's summary, or what stopped it from loading.
    pub fn summary(&self) -> Cow<'_, str> {
        match &self.loaded {
            Ok(l) => Cow::Borrowed(l.lesson.summary.as_str()),
            Err(e) => Cow::Owned(e.render_in(crate::tui::strings::lang())),
        }
    }

    /// The lesson's experiments (none when it did not load).
    pub fn experiments(&self) -> &[Experiment] {
        self.lesson().map_or(&[], |l| l.experiments.as_slice())
    }

    /// The prose Markdown; for a lesson that did not load, a page saying why.
    pub fn prose(&self) -> Cow<'_, str> {
        match &self.loaded {
            Ok(l) => Cow::Borrowed(l.prose.as_str()),
            Err(e) => Cow::Owned(format!(
                "# {}\n\n{}\n\n    {e}\n",
                self.id,
                super::strings::LESSON_BROKEN
            )),
        }
    }
}
