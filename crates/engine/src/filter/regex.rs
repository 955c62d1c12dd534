//! `$regex` patterns: PCRE-style options translated for Rust's engines.
//!
//! mongod uses PCRE. Most patterns are also valid for the linear-time
//! `regex` crate; those that need backreferences or lookaround fall back to
//! `fancy-regex`, so what a learner copies from the manual still works.
//!
//! The backtracking engine runs within a step budget
//! ([`BACKTRACK_LIMIT`]); a pattern that exhausts it is an error naming the
//! pattern (mongod's 51156), never a silent non-match, and the running
//! operation's `maxTimeMS` is checked after every such match.

use bson::Bson;

use crate::error::{EngineError, ErrorCode, Result};

/// mongod's PCRE2 pattern limit (`kMaxPatternLength` in `util/pcre.cpp`):
/// longer patterns fail to compile (51091 in a query, 51111 in an
/// expression).
pub const MAX_REGEX_PATTERN_BYTES: usize = 32_764;

/// Backtracking steps one match may take (fancy-regex's counter; PCRE's
/// match limit plays this part in mongod).
pub const BACKTRACK_LIMIT: usize = 1_000_000;

#[derive(Debug, Clone)]
enum Compiled {
    Linear(regex::Regex),
    Backtracking(Box<fancy_regex::Regex>),
}

/// A compiled `$regex` with its original pattern and options.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    pub pattern: String,
    pub options: String,
    compiled: Compiled,
}

impl Pattern {
    /// Compile `pattern` with mongod's option letters (`i m x s u`).
    pub(crate) fn new(pattern: &str, options: &str) -> Result<Pattern> {
        if pattern.contains('\0') {
            return Err(EngineError::bad_value(
                "Regular expression cannot contain an embedded null byte",
            ));
        }
        if pattern.len() > MAX_REGEX_PATTERN_BYTES {
            return Err(EngineError::new(
                ErrorCode(51091),
                "Regular expression is invalid: pattern string is longer than the limit set by the application",
            ));
        }
        let mut flags = String::new();
        for c in options.chars() {
            match c {
                'i' | 'm' | 'x' | 's' => {
                    if !flags.contains(c) {
                        flags.push(c);
                    }
                }
                // UTF-8 mode is always on here.
                'u' => {}
                other => {
                    return Err(EngineError::new(
                        ErrorCode(51108),
                        format!("invalid flag in regex options: {other}"),
                    ));
                }
            }
        }
        let full = if flags.is_empty() {
            pattern.to_string()
        } else {
            format!("(?{flags}){pattern}")
        };
        let compiled = match regex::Regex::new(&full) {
            Ok(r) => Compiled::Linear(r),
            Err(first) => match fancy_regex::RegexBuilder::new(&full)
                .backtrack_limit(BACKTRACK_LIMIT)
                .build()
            {
                Ok(r) => Compiled::Backtracking(Box::new(r)),
                Err(_) => {
                    return Err(EngineError::new(
                        ErrorCode(51091),
                        format!("Regular expression is invalid: {first}"),
                    ));
                }
            },
        };
        Ok(Pattern {
            pattern: pattern.to_string(),
            options: options.to_string(),
            compiled,
        })
    }

    /// Whether the pattern occurs in `text`; an error when a backtracking
    /// pattern exhausts its step budget (or the operation its time).
    pub(crate) fn try_match(&self, text: &str) -> Result<bool> {
        match &self.compiled {
            Compiled::Linear(r) => Ok(r.is_match(text)),
            Compiled::Backtracking(r) => {
                let result = if text.len() <= WHOLE_TEXT_BYTES {
                    r.is_match(text)
                } else {
                    match_position_by_position(r, text)?
                };
                crate::limits::check_now()?;
                result.map_err(|e| {
                    EngineError::new(
                        ErrorCode(51156),
                        format!(
                            "Error occurred while executing the regular expression /{}/{}. Result code: {e}",
                            self.pattern, self.options
                        ),
                    )
                })
            }
        }
    }

    /// [`Pattern::try_match`] where no error can be returned: the error is
    /// raised for the filter's entry point to report, and the value counts
    /// as not matching meanwhile.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.try_match(text).unwrap_or_else(|e| {
            crate::limits::raise(e);
            false
        })
    }

    /// mongod's regex predicate on one value: strings and symbols are
    /// searched, a stored regex matches when pattern and flags are equal.
    pub(crate) fn matches_value(&self, v: &Bson) -> bool {
        match v {
            Bson::String(s) | Bson::Symbol(s) => self.is_match(s),
            Bson::RegularExpression(r) => {
                r.pattern == self.pattern && sorted(&r.options) == sorted(&self.options)
            }
            _ => false,
        }
    }
}

/// Texts up to this long are searched by one call of the backtracking
/// engine; longer ones one start position at a time
/// ([`match_position_by_position`]).
const WHOLE_TEXT_BYTES: usize = 1024;

