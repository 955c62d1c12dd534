//! Document validation as mongod 7.0 does it: a collection's `validator`
//! (query operators and `$jsonSchema`), its `validationLevel` (`strict`:
//! every insert and update; `moderate`: inserts, and updates of documents
//! that already met the validator; `off`) and `validationAction` (`error`:
//! the write fails with 121 DocumentValidationFailure and mongod's detailed
//! `errInfo`; `warn`: the write succeeds and a warning goes to the log),
//! and `bypassDocumentValidation`, which a command sets for the writes it
//! makes ([`bypassing`]).
//!
//! The log is the server's: `getLog: "global"` reads it. mongod writes its
//! warning as a structured line with id 20294, "Document would fail
//! validation", the namespace, the document and the `errInfo` it would have
//! had; the engine keeps the last 1,024 such lines of the process.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use bson::{Bson, Document, doc};
use parking_lot::Mutex;

use crate::error::{EngineError, ErrorCode, Result};
use crate::expr::Vars;
use crate::filter::Filter;

/// `validationLevel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Off,
    Strict,
    Moderate,
}

/// `validationAction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Error,
    Warn,
}

impl Level {
    fn parse(v: &Bson, field: &str) -> Result<Level> {
        match enum_string(v, field)? {
            "off" => Ok(Level::Off),
            "strict" => Ok(Level::Strict),
            "moderate" => Ok(Level::Moderate),
            other => Err(bad_enum(other, field)),
        }
    }
}

impl Action {
    fn parse(v: &Bson, field: &str) -> Result<Action> {
        match enum_string(v, field)? {
            "error" => Ok(Action::Error),
            "warn" => Ok(Action::Warn),
            other => Err(bad_enum(other, field)),
        }
    }
}

fn enum_string<'a>(v: &'a Bson, field: &str) -> Result<&'a str> {
    match v {
        Bson::String(s) => Ok(s),
        other => Err(EngineError::type_mismatch(format!(
            "BSON field '{field}' is the wrong type '{}', expected type 'string'",
            crate::value::type_alias(other)
        ))),
    }
}

/// The IDL's refusal of a value outside an enumeration.
fn bad_enum(value: &str, field: &str) -> EngineError {
    EngineError::bad_value(format!(
        "Enumeration value '{value}' for field '{field}' is not a valid value."
    ))
}

/// A collection's validation settings.
#[derive(Debug, Clone)]
pub struct Validator {
    /// `None` for an empty validator (`{}`), which admits everything.
    filter: Option<Filter>,
    pub level: Level,
    pub action: Action,
}

impl Validator {
    /// Read `validator`, `validationLevel` and `validationAction` from
    /// `create` or `collMod` options (`command` names the command in
    /// errors). Options not given are not filled in: as mongod's,
    /// `listCollections` shows only what was set.
    pub fn from_options(options: &Document, command: &str) -> Result<Option<Validator>> {
        let filter = match options.get("validator") {
            None => None,
            Some(Bson::Document(v)) => Some(parse_validator(v)?),
            Some(other) => {
                return Err(EngineError::type_mismatch(format!(
                    "BSON field '{command}.validator' is the wrong type '{}', expected type 'object'",
                    crate::value::type_alias(other)
                )));
            }
        };
        let level = match options.get("validationLevel") {
            Some(v) => Some(Level::parse(v, &format!("{command}.validationLevel"))?),
            None => None,
        };
        let action = match options.get("validationAction") {
            Some(v) => Some(Action::parse(v, &format!("{command}.validationAction"))?),
            None => None,
        };
        if filter.is_none() && level.is_none() && action.is_none() {
            return Ok(None);
        }
        Ok(Some(Validator {
            filter: filter.flatten(),
            level: level.unwrap_or(Level::Strict),
            action: action.unwrap_or(Action::Error),
        }))
    }

    /// Whether this validator checks anything.
    pub fn is_active(&self) -> bool {
        self.filter.is_some() && self.level != Level::Off
    }

    /// Whether a document meets the validator (the level aside).
    pub fn admits(&self, doc: &Document) -> Result<bool> {
        match &self.filter {
            Some(f) => f.matches(doc, &Vars::default()),
            None => Ok(true),
        }
    }

