//! The mongosh language: real JavaScript (QuickJS-ng, see [`js`]) with
//! mongosh's API on top (`js/prelude.js`), talking to the database only
//! through the official `mongodb` driver, so the same script runs against
//! schemalab's embedded engine and a real MongoDB. docs/SHELL.md lists what
//! mongosh has and schemalab does not.
//!
//! Pipeline: [`program`] (source → a checked [`Program`]; mongosh's `use`,
//! `show` and `it` lines become calls) → [`eval`] (a [`Session`] runs it on
//! its engine thread and answers the script's database calls through the
//! write gate, [`gate`]) → [`print`] (values → mongosh-style text).
//! [`shell`] wraps it all into the `schemalab shell` command (file mode and
//! an interactive line editor); its prompt ([`prompt`]) and its "run or
//! read another line" test ([`is_complete`]) are public so every front end
//! (the TUI's shell pane too) behaves the same. `names` holds mongod's
//! rules for database names. [`observe`] lets the measurement path see
//! every command a session sends.

mod complete;
mod dates;
mod eval;
pub mod gate;
pub mod js;
mod names;
pub mod observe;
pub mod print;
mod program;
mod shell;
mod suggest;

use std::fmt;

use crate::locale::Message;

pub use complete::is_complete;
pub(crate) use eval::driver_err as driver_error;
pub use eval::{Output, OutputSink, Session, Value};
pub use gate::WritePolicy;
pub use js::Interrupter;
pub use names::{MAX_DB_NAME_BYTES, check_db_name, is_valid_db_name};
pub use observe::{Observer, Reply};
pub use program::{Program, parse_program};
pub use shell::{
    CONTINUATION_PROMPT, needs_more_input, prompt, run_file, run_file_with, run_interactive,
    run_interactive_with,
};
pub use suggest::{edit_distance, suggest};

/// The server's name for error `code` when it gave one (`given`), else
/// mongod's (the driver passes no codeName inside `writeErrors`), so that
/// checks can say `error == "DuplicateKey"` whichever way it came.
pub fn code_name(code: i32, given: &str) -> String {
    if given.is_empty() {
        schemalab_engine::ErrorCode(code).name()
    } else {
        given.to_string()
    }
}

/// A 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Everything that can go wrong parsing or evaluating dialect code. The
/// words are one [`Message`] per error ([`DialectError::message`]): the
/// class names mongosh prints (`SyntaxError`, `TypeError`,
/// `ReferenceError`, `RangeError`, `MongoServerError`, …) and the place
/// stay as they are in every language, the description after them is
/// schemalab's and is translated, and what the server or the driver
/// wrote stays as written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DialectError {
    /// The text is not valid in the dialect's grammar.
    #[error("{}", self.message())]
    Syntax { message: Message, pos: Pos },
    /// A value was used the wrong way (unknown method, wrong argument …).
    #[error("{}", self.message())]
    Type {
        message: Message,
        suggestion: Option<String>,
        pos: Option<Pos>,
    },
    /// An unknown name.
    #[error("{}", self.message())]
    Reference {
        name: String,
        suggestion: Option<String>,
        pos: Pos,
    },
    /// The server answered with an error, printed as mongosh does (plus a
    /// "did you mean" hint when it names an unknown `$` operator).
    #[error("{}{}", server_line(code_name, message), hint(suggestion))]
    Server {
        code: i32,
        code_name: String,
        message: String,
        suggestion: Option<String>,
        /// The statement that sent the command.
        pos: Option<Pos>,
    },
    /// An ordered/unordered bulk insert or bulkWrite hit write errors.
    #[error("MongoBulkWriteError: {message}")]
    BulkWrite {
        code: i32,
        message: String,
        pos: Option<Pos>,
    },
    /// A driver-side failure (connection refused, timeout, bad URI …).
    #[error("MongoError: {message}")]
    Driver { message: String, pos: Option<Pos> },
    /// The write gate refused a command: it would write outside the
    /// databases this session may write (see [`WritePolicy`]).
    #[error("Error: {message}")]
    Refused { message: Message, pos: Option<Pos> },
    /// Reading a script file or the terminal failed.
    #[error("Error: {0}")]
    Io(Message),
    /// Any other JavaScript exception (`Error: …`, `InternalError: out of
    /// memory`, a thrown non-error value), under its class name.
    #[error("{}", self.message())]
    Js {
        class: String,
        message: String,
        pos: Option<Pos>,
    },
    /// The statement ran past its JavaScript time budget, or was stopped
    /// (Ctrl-C), and was interrupted.
    #[error("{}", self.message())]
    Interrupted { budget_ms: u64, pos: Option<Pos> },
    /// The statement printed more than a session keeps in memory
    /// ([`OUTPUT_LIMIT`]); it was stopped. A script run from a file
    /// streams its output instead and has no such limit.
    #[error("{}", self.message())]
    OutputLimit { limit_mib: u64, pos: Option<Pos> },
    /// Whoever read the streamed output stopped reading (`shell --file x.js
    /// | head -1`): the statement was stopped, as it has no one to print to.
    #[error("{}", self.message())]
    OutputClosed { pos: Option<Pos> },
}

