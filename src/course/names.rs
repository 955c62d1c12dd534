//! The names of the databases schemalab writes, and the gate on them.
//! Every database is `schemalab_…`; on a server a class shares, each
//! learner's are `schemalab_<learner>_…` (`--db-prefix` /
//! `SCHEMALAB_DB_PREFIX`), so fifty learners never overwrite each other,
//! and a learner's commands may write only their own. One value,
//! [`DbNames`], names a lesson variant's database and an exercise's two,
//! and admits a write only to the exact name it gave.

use thiserror::Error;

/// Prefix of every database the course creates.
pub const DB_PREFIX: &str = "schemalab_";

/// The longest learner name: a database name may be 63 bytes, and the
/// learner's share of it leaves room for `ex_<exercise>_ref` and
/// `<lesson>_<variant>`.
pub const MAX_LEARNER: usize = 16;

/// A learner name schemalab cannot use in a database name.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NamesError {
    #[error(
        "--db-prefix {0:?}: a learner's name is 1 to 16 lowercase letters, digits or '-' (it becomes part of database names, which mongod compares without case)"
    )]
    BadLearner(String),
    #[error(
        "refusing to write to database '{0}': it is not one of the databases this run may write"
    )]
    Forbidden(String),
}

impl NamesError {
    /// The error's words, for any language.
    pub fn message(&self) -> crate::locale::Message {
        use crate::locale::Message;
        match self {
            NamesError::BadLearner(n) => Message::new(
                "--db-prefix {name}: a learner's name is 1 to 16 lowercase letters, digits or '-' (it becomes part of database names, which mongod compares without case)",
            )
            .arg("name", format!("{n:?}")),
            NamesError::Forbidden(db) => Message::new(
                "refusing to write to database '{db}': it is not one of the databases this run may write",
            )
            .arg("db", db),
        }
    }
}

impl crate::locale::Localized for NamesError {
    fn render_in(&self, lang: crate::locale::Lang) -> String {
        self.message().render_in(lang)
    }
}

/// How the databases of a run are named: `schemalab_`, then the learner's
/// name and `_` when one is given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbNames {
    learner: Option<String>,
    /// A check's own suffix on a shared server (`…_ex_<id>_<run>`), so two
    /// checks of one exercise at once never share a database.
    run: Option<String>,
}

impl DbNames {
    /// The names of learner `name`'s databases; `None` or an empty name:
    /// the plain `schemalab_` ones.
    pub fn for_learner(name: Option<&str>) -> Result<DbNames, NamesError> {
        match name.map(str::trim).filter(|n| !n.is_empty()) {
            None => Ok(DbNames::default()),
            Some(n)
                if n.len() <= MAX_LEARNER
                    && n.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') =>
            {
                Ok(DbNames {
                    learner: Some(n.to_string()),
                    run: None,
                })
            }
            Some(n) => Err(NamesError::BadLearner(n.to_string())),
        }
    }

    /// The same names, an exercise's databases suffixed with a run id of
    /// its own (`schemalab_ex_<id>_<run>`): for one check on a server
    /// other checks may use at the same time.
    #[must_use]
    pub fn for_one_check(mut self) -> DbNames {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mixed = std::process::id()
            .wrapping_mul(2_654_435_761)
            .wrapping_add(nanos)
            .wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed).wrapping_mul(40_503));
        self.run = Some(format!("r{:06x}", mixed & 0xff_ffff));
        self
    }

    /// Whether an exercise's databases are a check's own (dropped after it).
    pub fn is_one_check(&self) -> bool {
        self.run.is_some()
    }

    /// The learner, when one is given.
    pub fn learner(&self) -> Option<&str> {
        self.learner.as_deref()
    }

    /// What every database of this run starts with (`schemalab_` or
    /// `schemalab_<learner>_`): the write gate's prefix for the shell.
    pub fn prefix(&self) -> String {
        match &self.learner {
            Some(l) => format!("{DB_PREFIX}{l}_"),
            None => DB_PREFIX.to_string(),
        }
    }

    /// The database experiment variant `variant` of `lesson` runs in.
    pub fn lesson(&self, lesson: &str, variant: &str) -> String {
        format!("{}{lesson}_{variant}", self.prefix())
    }

    /// The learner's database for exercise `id`.
    pub fn exercise(&self, id: &str) -> String {
        match &self.run {
            Some(run) => format!("{}ex_{id}_{run}", self.prefix()),
            None => format!("{}ex_{id}", self.prefix()),
        }
    }

    /// The hidden reference solution's database for exercise `id`.
    pub fn exercise_ref(&self, id: &str) -> String {
        format!("{}_ref", self.exercise(id))
    }

    /// Admit a write to `name` only when it is the database of
    /// `lesson`/`variant`. Names are compared exactly, so
    /// `schemalab_x_y` cannot reach `schemalab_x_yz`, another learner's
    /// database or any user database.
    pub fn guard_lesson(&self, name: &str, lesson: &str, variant: &str) -> Result<(), NamesError> {
        if name == self.lesson(lesson, variant) && is_plain_name(lesson) && is_plain_name(variant) {
            Ok(())
        } else {
            Err(NamesError::Forbidden(name.to_string()))
        }
    }

    /// Admit a write to `name` only when it is one of exercise `id`'s two
    /// databases.
    pub fn guard_exercise(&self, name: &str, id: &str) -> Result<(), NamesError> {
        if is_plain_name(id) && (name == self.exercise(id) || name == self.exercise_ref(id)) {
            Ok(())
        } else {
            Err(NamesError::Forbidden(name.to_string()))
        }
    }
}