    /// Check a document about to be written to `ns`. `old` is, for an
    /// update, the document it replaces: under `moderate` a document that
    /// did not meet the validator may go on not meeting it. Bypassed
    /// writes ([`bypassing`]) and level `off` are not checked; under
    /// `warn` a failure is logged and the write goes on.
    pub fn check(&self, ns: &str, doc: &Document, old: Option<&Document>) -> Result<()> {
        let Some(filter) = &self.filter else {
            return Ok(());
        };
        if self.level == Level::Off || bypassed() {
            return Ok(());
        }
        if filter.matches(doc, &Vars::default())? {
            return Ok(());
        }
        if self.level == Level::Moderate
            && let Some(old) = old
            && !filter.matches(old, &Vars::default())?
        {
            return Ok(());
        }
        let info = err_info(filter, doc);
        match self.action {
            Action::Error => Err(EngineError::new(
                ErrorCode::DOCUMENT_VALIDATION_FAILURE,
                "Document failed validation",
            )
            .with_info(doc! {"errInfo": info})),
            Action::Warn => {
                log_warning(ns, doc, info);
                Ok(())
            }
        }
    }
}

/// Parse a validator as mongod does: an empty one admits everything, and
/// a refusal keeps its code with mongod's context before its reason.
fn parse_validator(v: &Document) -> Result<Option<Filter>> {
    if v.is_empty() {
        return Ok(None);
    }
    let parsed = match v.keys().find(|k| {
        matches!(
            k.as_str(),
            "$where" | "$text" | "$near" | "$nearSphere" | "$geoNear"
        )
    }) {
        Some(k) if k == "$where" || k == "$text" => Err(EngineError::bad_value(format!(
            "{k} is not allowed in this context"
        ))),
        Some(_) => Err(EngineError::bad_value(
            "$geoNear, $near, and $nearSphere are not allowed in this context",
        )),
        None => Filter::parse(v, None),
    };
    parsed.map(Some).map_err(|e| {
        EngineError::new(
            e.code,
            format!(
                "Parsing of collection validator failed :: caused by :: {}",
                e.message
            ),
        )
    })
}

/// mongod's `errInfo`: the failing document's `_id` and why it failed.
fn err_info(filter: &Filter, doc: &Document) -> Document {
    let id = doc.get("_id").cloned().unwrap_or(Bson::Null);
    match filter.failure_details(doc) {
        Ok(details) => doc! {"failingDocumentId": id, "details": details},
        // mongod reports a failure to explain as a note, never as the
        // write's error.
        Err(e) => doc! {
            "failingDocumentId": id,
            "note": "failed to generate document validation error",
            "details": {"code": e.code.code(), "codeName": e.code_name(), "errmsg": e.message},
        },
    }
}

thread_local! {
    static BYPASS: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` with document validation bypassed (when `bypass`), as a command
/// with `bypassDocumentValidation: true` runs its writes. The setting is
/// the calling thread's, and restored afterwards even if `f` panics.
pub fn bypassing<R>(bypass: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            BYPASS.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BYPASS.with(|b| b.replace(bypass)));
    f()
}

fn bypassed() -> bool {
    BYPASS.with(Cell::get)
}

/// The last lines of the log, as `getLog` returns them.
const LOG_LINES: usize = 1024;

static LOG: Mutex<VecDeque<String>> = Mutex::new(VecDeque::new());
static LOG_TOTAL: AtomicU64 = AtomicU64::new(0);

fn log_warning(ns: &str, doc: &Document, info: Document) {
    let line = doc! {
        "t": {"$date": bson::DateTime::now().try_to_rfc3339_string().unwrap_or_default()},
        "s": "W",
        "c": "STORAGE",
        "id": 20294,
        "ctx": "conn",
        "msg": "Document would fail validation",
        "attr": {"namespace": ns, "document": doc.clone(), "errInfo": info},
    };
    let text = Bson::Document(line).into_relaxed_extjson().to_string();
    let mut log = LOG.lock();
    if log.len() == LOG_LINES {
        log.pop_front();
    }
    log.push_back(text);
    LOG_TOTAL.fetch_add(1, Ordering::Relaxed);
}

/// The server log as `getLog: "global"` answers: how many lines were
/// written in all, and the last ones kept, oldest first.
pub fn global_log() -> (u64, Vec<String>) {
    let log = LOG.lock();
    (
        LOG_TOTAL.load(Ordering::Relaxed),
        log.iter().cloned().collect(),
    )
}