/// What a session keeps of one statement's printed output before it stops
/// the statement (`DialectError::OutputLimit`): the shell pane, lessons and
/// exercise checks hold output in memory; `schemalab shell --file` streams.
pub const OUTPUT_LIMIT: usize = 16 << 20;

/// A budget in milliseconds as seconds (`10`, `0.5`).
fn super_secs(ms: u64) -> String {
    print::format_number(ms as f64 / 1000.0)
}

fn hint(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" (did you mean {s}?)"),
        None => String::new(),
    }
}

/// `m` followed by the "did you mean" hint when there is a suggestion.
fn with_hint(m: Message, s: &Option<String>) -> Message {
    match s {
        Some(s) => Message::new("{m} (did you mean {s}?)")
            .arg_msg("m", m)
            .arg("s", s),
        None => m,
    }
}

impl crate::locale::Localized for DialectError {
    fn render_in(&self, lang: crate::locale::Lang) -> String {
        self.message().render_in(lang)
    }
}

fn server_line(code_name: &str, message: &str) -> String {
    if code_name.is_empty() {
        format!("MongoServerError: {message}")
    } else {
        format!("MongoServerError[{code_name}]: {message}")
    }
}

impl DialectError {
    /// The error's words, for any language (its `Display` is the English).
    pub fn message(&self) -> Message {
        match self {
            DialectError::Syntax { message, pos } => Message::new("SyntaxError: {m} ({pos})")
                .arg_msg("m", message.clone())
                .arg("pos", pos),
            DialectError::Type {
                message,
                suggestion,
                ..
            } => with_hint(
                Message::new("TypeError: {m}").arg_msg("m", message.clone()),
                suggestion,
            ),
            DialectError::Reference {
                name, suggestion, ..
            } => with_hint(
                Message::new("ReferenceError: {name} is not defined").arg("name", name),
                suggestion,
            ),
            DialectError::Server {
                code_name,
                message,
                suggestion,
                ..
            } => with_hint(
                Message::new("{line}").arg("line", server_line(code_name, message)),
                suggestion,
            ),
            DialectError::BulkWrite { message, .. } => {
                Message::new("MongoBulkWriteError: {m}").arg("m", message)
            }
            DialectError::Driver { message, .. } => {
                Message::new("MongoError: {m}").arg("m", message)
            }
            DialectError::Refused { message, .. } => {
                Message::new("Error: {m}").arg_msg("m", message.clone())
            }
            DialectError::Io(e) => Message::new("Error: {m}").arg_msg("m", e.clone()),
            DialectError::Js { class, message, .. } if class == "Uncaught" => {
                Message::new("Uncaught {m}").arg("m", message)
            }
            DialectError::Js { class, message, .. } => Message::new("{class}: {m}")
                .arg("class", class)
                .arg("m", message),
            DialectError::Interrupted { budget_ms, .. } => Message::new(
                "InternalError: interrupted: the statement was stopped (it ran past its {s} s budget of JavaScript time, or Ctrl-C)",
            )
            .arg("s", super_secs(*budget_ms)),
            DialectError::OutputLimit { limit_mib, .. } => Message::new(
                "RangeError: the statement printed more than {mib} MiB, more than schemalab keeps in memory, and was stopped (print less, or run the script with `schemalab shell --file`, which streams its output)",
            )
            .arg("mib", limit_mib),
            DialectError::OutputClosed { .. } => {
                Message::new("Error: the output was closed, so the statement was stopped")
            }
        }
    }

