//! Collations: how strings compare.
//!
//! mongod delegates collation to ICU. The engine supports the part of it that
//! schema-design lessons use: the `simple` binary comparison, and strength 1
//! (base letters only: case and accents ignored) and strength 2 (case ignored,
//! accents significant) for any locale. A string is compared through its
//! *collation key*, a transformed string whose binary order is the collated
//! order; indexes built with a collation store that key.

use std::borrow::Cow;

use bson::{Bson, Document};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::error::{EngineError, Result};

/// A parsed collation document (`{locale: "en", strength: 2}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collation {
    /// The ICU locale named by the user; `simple` means binary comparison.
    pub locale: String,
    /// ICU strength 1 to 5; only 1 and 2 change comparisons here, 3 and above
    /// compare like `simple`.
    pub strength: u8,
}

impl Collation {
    /// Parse a `collation` option. `{locale: "simple"}` yields `None`: the
    /// engine's default binary comparison.
    pub fn parse(spec: &Document) -> Result<Option<Collation>> {
        let locale = match spec.get("locale") {
            Some(Bson::String(s)) => s.clone(),
            Some(_) => {
                return Err(EngineError::type_mismatch(
                    "collation locale must be a string",
                ));
            }
            None => {
                return Err(EngineError::new(
                    super::error::ErrorCode::FAILED_TO_PARSE,
                    "Missing expected field \"locale\"",
                ));
            }
        };
        let strength = match spec.get("strength") {
            None => 3,
            Some(v) => match crate::value::as_i64(v) {
                Some(n @ 1..=5) => n as u8,
                _ => {
                    return Err(EngineError::bad_value(
                        "unable to parse collation :: caused by :: Field 'strength' must be an integer 1 through 5",
                    ));
                }
            },
        };
        for (key, _) in spec {
            match key.as_str() {
                "locale" | "strength" | "caseLevel" | "caseFirst" | "numericOrdering"
                | "alternate" | "maxVariable" | "normalization" | "backwards" | "version" => {}
                other => {
                    return Err(EngineError::failed_to_parse(format!(
                        "unknown field '{other}' in collation"
                    )));
                }
            }
        }
        if locale == "simple" {
            return Ok(None);
        }
        Ok(Some(Collation { locale, strength }))
    }

    /// Parse an optional collation option.
    pub fn parse_opt(spec: Option<&Document>) -> Result<Option<Collation>> {
        match spec {
            Some(doc) => Self::parse(doc),
            None => Ok(None),
        }
    }

    /// The key whose binary order is this collation's order for `s`.
    pub fn key<'a>(&self, s: &'a str) -> Cow<'a, str> {
        match self.strength {
            1 => Cow::Owned(
                s.nfd()
                    .filter(|c| !is_combining_mark(*c))
                    .flat_map(char::to_lowercase)
                    .collect(),
            ),
            2 => {
                if s.chars().any(char::is_uppercase) {
                    Cow::Owned(s.nfd().flat_map(char::to_lowercase).nfc().collect())
                } else {
                    Cow::Borrowed(s)
                }
            }
            _ => Cow::Borrowed(s),
        }
    }

    /// The collation as mongod echoes it in `listIndexes`.
    pub fn to_document(&self) -> Document {
        bson::doc! {
            "locale": self.locale.clone(),
            "caseLevel": false,
            "caseFirst": "off",
            "strength": self.strength as i32,
            "numericOrdering": false,
            "alternate": "non-ignorable",
            "maxVariable": "punct",
            "normalization": false,
            "backwards": false,
            "version": "57.1",
        }
    }
}

/// Compare two strings under an optional collation.
pub fn compare_strings(a: &str, b: &str, collation: Option<&Collation>) -> std::cmp::Ordering {
    match collation {
        Some(c) => c.key(a).cmp(&c.key(b)),
        None => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn strength_two_ignores_case_not_accents() {
        let c = Collation::parse(&doc! {"locale": "en", "strength": 2})
            .unwrap()
            .unwrap();
        assert_eq!(c.key("Café"), c.key("café"));
        assert_ne!(c.key("cafe"), c.key("café"));
    }

    #[test]
    fn strength_one_ignores_case_and_accents() {
        let c = Collation::parse(&doc! {"locale": "fr", "strength": 1})
            .unwrap()
            .unwrap();
        assert_eq!(c.key("CAFÉ"), c.key("cafe"));
    }

    #[test]
    fn simple_locale_is_binary() {
        assert!(
            Collation::parse(&doc! {"locale": "simple"})
                .unwrap()
                .is_none()
        );
        assert!(Collation::parse(&doc! {"strength": 2}).is_err());
    }
}