/// An unanchored search as a run of anchored attempts, one per start
/// position, the running operation checked before each. One search of the
/// backtracking engine cannot be interrupted, and a lookaround that scans
/// the rest of the text at each position (`(?!a*$)x`) makes it quadratic:
/// 40,000 characters took 34 s in a debug build, `maxTimeMS` unheard.
/// Lookaround still sees the whole text, so the answer is the same; each
/// attempt has its own backtracking budget.
fn match_position_by_position(
    r: &fancy_regex::Regex,
    text: &str,
) -> Result<std::result::Result<bool, fancy_regex::Error>> {
    let starts = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()));
    for start in starts {
        // Each attempt may scan the rest of the text: check every time.
        crate::limits::check_now()?;
        let attempt = fancy_regex::RegexInput::new(text)
            .from_pos(start)
            .anchored(true);
        match r.is_match_input(attempt) {
            Ok(false) => {}
            other => return Ok(other),
        }
    }
    Ok(Ok(false))
}

fn sorted(s: &str) -> Vec<char> {
    let mut v: Vec<char> = s.chars().collect();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_translate() {
        assert!(Pattern::new("^ab", "i").unwrap().is_match("ABc"));
        assert!(Pattern::new("^b", "m").unwrap().is_match("a\nb"));
        assert!(Pattern::new("a.b", "s").unwrap().is_match("a\nb"));
        assert!(Pattern::new("a b # comment", "x").unwrap().is_match("ab"));
        assert_eq!(Pattern::new("a", "q").unwrap_err().code, ErrorCode(51108));
        assert_eq!(Pattern::new("a\0b", "").unwrap_err().code, ErrorCode(2));
        let long = "a".repeat(MAX_REGEX_PATTERN_BYTES + 1);
        assert_eq!(Pattern::new(&long, "").unwrap_err().code, ErrorCode(51091));
        assert!(Pattern::new(&long[1..], "").is_ok());
    }

    #[test]
    fn backreferences_fall_back() {
        let p = Pattern::new(r"(a)\1", "").unwrap();
        assert!(p.is_match("xaa"));
        assert!(!p.is_match("xab"));
        assert!(Pattern::new("(", "").is_err());
    }

    /// Long texts are searched one start position at a time, with the
    /// same answers as one search of the whole text.
    #[test]
    fn position_by_position_agrees_with_one_search() {
        let texts = [
            format!("{}!", "a".repeat(3000)),
            format!("x{}b", "ab".repeat(1500)),
            format!("{}é\nfoo bar", "z".repeat(2000)),
            "q".repeat(2048),
        ];
        let patterns = [
            r"(?!a*$)x",
            r"(?<=a)a*b",
            r"(a)\1!",
            r"^(?=z)z+é",
            r"(?m)^foo(?= )",
            r"(?<=o )bar$",
            r"(?<!a)b",
            r"\bfoo\b(?=\s)",
            r"ab(?=ab)b",
            r"(b)a\1a",
            r"^q+$(?<=q)",
            r"x(?!y)",
        ];
        for p in patterns {
            let pattern = Pattern::new(p, "").unwrap();
            let Compiled::Backtracking(r) = &pattern.compiled else {
                panic!("{p} needs the backtracking engine");
            };
            for t in &texts {
                assert_eq!(
                    match_position_by_position(r, t).unwrap().unwrap(),
                    r.is_match(t).unwrap(),
                    "{p}"
                );
            }
        }
    }

    /// A quadratic lookaround over a long text asks the running operation
    /// whether to go on all along the search (not once at its end), and
    /// stops at the deadline.
    #[test]
    fn a_long_backtracking_search_obeys_the_deadline() {
        let p = Pattern::new(r"(?!a*$)x", "").unwrap();
        let text = format!("{}!", "a".repeat(4_000));
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = asked.clone();
        let probe = crate::limits::Probe(std::sync::Arc::new(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            false
        }));
        let watched = crate::limits::Operation {
            client_gone: Some(probe),
            ..Default::default()
        };
        assert!(!crate::limits::run_as(watched, || p
            .try_match(&text)
            .unwrap()));
        assert!(asked.load(std::sync::atomic::Ordering::Relaxed) >= 4_000 / 128);
        let text = format!("{}!", "a".repeat(40_000));
        let past = crate::limits::Operation {
            deadline: Some(std::time::Instant::now()),
            ..Default::default()
        };
        let err = crate::limits::run_as(past, || p.try_match(&text).unwrap_err());
        assert_eq!(err.code, ErrorCode::MAX_TIME_MS_EXPIRED);
    }

    #[test]
    fn an_exhausted_budget_is_an_error_naming_the_pattern() {
        // Catastrophic backtracking: needs the backtracking engine
        // (a backreference) and fails only after trying every split.
        let p = Pattern::new(r"^(a|a)*\1b$", "").unwrap();
        let text = "a".repeat(64);
        let err = p.try_match(&text).unwrap_err();
        assert_eq!(err.code, ErrorCode(51156));
        assert!(err.message.contains(r"/^(a|a)*\1b$/"), "{}", err.message);
        // Through a filter, the error reaches the caller.
        assert!(!p.is_match(&text));
        assert_eq!(
            crate::limits::take_pending().unwrap_err().code,
            ErrorCode(51156)
        );
        assert!(crate::limits::take_pending().is_ok());
    }
}