    /// A server error; when the message complains about an unknown `$`
    /// name, the nearest known operator or stage is suggested.
    pub fn server(code: i32, code_name: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        let suggestion = operator_suggestion(&message);
        DialectError::Server {
            code,
            code_name: code_name.into(),
            message,
            suggestion,
            pos: None,
        }
    }

    pub(crate) fn driver(message: impl Into<String>) -> Self {
        DialectError::Driver {
            message: message.into(),
            pos: None,
        }
    }

    /// Give an error raised while running the statement at `pos` that
    /// place, unless it already has a more precise one.
    pub(crate) fn at_statement(mut self, at: Pos) -> Self {
        match &mut self {
            DialectError::Type { pos, .. }
            | DialectError::Server { pos, .. }
            | DialectError::BulkWrite { pos, .. }
            | DialectError::Driver { pos, .. }
            | DialectError::Refused { pos, .. }
            | DialectError::Js { pos, .. }
            | DialectError::Interrupted { pos, .. }
            | DialectError::OutputLimit { pos, .. }
            | DialectError::OutputClosed { pos } => {
                pos.get_or_insert(at);
            }
            _ => {}
        }
        self
    }

    /// Whether the one-line message already ends with the position.
    fn shows_position(&self) -> bool {
        matches!(self, DialectError::Syntax { .. })
    }

    /// Where in the source the error is, when it is tied to a spot.
    pub fn position(&self) -> Option<Pos> {
        match self {
            DialectError::Syntax { pos, .. } | DialectError::Reference { pos, .. } => Some(*pos),
            DialectError::Type { pos, .. }
            | DialectError::Server { pos, .. }
            | DialectError::BulkWrite { pos, .. }
            | DialectError::Driver { pos, .. }
            | DialectError::Refused { pos, .. }
            | DialectError::Js { pos, .. }
            | DialectError::Interrupted { pos, .. }
            | DialectError::OutputLimit { pos, .. }
            | DialectError::OutputClosed { pos } => *pos,
            DialectError::Io(_) => None,
        }
    }

    /// [`DialectError::line`] in `lang`.
    pub fn line(&self, lang: crate::locale::Lang) -> String {
        self.line_message().render_in(lang)
    }

    /// [`DialectError::line`] as a message, for any language.
    pub fn line_message(&self) -> Message {
        match self.position() {
            Some(pos) if !self.shows_position() => Message::new("{m} ({pos})")
                .arg_msg("m", self.message())
                .arg("pos", pos),
            _ => self.message(),
        }
    }

    /// [`DialectError::render`] as a message: the one line in the language
    /// it is rendered in, the source line and caret under it as they are.
    /// What a report keeps, to be shown later in its reader's language.
    pub fn with_source(&self, src: &str) -> Message {
        match self.excerpt(src) {
            Some(excerpt) => Message::new("{m}\n{excerpt}")
                .arg_msg("m", self.line_message())
                .arg("excerpt", excerpt),
            None => self.line_message(),
        }
    }