/// Lesson, variant and exercise ids: letters, digits, `_` and `-` (they
/// become part of a database name, which may not hold `.`, `/`, spaces,
/// `$` …).
pub fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names() {
        let n = DbNames::default();
        assert_eq!(n.lesson("bucket", "naive"), "schemalab_bucket_naive");
        assert_eq!(n.exercise("feed"), "schemalab_ex_feed");
        assert_eq!(n.exercise_ref("feed"), "schemalab_ex_feed_ref");
        assert_eq!(n.prefix(), "schemalab_");
        assert_eq!(DbNames::for_learner(Some("  ")), Ok(DbNames::default()));
    }

    #[test]
    fn a_learner_s_names_and_gate() {
        let alice = DbNames::for_learner(Some("alice-2")).unwrap();
        assert_eq!(
            alice.lesson("bucket", "naive"),
            "schemalab_alice-2_bucket_naive"
        );
        assert_eq!(alice.exercise_ref("feed"), "schemalab_alice-2_ex_feed_ref");
        assert!(
            alice
                .guard_lesson("schemalab_alice-2_bucket_naive", "bucket", "naive")
                .is_ok()
        );
        // Another learner's, the plain one, and near misses are refused.
        let bob = DbNames::for_learner(Some("bob")).unwrap();
        for other in [
            bob.lesson("bucket", "naive"),
            DbNames::default().lesson("bucket", "naive"),
            "schemalab_alice-2_bucket_naivex".to_string(),
        ] {
            assert!(
                alice.guard_lesson(&other, "bucket", "naive").is_err(),
                "{other}"
            );
        }
        assert!(
            alice
                .guard_exercise("schemalab_alice-2_ex_feed", "feed")
                .is_ok()
        );
        assert!(alice.guard_exercise("schemalab_ex_feed", "feed").is_err());
    }

    #[test]
    fn one_check_s_own_names() {
        let a = DbNames::default().for_one_check();
        let b = DbNames::default().for_one_check();
        assert_ne!(a.exercise("feed"), b.exercise("feed"));
        assert!(a.exercise("feed").starts_with("schemalab_ex_feed_r"));
        assert_eq!(
            a.exercise_ref("feed"),
            format!("{}_ref", a.exercise("feed"))
        );
        assert!(a.guard_exercise(&a.exercise("feed"), "feed").is_ok());
        assert!(a.guard_exercise(&b.exercise("feed"), "feed").is_err());
        // Lessons are not suffixed.
        assert_eq!(a.lesson("bucket", "naive"), "schemalab_bucket_naive");
    }

    #[test]
    fn learner_names_that_cannot_be_part_of_a_database_name() {
        for bad in [
            "Alice",
            "a.b",
            "a_b",
            "a b",
            "a/b",
            "a$",
            "seventeen-chars-x",
            "é",
        ] {
            assert!(DbNames::for_learner(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn plain_name_rules() {
        let n = DbNames::default();
        assert!(
            n.guard_lesson("schemalab_bucket_naive", "bucket", "naive")
                .is_ok()
        );
        assert!(
            n.guard_lesson("schemalab_bucket_naivex", "bucket", "naive")
                .is_err()
        );
        assert!(n.guard_lesson("admin", "bucket", "naive").is_err());
        assert!(n.guard_lesson("schemalab_a.b_c", "a.b", "c").is_err());
        assert!(n.guard_lesson("schemalab__c", "", "c").is_err());
        assert!(n.guard_exercise("schemalab_ex_feed_ref", "feed").is_ok());
        assert!(n.guard_exercise("schemalab_ex_feedx", "feed").is_err());
        assert!(n.guard_exercise("schemalab_ex_a.b", "a.b").is_err());
    }
}