    /// The source line the error points into and a caret under the spot.
    fn excerpt(&self, src: &str) -> Option<String> {
        let pos = self.position()?;
        let line = src.lines().nth(pos.line.saturating_sub(1) as usize)?;
        let caret_pad: String = line
            .chars()
            .take(pos.col.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        Some(format!("{line}\n{caret_pad}^"))
    }

    /// The message (with its place, see [`DialectError::line`]) followed,
    /// when the error has a position, by the source line and a caret under
    /// the spot.
    pub fn render(&self, src: &str) -> String {
        self.render_src_in(src, crate::locale::Lang::En)
    }

    /// [`DialectError::render`] in `lang`.
    pub fn render_src_in(&self, src: &str, lang: crate::locale::Lang) -> String {
        self.with_source(src).render_in(lang)
    }
}

/// Query, update, stage and common expression operators, for suggestions.
const OPERATORS: &[&str] = &[
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$and",
    "$or",
    "$nor",
    "$not",
    "$exists",
    "$type",
    "$expr",
    "$jsonSchema",
    "$mod",
    "$regex",
    "$options",
    "$text",
    "$all",
    "$elemMatch",
    "$size",
    "$comment",
    "$currentDate",
    "$inc",
    "$min",
    "$max",
    "$mul",
    "$rename",
    "$set",
    "$setOnInsert",
    "$unset",
    "$addToSet",
    "$pop",
    "$pull",
    "$push",
    "$pullAll",
    "$each",
    "$position",
    "$slice",
    "$sort",
    "$bit",
    "$addFields",
    "$bucket",
    "$bucketAuto",
    "$count",
    "$facet",
    "$graphLookup",
    "$group",
    "$limit",
    "$lookup",
    "$match",
    "$merge",
    "$out",
    "$project",
    "$replaceRoot",
    "$replaceWith",
    "$sample",
    "$skip",
    "$sortByCount",
    "$unionWith",
    "$unwind",
    "$setWindowFields",
    "$densify",
    "$fill",
    "$add",
    "$subtract",
    "$multiply",
    "$divide",
    "$abs",
    "$ceil",
    "$floor",
    "$round",
    "$concat",
    "$substr",
    "$toUpper",
    "$toLower",
    "$cond",
    "$ifNull",
    "$switch",
    "$sum",
    "$avg",
    "$first",
    "$last",
    "$filter",
    "$map",
    "$reduce",
    "$arrayElemAt",
    "$concatArrays",
    "$dateToString",
    "$year",
    "$month",
    "$dayOfMonth",
    "$literal",
    "$mergeObjects",
    "$objectToArray",
    "$arrayToObject",
    "$toString",
    "$toInt",
    "$toDouble",
    "$convert",
    "$split",
    "$strLenCP",
    "$regexMatch",
    "$setUnion",
    "$setIntersection",
    "$let",
];

/// For "unknown operator: $lten"-style messages, the closest real operator.
fn operator_suggestion(message: &str) -> Option<String> {
    let lower = message.to_lowercase();
    if !(lower.contains("unknown") || lower.contains("unrecognized") || lower.contains("invalid")) {
        return None;
    }
    let start = message.find('$')?;
    let name: String = message[start..]
        .chars()
        .enumerate()
        .take_while(|(i, c)| *i == 0 || c.is_alphanumeric() || *c == '_')
        .map(|(_, c)| c)
        .collect();
    if name.len() < 2 || OPERATORS.contains(&name.as_str()) {
        return None;
    }
    suggest(&name, OPERATORS.iter().copied())
}

/// Render a value as mongosh prints it.
pub fn render(v: &Value) -> String {
    v.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_points_at_column() {
        let e = DialectError::Syntax {
            message: Message::new("boom"),
            pos: Pos { line: 2, col: 5 },
        };
        assert_eq!(
            e.render("x\nabcdefg"),
            "SyntaxError: boom (2:5)\nabcdefg\n    ^"
        );
    }

    #[test]
    fn server_error_like_mongosh() {
        let e = DialectError::server(2, "BadValue", "nope");
        assert_eq!(e.to_string(), "MongoServerError[BadValue]: nope");
        let e = DialectError::server(2, "BadValue", "unknown operator: $lten");
        assert_eq!(
            e.to_string(),
            "MongoServerError[BadValue]: unknown operator: $lten (did you mean $lte?)"
        );
        let e = DialectError::server(
            40324,
            "Location40324",
            "Unrecognized pipeline stage name: '$grup'",
        );
        assert!(e.to_string().ends_with("(did you mean $group?)"), "{e}");
    }
}
